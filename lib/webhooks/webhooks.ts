import { kWebhooksConfig, type WebhooksConfig } from './config.js';
import { DEFAULT_PATH, DEFAULT_TIMEOUT_MS, ErrorCodes } from './constants.js';
import { resolveDeliveryOptions } from './delivery-options.js';
import { WebhookPayloadError, WebhookVerificationError } from './errors.js';
import { EventHandler } from './event-handler.js';
import type { EmitterWebhookEventName } from './event-types.js';
import { resolvePreset, routeForgeEvent } from './forges.js';
import { hmacInput } from './hmac.js';
import { createNodeMiddleware, type NodeMiddleware } from './middleware.js';
import { sign } from './sign.js';
import type {
  ErrorHandlerFunction,
  EventHandlerOptions,
  HandlerEventName,
  HandlerFunction,
  ReceivedEvent,
  SignaturePayload,
  SignedEvent,
  SignOptions,
  WebhooksOptions,
  WildcardHandlerFunction,
} from './types.js';
import { matchesScheme, parseSignature } from './verify.js';

/**
 * The webhook toolset behind one secret (or several during a rotation: the first signs, each verifies).
 *
 * Defaults (one place): `forge` `'generic'`, `path` `'/'`, header names `x-forge-event` / `x-forge-delivery`
 * / `x-hub-signature-256` / `x-hub-signature` (a `forge` preset sets its own), `allowSha1` `true`, `maxBodyBytes` 25 MiB, `requireDeliveryId`
 * `true`, `timeout` 9000 ms, `log` `console`.
 *
 * @example
 * ```ts
 * const webhooks = new Webhooks({ secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' });
 * webhooks.on('issues.opened', ({ id, payload }) => console.log(id, payload.issue.number));
 * http.createServer(webhooks.middleware).listen(3000, '127.0.0.1');
 * ```
 */
export class Webhooks<TTransformed = unknown> {
  /**
   * The request listener for `http.createServer()` and Express/Connect-style frameworks (bound: pass it as
   * is). See `createNodeMiddleware` for the responses.
   */
  readonly middleware: NodeMiddleware;
  readonly #handler: EventHandler<TTransformed>;
  readonly #config: WebhooksConfig;

