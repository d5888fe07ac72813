import type { EmitterWebhookEventName, WebhookEvent } from './event-types.js';
import type { Forge } from './forges.js';

/**
 * One secret, or several during a rotation: `sign` uses the first, `verify` accepts a signature made with any.
 */
export type Secret = string | readonly string[];

/**
 * What can be signed or verified: the exact raw body (string or bytes, preferred) or a parsed object, which
 * is re-serialized the way the forge serializes (see `serializePayload` for where that can differ).
 */
export type SignaturePayload = string | Uint8Array | object;

/** HMAC algorithm of a signature: `sha256` (`X-Hub-Signature-256`) or `sha1` (`X-Hub-Signature`). */
export type SignatureAlgorithm = 'sha256' | 'sha1';

/** Options of `sign`. */
export interface SignOptions {
  /** HMAC algorithm. Default `'sha256'`. */
  algorithm?: SignatureAlgorithm;
  /**
   * Sign the way this forge does: `sha256=<hex>` (generic, GitHub, Bitbucket), the bare hex (Gitea, Forgejo),
   * or the token itself, which is the first secret (GitLab), or `v1,<base64>` (Standard Webhooks: `standard`,
   * `svix`, which need `id`). Default `'generic'`.
   */
  forge?: Forge;
  /** Standard Webhooks: the `webhook-id` that is signed with the body. */
  id?: string;
  /** Standard Webhooks: the `webhook-timestamp` that is signed, in Unix seconds. Default now. */
  timestamp?: number;
}

/** The first argument of `sign`'s object form, `sign({ secret, algorithm }, payload)`. */
export interface SignKeyOptions extends SignOptions {
  /** Secret(s); the first one signs. Required. */
  secret: Secret;
}

/** Names of the delivery headers, any case. */
export interface DeliveryHeaderNames {
  /** Event name header. Default `'x-forge-event'`. */
  event?: string;
  /** Delivery id header. Default `'x-forge-delivery'`. */
  delivery?: string;
  /** HMAC-SHA256 signature header. Default `'x-hub-signature-256'`. */
  signature256?: string;
  /** HMAC-SHA1 signature header. Default `'x-hub-signature'`. */
  signature?: string;
  /** Shared token header (the `gitlab` preset's `x-gitlab-token`); only with a token preset. */
  token?: string;
}

/** One HTTP request as `readDelivery` sees it: no I/O, just the method, the headers and the raw body. */
export interface DeliveryRequest {
  /** HTTP method. When given and not `POST`, the result is a 404. */
  method?: string;
  /** Request headers; names are read case-insensitively; for a repeated header the first value counts. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The exact raw body (already base64-decoded). A string is taken as UTF-8. */
  body: Uint8Array | string;
}

/** Options of `readDelivery`. */
export interface DeliveryOptions {
  /** Secret(s) the forge signs with. Required. */
  secret: Secret;
  /** The forge's preset: header names, signature scheme, event mapping. Default `'generic'`. */
  forge?: Forge;
  /**
   * Header names; each overrides the preset's. Defaults (generic): `x-forge-event`, `x-forge-delivery`,
   * `x-hub-signature-256`, `x-hub-signature`.
   */
  headers?: DeliveryHeaderNames;
  /** Accept a sha1 signature when it is the only one. Default `true`. */
  allowSha1?: boolean;
  /** Largest body accepted, in bytes. Default 25 MiB (the forge's cap). */
  maxBodyBytes?: number;
  /** Answer 400 when the delivery id header is missing. Default `true`. */
  requireDeliveryId?: boolean;
  /**
   * Standard Webhooks (`standard`, `svix`, GitLab with a signing token): seconds the `webhook-timestamp` may be
   * off from now either way (401 `stale_timestamp` / `future_timestamp` beyond). Default 300.
   */
  toleranceSeconds?: number;
  /**
   * GitLab: `'signature'` accepts only deliveries signed with the signing token (Standard Webhooks headers),
   * `'token'` only the shared `X-Gitlab-Token`. Default: the signature when its headers are present, else the
   * token, which makes the source only as strong as the token.
   */
  verifyWith?: 'signature' | 'token';
}

/** HTTP status of a refused delivery. */
export type DeliveryFailureStatus = 400 | 401 | 404 | 413 | 415;

/**
 * Outcome of `readDelivery`: a verified, parsed delivery, or the status, stable code and safe message to
 * answer with.
 */
export type DeliveryResult =
  | {
      ok: true;
      /** Delivery id (`''` when absent and not required). */
      id: string;
      /**
       * The hook that sent it, where the forge names one (GitHub's `X-GitHub-Hook-ID`, Bitbucket's `X-Hook-UUID`):
       * with the id, what tells two hooks' deliveries of one event apart.
       */
      hook?: string | undefined;
      /** Catalogue event name where the forge's event has one (`pull_request`), else the forge's own name. */
      name: string;
      /** Catalogue action (`opened`), the forge's own where none corresponds, or `undefined`. */
      action: string | undefined;
      /** The preset the delivery was read with. */
      forge: Forge;
      /** The event header's value as the forge sent it (`Merge Request Hook`, `pullrequest:created`). */
      nativeName: string;
      /** The forge's own action (`open`), or `undefined`. */
      nativeAction: string | undefined;
      payload: unknown;
      rawBody: Buffer;
      /**
       * Which secret of the list verified the delivery, by position (0 = the first; always 0 for one secret).
       * Never the secret itself: the delivery log keeps it so that a rotation can tell when the forge signs
       * with the new secret.
       */
      secretIndex: number;
    }
  | { ok: false; status: DeliveryFailureStatus; code: string; message: string };

