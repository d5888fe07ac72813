import { WebhooksError } from './errors.js';
import type { ReceivedEvent } from './types.js';

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

interface ProxyChannelErrorOptions {
  code: ProxyChannelErrorCode;
  status: number;
  event?: ReceivedEvent | undefined;
  cause?: unknown;
}

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
