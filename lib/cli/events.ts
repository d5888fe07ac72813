/**
 * Event names on the command line (`issues`, `issues.opened`): checked against the catalogue with a
 * suggestion of the closest known name, and the sample payloads of @octokit/webhooks-examples.
 */
import { createRequire } from 'node:module';
// The alias table itself (not re-exported by lib/webhooks): the CLI writes the forge's spelling back.
import {
  forgeEventNameAliases,
  isKnownEventName,
  knownEventNames,
  neutralEventName,
} from '../webhooks/index.js';
import { CliError } from './errors.js';

/** An event name split into the catalogue's event and action. */
export interface EventName {
  /** The name as given, neutral spelling (`forge_app_authorization.revoked`). */
  readonly full: string;
  /** The event (`issues`). */
  readonly event: string;
  /** The action (`opened`), or `undefined`. */
  readonly action: string | undefined;
  /** Whether the catalogue lists actions for the event. */
  readonly hasActions: boolean;
}

/**
 * Parses and checks `event[.action]` against the catalogue.
 *
 * @throws CliError naming the closest known name when it is unknown.
 */
export function parseEventName(name: string): EventName {
  const full = neutralEventName(name.trim());
  if (full.length === 0) throw new CliError('an event name is required, for example "issues.opened"');
  if (!isKnownEventName(full)) {
    const closest = closestName(full, knownEventNames);
    throw new CliError(
      `unknown event "${printable(name)}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}`,
    );
  }
  const dot = full.indexOf('.');
  const event = dot === -1 ? full : full.slice(0, dot);
  const action = dot === -1 ? undefined : full.slice(dot + 1);
  return { full, event, action, hasActions: hasActions(event) };
}

/** Whether the catalogue lists any `event.<action>` for `event`. */
export function hasActions(event: string): boolean {
  const prefix = `${event}.`;
  for (const name of knownEventNames) if (name.startsWith(prefix)) return true;
  return false;
}

/**
 * The known name closest to `name` by edit distance, when it is close enough to be a likely typo (at most a
 * third of the name's length, and at least 2 edits allowed).
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance || (distance === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** A sample payload with the name the forge sends it under. */
export interface Sample {
  /** The event header's value as the forge spells it (`github_app_authorization`). */
  readonly nativeName: string;
  readonly payload: Record<string, unknown>;
}

interface ExampleDefinition {
  name: string;
  examples: Record<string, unknown>[];
}

/**
 * The first sample payload of @octokit/webhooks-examples for the event (and action, when given).
 *
 * @throws CliError when there is none.
 */
export function findSample(name: EventName): Sample {
  const require = createRequire(import.meta.url);
  const definitions = require('@octokit/webhooks-examples') as ExampleDefinition[];
  for (const definition of definitions) {
    if (neutralEventName(definition.name) !== name.event) continue;
    const payload = definition.examples.find(
      (example) => name.action === undefined || example.action === name.action,
    );
    if (payload !== undefined) return { nativeName: definition.name, payload };
  }
  throw new CliError(`no sample payload for "${name.full}": pass one with "--file"`);
}

/** The event header's value the forge would send for a catalogue event (`github_app_authorization`). */
export function forgeSpelling(event: string): string {
  for (const [forgeName, neutral] of Object.entries(forgeEventNameAliases)) {
    if (neutral === event) return forgeName;
  }
  return event;
}

function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}
