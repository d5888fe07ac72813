/**
 * Default names of the delivery headers, lowercase (Node.js and Lambda hand them over lowercased; they are
 * read case-insensitively anyway). A real forge's names (`x-github-event`, `x-gitea-event`) can be configured.
 */
export const DefaultHeaders = {
  event: 'x-forge-event',
  delivery: 'x-forge-delivery',
  /** `sha256=<hex>` */
  signature256: 'x-hub-signature-256',
  /** `sha1=<hex>`, the legacy signature */
  signature: 'x-hub-signature',
} as const;

/** Signature algorithms and the prefix each writes before its hex digest. */
export const SignatureAlgorithms = {
  sha256: 'sha256',
  sha1: 'sha1',
} as const;

/** Default body limit of the middleware and of `readDelivery`: 25 MiB, the forge's own cap on a delivery. */
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;

/** Default time the middleware waits for handlers before answering 202: 9 seconds (the forge waits 10). */
export const DEFAULT_TIMEOUT_MS = 9_000;

/** Default path the middleware answers on. */
export const DEFAULT_PATH = '/';

/**
 * Stable error codes carried by errors and by failed `readDelivery` results. Compare against these, never
 * against messages.
 */
export const ErrorCodes = {
  /** The request is not a POST on the middleware's path (404). */
  notFound: 'not_found',
  /** The content type is not `application/json` (415). */
  unsupportedMediaType: 'unsupported_media_type',
  /** An event, delivery or signature header is missing (400). */
  missingHeader: 'missing_header',
  /** The body is larger than the configured limit (413). */
  payloadTooLarge: 'payload_too_large',
  /** A header is present but not in its form (a Standard Webhooks timestamp that is not an integer) (400). */
  invalidHeader: 'invalid_header',
  /** A Standard Webhooks timestamp is older than the tolerance allows: a late or replayed delivery (401). */
  staleTimestamp: 'stale_timestamp',
  /** A Standard Webhooks timestamp is further in the future than the tolerance allows (401). */
  futureTimestamp: 'future_timestamp',
  /** No configured secret produced the delivery's signature (401). */
  invalidSignature: 'invalid_signature',
  /** `verifyAndReceive` was called without a signature (400). */
  missingSignature: 'missing_signature',
  /** The verified body is not a JSON object (400). */
  invalidJson: 'invalid_json',
  /** One or more handlers threw or rejected (500). */
  handlerFailed: 'handler_failed',
  /** The request body was consumed by a body parser before the middleware could read the raw bytes (500). */
  bodyConsumed: 'body_consumed',
  /** Reading the request body failed (400). */
  bodyReadFailed: 'body_read_failed',
  /** The middleware itself failed unexpectedly (500). */
  internalError: 'internal_error',
} as const;
