import { forgeEventNameAliases, freeFormActionEvents } from './generated/catalogue.js';
import { EventNames } from './generated/event-names.js';

export { EventNames };

/**
 * Every known plain event name, in its neutral spelling (`forge_app_authorization`, not the forge's own name).
 */
export type WebhookEventName = EventNames.StringNames;

/**
 * Every name a handler can be registered for: a plain event name, a known `event.action` pair, or
 * `repository_dispatch.<anything>` (its actions are the sender's free-form `event_type`).
 */
export type EmitterWebhookEventName = EventNames.All | `repository_dispatch.${string}`;

/**
 * Every name of {@link EventNames.All} as a set, for the runtime "unknown event only warns" check.
 * A `repository_dispatch.<anything>` name is known too: use {@link isKnownEventName} to include it.
 */
export const knownEventNames: ReadonlySet<string> = /* @__PURE__ */ allEventNames();

const freeFormPrefixes = /* @__PURE__ */ freeFormActionPrefixes();

// The two sets above are built by argument-free calls marked pure, so that a bundle which only needs
// `neutralEventName` (the Lambda ingest) drops them and the whole generated catalogue with them.
function allEventNames(): ReadonlySet<string> {
  return new Set<string>(EventNames.All);
}

function freeFormActionPrefixes(): readonly string[] {
  return freeFormActionEvents.map((event) => `${event}.`);
}

/**
 * Whether `name` is a known event name: a plain name, a known `event.action` pair, or an action of an event
 * whose actions are free-form (`repository_dispatch.<anything>`).
 */
export function isKnownEventName(name: string): name is EmitterWebhookEventName {
  if (knownEventNames.has(name)) return true;
  return freeFormPrefixes.some((prefix) => name.length > prefix.length && name.startsWith(prefix));
}

/**
 * The neutral name of an event (or `event.action`) as a real forge spells it: `github_app_authorization`
 * becomes `forge_app_authorization`; every other name is returned unchanged.
 */
export function neutralEventName(name: string): string {
  const dot = name.indexOf('.');
  const event = dot === -1 ? name : name.slice(0, dot);
  if (!Object.hasOwn(forgeEventNameAliases, event)) return name;
  return (
    forgeEventNameAliases[event as keyof typeof forgeEventNameAliases] + (dot === -1 ? '' : name.slice(dot))
  );
}