/** Where warnings and errors of the toolset go. Default `console`. */
export interface Logger {
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

/** An event as handed to `receive`: the name may be any string (unknown names only warn at registration). */
export interface ReceivedEvent {
  /** Delivery id. Default `''`. */
  id?: string;
  /** Event name, from the event header. */
  name: string;
  /**
   * The action `name.action` handlers are chosen by. When the key is present (even `undefined`) it wins over
   * `payload.action`; a forge preset sets it from the forge's own action (GitLab's `object_attributes.action`).
   */
  action?: string | undefined;
  /** The forge preset the delivery was read with, when it came through one. */
  forge?: Forge;
  /** The forge's own event name, when it came through a preset. */
  nativeName?: string;
  /** The forge's own action, when it came through a preset. */
  nativeAction?: string | undefined;
  /** The parsed payload (a JSON object). */
  payload: unknown;
}

/**
 * An event plus its signature, as handed to `verifyAndReceive`. The payload is best the raw body (string or
 * bytes): that is exactly what the forge signed.
 */
export interface SignedEvent {
  /** Delivery id. Default `''`. */
  id?: string;
  /** Event name, from the event header. */
  name: string;
  /** The raw body (preferred) or the parsed payload. */
  payload: SignaturePayload;
  /** `sha256=<hex>` (or `sha1=<hex>`), from the signature header. */
  signature: string;
}

/** Event names a handler can be registered for: every known event and `event.action`, plus `*`. */
export type HandlerEventName = EmitterWebhookEventName | '*';

/**
 * What a handler receives: the event (its payload typed by the name) or, when a `transform` is configured,
 * exactly what the transform returned.
 */
export type HandlerEvent<
  Name extends EmitterWebhookEventName,
  TTransformed = unknown,
> = unknown extends TTransformed ? WebhookEvent<Name> : TTransformed;

/** A handler of one event name: gets the event (or the transform's result), may be async, may throw. */
export type HandlerFunction<Name extends EmitterWebhookEventName, TTransformed = unknown> = (
  event: HandlerEvent<Name, TTransformed>,
) => unknown;

/** A handler of `*` (or of a mix of names): gets every event (or the transform's result). */
export type WildcardHandlerFunction<TTransformed = unknown> = (
  event: HandlerEvent<EmitterWebhookEventName, TTransformed>,
) => unknown;

/**
 * A handler of `error`: gets the failed `receive()`'s `WebhookReceiveError` (or the `verifyAndReceive`
 * `WebhookVerificationError`), with `.event` set. Async error handlers do not delay `receive()`.
 */
export type ErrorHandlerFunction = (error: WebhookEventError) => unknown;

/** An error emitted to `error` handlers. */
export interface WebhookEventError extends Error {
  /** Stable code (`handler_failed`, `invalid_signature`, ...). */
  readonly code: string;
  /** The event the error belongs to. */
  readonly event?: ReceivedEvent | undefined;
  /** Every handler error (on a failed `receive()`). */
  readonly errors?: unknown[];
}

/** Turns an event into what handlers receive; may be async; runs once per handler. */
export type Transform<TTransformed = unknown> = (
  event: WebhookEvent,
) => TTransformed | PromiseLike<TTransformed>;

/** Options of `createEventHandler`: no secret, no HTTP. */
export interface EventHandlerOptions<TTransformed = unknown> {
  /** Transforms each event before a handler gets it; may be async; runs once per handler. Default: none. */
  transform?: Transform<TTransformed>;
  /** Where warnings (unknown event names) and failing `error` handlers are logged. Default `console`. */
  log?: Logger;
  /**
   * Whose event names the handlers are registered under (a preset's `eventNames`): `catalogue` warns about a
   * name the catalogue lacks (a likely typo); `sender`, a Standard Webhooks sender's own names, warns about none.
   * Default `catalogue`; `new Webhooks()` takes its forge's.
   */
  eventNames?: 'catalogue' | 'sender';
}

/** Options of `new Webhooks()`. */
export interface WebhooksOptions<TTransformed = unknown>
  extends DeliveryOptions,
    Omit<EventHandlerOptions<TTransformed>, 'eventNames'> {
  /** Path the middleware answers on. Default `'/'`. */
  path?: string;
  /** Milliseconds the middleware waits for handlers before answering 202 (they go on). Default 9000. */
  timeout?: number;
}

/** Options of `createNodeMiddleware`. */
export interface MiddlewareOptions {
  /** Path the middleware answers on. Default: the `Webhooks` instance's `path`. */
  path?: string;
  /** Milliseconds to wait for handlers before answering 202. Default: the instance's `timeout`. */
  timeout?: number;
  /** Largest body accepted, in bytes. Default: the instance's `maxBodyBytes`. */
  maxBodyBytes?: number;
}
