/**
 * Every error class of the webhook toolset, in this one file (the proxy channel's too). Every one carries its
 * `name`, a stable `code`, the `cause` it wraps and the HTTP `status` the middleware answers with; messages never
 * contain a secret or a signature.
 */
import { ErrorCodes } from './constants.js';
import type { ReceivedEvent } from './types.js';

interface WebhooksErrorOptions {
  code: string;
  status: number;
  event?: ReceivedEvent | undefined;
  cause?: unknown;
}

/**
 * Base class of the toolset's errors. `instanceof WebhooksError` is also true for `WebhookReceiveError`,
 * which extends `AggregateError` so that `.errors` keeps its standard meaning.
 */
export class WebhooksError extends Error {
  /** Stable machine-readable code, one of `ErrorCodes`. */
  readonly code: string;
  /** HTTP status the middleware answers with. */
  readonly status: number;
  /** The event the error belongs to, when there is one. */
  readonly event: ReceivedEvent | undefined;

  constructor(message: string, options: WebhooksErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WebhooksError';
    this.code = options.code;
    this.status = options.status;
    this.event = options.event;
  }

  // `this` is the class `instanceof` is asked about: subclasses keep the ordinary check.
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the check depends on which class is asked
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    // biome-ignore lint/complexity/noThisInStatic: the check depends on which class is asked
    return this === WebhooksError && value instanceof WebhookReceiveError;
  }
}

/**
 * A delivery whose signature does not match any configured secret (`invalid_signature`, 401), or that has
 * no signature at all (`missing_signature`, 400). Rejected by `verifyAndReceive` and emitted to `error`.
 */
export class WebhookVerificationError extends WebhooksError {
  constructor(message: string, options: Omit<WebhooksErrorOptions, 'status'> & { status?: number }) {
    super(message, { status: 401, ...options });
    this.name = 'WebhookVerificationError';
  }
}

/** A verified body that is not a JSON object (`invalid_json`, 400). */
export class WebhookPayloadError extends WebhooksError {
  constructor(message: string, options: Omit<WebhooksErrorOptions, 'code' | 'status'> = {}) {
    super(message, { code: ErrorCodes.invalidJson, status: 400, ...options });
    this.name = 'WebhookPayloadError';
  }
}

/**
 * Rejection of a `receive()` in which handlers failed (`handler_failed`, 500): `.errors` holds every
 * handler's error, `.event` the event. The same error is passed to every `error` handler. It is also
 * iterable over the handler errors (`Array.from(error)`, `for (const e of error)`), as @octokit/webhooks' was.
 */
export class WebhookReceiveError extends AggregateError implements Iterable<unknown> {
  /** Always `handler_failed`. */
  readonly code: string = ErrorCodes.handlerFailed;
  /** HTTP status the middleware answers with: 500. */
  readonly status: number = 500;
  /** The event whose handlers failed (before `transform`). */
  readonly event: ReceivedEvent;

  constructor(errors: unknown[], event: ReceivedEvent) {
    super(errors, receiveErrorMessage(errors, event.name));
    this.name = 'WebhookReceiveError';
    this.event = event;
  }

  /** The handler errors, in the order of `.errors`. */
  *[Symbol.iterator](): IterableIterator<unknown> {
    yield* this.errors;
  }
}

/**
 * The error the middleware emits to the `error` handlers for a delivery it refused: the class and `code`
 * `verifyAndReceive` uses for the same failure where there is one (`WebhookVerificationError` for
 * `invalid_signature`, `WebhookPayloadError` for `invalid_json`), else a `WebhooksError` with the answer's code
 * and status. `message` is the answer's message, which never holds the secret or the signature. Internal.
 */
export function refusalError(
  status: number,
  code: string,
  message: string,
  event: ReceivedEvent | undefined,
): WebhooksError {
  const text = `webhook delivery refused: ${message}`;
  if (code === ErrorCodes.invalidSignature)
    return new WebhookVerificationError(text, { code, status, event });
  if (code === ErrorCodes.invalidJson) return new WebhookPayloadError(text, { event });
  return new WebhooksError(text, { code, status, event });
}

function receiveErrorMessage(errors: unknown[], name: string): string {
  const count = errors.length === 1 ? '1 handler' : `${errors.length} handlers`;
  const first = errors[0];
  const detail = first instanceof Error ? `: ${first.message}` : '';
  return `${count} of event "${name}" failed${detail}`;
}

/** Stable codes of {@link ProxyChannelError}. Compare against these, never against messages. */
export const ProxyChannelErrorCodes = {
  /** The message's data is not a JSON object (400). */
  invalidMessage: 'invalid_message',
  /** The message lacks the event name, the delivery id, a signature or the body (400). */
  missingField: 'missing_field',
  /** The relayed delivery's `content-type` is not `application/json` (415). */
  unsupportedMediaType: 'unsupported_media_type',
  /** `verifyAndReceive` rejected the delivery: bad signature, not JSON, or failing handlers; see `cause`. */
  deliveryRejected: 'delivery_rejected',
  /** The stream failed; the EventSource reconnects by itself (502). */
  connectionError: 'connection_error',
  /** The stream failed for good (an HTTP error or a response that is not `text/event-stream`) (502). */
  connectionClosed: 'connection_closed',
} as const;

/** One of {@link ProxyChannelErrorCodes}. */
export type ProxyChannelErrorCode = (typeof ProxyChannelErrorCodes)[keyof typeof ProxyChannelErrorCodes];

type ProxyChannelErrorOptions = WebhooksErrorOptions & { code: ProxyChannelErrorCode };

/**
 * An error of the proxy channel client, handed to `onError` and the `error` event; it never stops the
 * channel. Its message never contains the secret, a signature or the channel URL (anyone who knows a
 * channel URL can read its deliveries).
 */
export class ProxyChannelError extends WebhooksError {
  declare readonly code: ProxyChannelErrorCode;

  constructor(message: string, options: ProxyChannelErrorOptions) {
    super(message, options);
    this.name = 'ProxyChannelError';
  }
}