  /** @throws TypeError naming the field when `secret` is missing or an option is unknown or invalid. */
  constructor(options: WebhooksOptions<TTransformed>) {
    if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
    // The rest are readDelivery's options, handed on as they are: it refuses an unknown one.
    const { path = DEFAULT_PATH, timeout = DEFAULT_TIMEOUT_MS, transform, log, ...deliveryOptions } = options;
    if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError('"path" must start with "/"');
    if (!Number.isSafeInteger(timeout) || timeout <= 0) {
      throw new TypeError('"timeout" must be a positive integer');
    }
    const delivery = resolveDeliveryOptions(deliveryOptions);

    // A Standard Webhooks sender's event names are its own: the catalogue does not list them.
    const handlerOptions: EventHandlerOptions<TTransformed> = {
      eventNames: resolvePreset(delivery.forge).eventNames,
    };
    if (transform !== undefined) handlerOptions.transform = transform;
    if (log !== undefined) handlerOptions.log = log;
    this.#handler = new EventHandler<TTransformed>(handlerOptions);
    const handler = this.#handler;
    this.#config = {
      delivery,
      path,
      timeout,
      log: log ?? console,
      receive: (event) => handler.receive(event),
      emitError: (error) => handler.emitError(error),
    };
    this.middleware = createNodeMiddleware(this);
  }

  /** @internal Shared with `createNodeMiddleware`; not enumerable, never serialized. */
  get [kWebhooksConfig](): WebhooksConfig {
    return this.#config;
  }

  /**
   * Signs a payload with the first secret: `sha256=<hex>` (or `sha1=<hex>` with `{ algorithm: 'sha1' }`), or
   * the instance's forge's own signature value (bare hex for Gitea and Forgejo, the token for GitLab).
   * @throws TypeError when `payload` is missing or empty.
   */
  sign(payload: SignaturePayload, options?: SignOptions): string {
    const { forge } = this.#config.delivery;
    return sign(
      this.#config.delivery.secret,
      payload,
      resolvePreset(forge).neutral ? options : { forge, ...options },
    );
  }

  /**
   * Verifies a signature against a payload with each secret in turn; `false` for any malformed signature.
   * With `allowSha1: false`, a sha1 signature is `false`.
   * @throws TypeError when `payload` or `signature` is missing or empty.
   */
  verify(payload: SignaturePayload, signature: string): boolean {
    const data = hmacInput(payload);
    if (typeof signature !== 'string' || signature.length === 0) {
      throw new TypeError('"signature" must be a non-empty string');
    }
    return this.#verifies(data, signature);
  }

  /**
   * Whether a signature value proves `data` under the instance's forge's schemes: `sha256=<hex>` (or, with
   * `allowSha1`, `sha1=<hex>`); the bare hex where the preset has it (Gitea, Forgejo); the token where the preset
   * sends one (GitLab), compared in constant time.
   */
  #verifies(data: string | Uint8Array, signature: string): boolean {
    const { secret, forge, allowSha1 } = this.#config.delivery;
    const schemes = new Set(resolvePreset(forge).signatures.map(({ scheme }) => scheme));
    if (schemes.has('token')) return matchesScheme(secret, 'token', signature, data);
    const algorithm = parseSignature(signature)?.algorithm;
    if (algorithm === undefined) {
      return schemes.has('hex-sha256') && matchesScheme(secret, 'hex-sha256', signature, data);
    }
    if (algorithm === 'sha1' && !allowSha1) return false;
    return matchesScheme(secret, algorithm, signature, data);
  }

  /**
   * Registers a handler for one name or several (`event`, `event.action`, `*` or `error`). An unknown name
   * only warns; `on('not-a-known-event', …)` is a type error.
   */
  on<Name extends EmitterWebhookEventName>(
    name: Name | readonly Name[],
    handler: HandlerFunction<Name, TTransformed>,
  ): void;
  on(
    name: HandlerEventName | readonly HandlerEventName[],
    handler: WildcardHandlerFunction<TTransformed>,
  ): void;
  on(name: 'error' | readonly 'error'[], handler: ErrorHandlerFunction): void;
  on(name: string | readonly string[], handler: (event: never) => unknown): void {
    (this.#handler.on as (name: string | readonly string[], handler: unknown) => void).call(
      this.#handler,
      name,
      handler,
    );
  }

  /** Registers `handler` for every event: the same as `on('*', handler)` (@octokit/webhooks' name). */
  onAny(handler: WildcardHandlerFunction<TTransformed>): void {
    this.#handler.onAny(handler);
  }

  /**
   * Registers `handler` for failures: the same as `on('error', handler)` (@octokit/webhooks' name). It gets
   * failed `receive`s, failed verifications and every delivery the middleware refuses.
   */
  onError(handler: ErrorHandlerFunction): void {
    this.#handler.onError(handler);
  }

  /** Removes the most recent registration of `handler` for one name or several. */
  removeListener<Name extends EmitterWebhookEventName>(
    name: Name | readonly Name[],
    handler: HandlerFunction<Name, TTransformed>,
  ): void;
  removeListener(
    name: HandlerEventName | readonly HandlerEventName[],
    handler: WildcardHandlerFunction<TTransformed>,
  ): void;
  removeListener(name: 'error' | readonly 'error'[], handler: ErrorHandlerFunction): void;
  removeListener(name: string | readonly string[], handler: (event: never) => unknown): void {
    (this.#handler.removeListener as (name: string | readonly string[], handler: unknown) => void).call(
      this.#handler,
      name,
      handler,
    );
  }

  /**
   * Runs every matching handler (`name.action`, `name`, `*`) together and waits for all; rejects with a
   * `WebhookReceiveError` (`.errors`, `.event`) when any failed, after passing it to the `error` handlers.
   */
  receive(event: ReceivedEvent): Promise<void> {
    return this.#handler.receive(event);
  }

  /**
   * Verifies the signature, then `receive`s the event. A failed verification rejects with a
   * `WebhookVerificationError` (`invalid_signature`, status 401; `missing_signature`, 400) and is emitted to
   * the `error` handlers; so is a verified body that is not a JSON object (`WebhookPayloadError`).
   *
   * @param event - `{ id, name, payload, signature }`; `payload` is best the raw body (string or bytes),
   *   which is verified byte for byte and then parsed; an object is re-serialized the forge's way. With a
   *   `forge` preset, `name` is the forge's own event name (mapped onto the catalogue's event and action)
   *   and `signature` its own signature header's value (GitLab: the `X-Gitlab-Token` value).
   */
  verifyAndReceive(event: SignedEvent): Promise<void> {
    if (event === null || typeof event !== 'object') {
      return Promise.reject(new TypeError('"event" must be an object'));
    }
    const { name, payload, signature } = event;
    const id = event.id ?? '';
    if (typeof name !== 'string' || name.length === 0) {
      return Promise.reject(new TypeError('"event.name" must be a non-empty string'));
    }
    let data: string | Uint8Array;
    try {
      data = hmacInput(payload);
    } catch (error) {
      return Promise.reject(error);
    }
    const failed = { id, name, payload };
    if (typeof signature !== 'string' || signature.length === 0) {
      return this.#reject(
        new WebhookVerificationError('"signature" is missing', {
          code: ErrorCodes.missingSignature,
          status: 400,
          event: failed,
        }),
      );
    }
    if (!this.#verifies(data, signature)) {
      return this.#reject(
        new WebhookVerificationError('signature does not match the payload', {
          code: ErrorCodes.invalidSignature,
          event: failed,
        }),
      );
    }
    let parsed: unknown = payload;
    if (typeof payload === 'string' || payload instanceof Uint8Array) {
      try {
        parsed = JSON.parse(
          typeof payload === 'string'
            ? payload
            : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'),
        );
      } catch (cause) {
        return this.#reject(new WebhookPayloadError('payload is not valid JSON', { event: failed, cause }));
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return this.#reject(new WebhookPayloadError('payload must be a JSON object', { event: failed }));
      }
    }
    const { forge } = this.#config.delivery;
    if (resolvePreset(forge).neutral) return this.#handler.receive({ id, name, payload: parsed });
    const route = routeForgeEvent(forge, name, parsed);
    return this.#handler.receive({
      id,
      name: route.name,
      action: route.action,
      forge,
      nativeName: name,
      nativeAction: route.nativeAction,
      payload: parsed,
    });
  }

  #reject(error: WebhookVerificationError | WebhookPayloadError): Promise<never> {
    this.#handler.emitError(error);
    return Promise.reject(error);
  }
}
