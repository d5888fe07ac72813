import { AwsErrorCodes } from './constants.js';

/**
 * Errors of the AWS-facing pieces: one base class, a few subclasses, each with a stable `code`.
 * Messages are lowercase, quote the field, and never contain a secret or a token.
 */

/**
 * Base class of every error thrown by `lib/aws`.
 */
export class AwsBridgeError extends Error {
  override name = 'AwsBridgeError';
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/**
 * Whether a delivery that failed to publish may still be on the bus. `'no'`: it is known not to be (every
 * PutEvents attempt got a definite answer, an entry error or a 4xx/5xx reply, or was never sent), so publishing
 * it later delivers it once. `'unknown'`: an attempt was sent and its answer never came (timed out, connection
 * reset, unreadable reply, a gateway's 504), so the bus may have taken it and publishing it again may deliver it
 * twice.
 */
export type OnBus = 'no' | 'unknown';

/**
 * A delivery could not be put on the bus within the retry budget (or could not be stored for a claim check).
 */
export class PublishError extends AwsBridgeError {
  override name = 'PublishError';
  /** How many PutEvents attempts were made. */
  readonly attempts: number;
  /** The last entry error code seen (e.g. `ThrottlingException`), when EventBridge returned one. */
  readonly lastErrorCode: string | undefined;
  /** Whether the delivery may be on the bus despite the failure; `'unknown'` unless the thrower knows. */
  readonly onBus: OnBus;
  constructor(
    code: string,
    message: string,
    options: { cause?: unknown; attempts?: number; lastErrorCode?: string | undefined; onBus?: OnBus } = {},
  ) {
    super(code, message, options);
    this.attempts = options.attempts ?? 0;
    this.lastErrorCode = options.lastErrorCode;
    this.onBus = options.onBus ?? 'unknown';
  }
}

/**
 * A conditional write of the token store lost a race (another writer changed the version or holds the lease).
 */
export class TokenStoreConflictError extends AwsBridgeError {
  override name = 'TokenStoreConflictError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(AwsErrorCodes.tokenStoreConflict, message, options);
  }
}

/**
 * The token store could not produce a token: the refresh failed, the stored item is unreadable, or
 * waiting for another refresher timed out. The `code` tells which.
 */
export class TokenStoreError extends AwsBridgeError {
  override name = 'TokenStoreError';
}

/**
 * The webhook secrets could not be loaded (parameter missing, empty, or SSM unreachable).
 */
export class SecretsError extends AwsBridgeError {
  override name = 'SecretsError';
}

/**
 * An EventBridge event could not be turned back into a delivery (bad shape, missing or altered S3 object).
 */
export class ResolveDeliveryError extends AwsBridgeError {
  override name = 'ResolveDeliveryError';
}

/** A delivery the ingest refuses or cannot take: `webhookErrors` answers it with `statusCode` and `code`. */
export class IngestError extends AwsBridgeError {
  override name = 'IngestError';
  /** The HTTP status to answer with (a 5xx is always answered with a generic message). */
  readonly statusCode: number;
  constructor(statusCode: number, code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.statusCode = statusCode;
  }
}

/**
 * Whether an AWS SDK error is a failed DynamoDB condition check.
 */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'name' in error &&
    (error.name === 'ConditionalCheckFailedException' ||
      (error.name === 'TransactionCanceledException' &&
        String((error as { message?: unknown }).message).includes('ConditionalCheckFailed')))
  );
}
