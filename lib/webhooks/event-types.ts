import type { EmitterWebhookEventName, WebhookEventName } from './event-names.js';
import type { ActionPayloadMap, EventPayloadMap } from './generated/payload-maps.js';
import type * as EventPayloads from './generated/payloads.js';

// Re-exported so that every catalogue type can be imported from this one module.
export type { ActionPayloadMap, EmitterWebhookEventName, EventPayloadMap, EventPayloads, WebhookEventName };

/** The plain event name of an emitter name: `issues.opened` -> `issues`, `push` -> `push`. */
export type EventNameOf<Name extends EmitterWebhookEventName> = Name extends `${infer Event}.${string}`
  ? Event
  : Name;

/**
 * The payload type of an emitter name: a plain name gives the union of its actions' payloads, an
 * `event.action` name the payload narrowed to that action, and `repository_dispatch.<type>` the dispatch
 * payload with that `action`.
 */
export type PayloadFor<Name extends EmitterWebhookEventName> = Name extends keyof ActionPayloadMap
  ? ActionPayloadMap[Name]
  : Name extends keyof EventPayloadMap
    ? EventPayloadMap[Name]
    : Name extends `repository_dispatch.${infer Action}`
      ? EventPayloads.WebhookPayloadRepositoryDispatch & { action: Action }
      : never;

declare const inferPayload: unique symbol;

/**
 * The default of {@link WebhookEvent}'s `Payload` parameter: "infer the payload from the name". It lets a
 * union of names give a union of events, each with its own payload.
 */
export type InferPayload = typeof inferPayload;

/**
 * The event object handlers receive: the delivery `id`, the event `name` (the plain name from the event
 * header, also for an `event.action` handler) and the `payload`. The payload is inferred from `Name`
 * (narrowed to the action for an `event.action` name); pass `Payload` to override it.
 *
 * A union of a few names gives a union of events, so checking `name` narrows the payload. With no `Name` (any
 * event, as a `*` handler gets) it is one object type whose payload is the union of every payload: a union
 * of hundreds of event types would explode as soon as it is spread or intersected (`{ ...event, extra }`,
 * `WebhookEvent & Transformed`).
 *
 * @example
 * const handler = (event: WebhookEvent<'issues.opened'>) => event.payload.repository.full_name;
 * type Custom = WebhookEvent<'push', { ref: string }>; // payload: { ref: string }
 */
export type WebhookEvent<
  Name extends EmitterWebhookEventName = EmitterWebhookEventName,
  Payload = InferPayload,
> = [EmitterWebhookEventName] extends [Name]
  ? {
      /** Unique id of the delivery (the delivery header). */
      id: string;
      /** The plain event name (the event header). */
      name: EventNameOf<Name>;
      /** The delivery payload. */
      payload: [Payload] extends [InferPayload] ? PayloadFor<Name> : Payload;
    }
  : Name extends EmitterWebhookEventName
    ? {
        /** Unique id of the delivery (the delivery header). */
        id: string;
        /** The plain event name (the event header): `issues` for an `issues.opened` handler. */
        name: EventNameOf<Name>;
        /** The delivery payload. */
        payload: [Payload] extends [InferPayload] ? PayloadFor<Name> : Payload;
      }
    : never;
