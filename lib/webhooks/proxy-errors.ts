/**
 * Errors of the webhook proxy channel client: a relayed message it could not use, a delivery that
 * `verifyAndReceive` rejected, or a connection problem. They are handed to `onError` and to the channel's
 * `error` event; they never stop the channel.
 *
 * @see https://html.spec.whatwg.org/multipage/server-sent-events.html
 */
import { WebhooksError } from './errors.js';
import type { ReceivedEvent } from './types.js';

/**
 * Stable codes of {@link ProxyChannelError}. Compare against these, never against messages.
 *
 * @example
 * ```ts
 * channel.on('error', (e) => { if (e.code === ProxyChannelErrorCodes.deliveryRejected) console.warn(e.cause); });
 * ```
 */
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

/**
 * One of {@link ProxyChannelErrorCodes}.
 *
 * @example
 * ```ts
 * const code: ProxyChannelErrorCode = 'missing_field';
 * ```
 */
export type ProxyChannelErrorCode = (typeof ProxyChannelErrorCodes)[keyof typeof ProxyChannelErrorCodes];

interface ProxyChannelErrorOptions {
  code: ProxyChannelErrorCode;
  status: number;
  event?: ReceivedEvent | undefined;
  cause?: unknown;
}

/**
 * An error of the proxy channel client. Its message never contains the secret, a signature or the channel
 * URL (anyone who knows a channel URL can read its deliveries).
 *
 * @example
 * ```ts
 * createProxyChannel({ url, webhooks, onError: (e: ProxyChannelError) => console.warn(e.code, e.message) });
 * ```
 */
export class ProxyChannelError extends WebhooksError {
  declare readonly code: ProxyChannelErrorCode;

  constructor(message: string, options: ProxyChannelErrorOptions) {
    super(message, options);
    this.name = 'ProxyChannelError';
  }
}
