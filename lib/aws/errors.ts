import { AwsErrorCodes } from './constants.js';
import { errorCode } from './rules.js';
import type { RefreshRun } from './tokens/refresh.js';

/**
 * Every error class of lib/aws, in this one file: one base class (`AwsBridgeError`), its subclasses, each with its
 * `name`, a stable `code` and the `cause` it wraps. Messages are lowercase, quote the field, and never contain a
 * secret or a token.
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

/** The queue could not keep a delivery (or could not give one back); `code` is `queue_failed`. */
export class QueueError extends AwsBridgeError {
  override name = 'QueueError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(AwsErrorCodes.queueFailed, message, options);
  }
}

/** Another invocation holds the delivery's lock; `code` is `in_progress`. */
export class DedupeInProgressError extends AwsBridgeError {
  override name = 'DedupeInProgressError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(AwsErrorCodes.inProgress, message, options);
  }
}

/**
 * The publish of a deduplicated delivery failed (`cause` is the publisher's error, `code` `publish_failed`);
 * `releaseError` is set when its lock could not be released either.
 */
export class DedupePublishError extends AwsBridgeError {
  override name = 'DedupePublishError';
  readonly releaseError: unknown;
  constructor(cause: unknown, releaseError?: unknown) {
    super(AwsErrorCodes.publishFailed, 'publish failed', { cause });
    this.releaseError = releaseError;
  }
}

/**
 * Neither the bus nor the queue took the delivery (`code` `queue_failed`): `publishError` is the bus's failure,
 * `cause` the queue's. Internal to the ingest.
 */
export class NotKeptError extends AwsBridgeError {
  override name = 'NotKeptError';
  readonly publishError: unknown;
  constructor(publishError: unknown, queueError: unknown) {
    super(AwsErrorCodes.queueFailed, 'delivery neither published nor queued', { cause: queueError });
    this.publishError = publishError;
  }
}

/** Thrown when a refresh run had a failed client, so the scheduled invocation fails and its alarms fire. */
export class TokenRefreshError extends AwsBridgeError {
  override name = 'TokenRefreshError';
  readonly run: RefreshRun;
  constructor(run: RefreshRun) {
    super(AwsErrorCodes.refreshFailed, `${run.failed} of ${run.reports.length} token refreshes failed`);
    this.run = run;
  }
}

/**
 * A forge API call could not get its turn in time: `limit` says which limit held it (`concurrency`, a budget such
 * as `writes:80/60s`, the forge's `retry-after`, its `primary` budget, or a `secondary` limit answer without a
 * time), `resetAt` when that limit frees up, `owner` whose budget it is (the token table key, never the token).
 */
export class ForgeRateLimitError extends AwsBridgeError {
  override name = 'ForgeRateLimitError';
  readonly limit: string;
  readonly resetAt: Date;
  readonly owner: string;
  constructor(
    owner: string,
    limit: string,
    resetAt: Date,
    options: { waitedMs?: number; cause?: unknown } = {},
  ) {
    const waited = options.waitedMs === undefined ? '' : ` after waiting ${Math.round(options.waitedMs)} ms`;
    super(
      AwsErrorCodes.forgeRateLimited,
      `forge api limit "${limit}" of "${owner}" holds the call${waited}; it frees up at ${resetAt.toISOString()}`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.limit = limit;
    this.resetAt = resetAt;
    this.owner = owner;
  }
}

/**
 * A subscriber's handler had not finished `marginMs` before its function's timeout: the delivery log is told (as
 * `error`, so that `forgebridge replay --outcome error` selects it), and the invocation fails so that the bus retries.
 */
export class SubscriberTimeoutError extends AwsBridgeError {
  override name = 'SubscriberTimeoutError';
  readonly marginMs: number;
  constructor(marginMs: number) {
    super(
      AwsErrorCodes.subscriberTimeout,
      `the handler had not finished ${marginMs} ms before the function's timeout`,
    );
    this.marginMs = marginMs;
  }
}

/**
 * A GitHub App's key is unusable, or the forge refused the app JWT or the token request. `status` is the forge's
 * HTTP status when it answered; the message quotes its `message` field, never the JWT or the key.
 */
export class GitHubAppError extends AwsBridgeError {
  override name = 'GitHubAppError';
  readonly status: number | undefined;
  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(
      AwsErrorCodes.githubAppFailed,
      message,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.status = options.status;
  }
}

/** Stable codes of {@link ForgeApiError}. */
export const ForgeApiErrorCodes = {
  /** 403/429 with `x-ratelimit-remaining: 0` or `retry-after`: the run stops and resumes next time. */
  rateLimited: 'forge_rate_limited',
  /** A 5xx, a timeout or no connection: the forge's API is down for now. */
  unavailable: 'forge_unavailable',
  /** 401 even with a fresh token. */
  unauthorized: 'forge_unauthorized',
  /** An answer that is not what the API's description says (not JSON, a field missing or of another type). */
  malformed: 'forge_malformed',
  /** Any other 4xx (the hook is gone, the token may not read it). */
  refused: 'forge_refused',
} as const;
/** A {@link ForgeApiErrorCodes} value. */
export type ForgeApiErrorCode = (typeof ForgeApiErrorCodes)[keyof typeof ForgeApiErrorCodes];

/** A forge API call failed; `code` says how, `status` is the forge's HTTP status when it answered. */
export class ForgeApiError extends AwsBridgeError {
  override name = 'ForgeApiError';
  declare readonly code: ForgeApiErrorCode;
  readonly status: number | undefined;
  /** Seconds the forge asked to wait (`retry-after`, or until `x-ratelimit-reset`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    code: ForgeApiErrorCode,
    message: string,
    options: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
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

/** Where an accepted delivery goes: the bus (every rule), and the ordered stream when one is configured. */
export type OutputName = 'bus' | 'stream';

/**
 * A delivery that reached some of its outputs and not all: `remaining` names the ones still to write (the one that
 * failed and those after it), which the durable queue keeps so that the retrier writes those only. Its `code` and
 * `onBus` are those of the failed output's error.
 */
export class OutputsPublishError extends PublishError {
  override name = 'OutputsPublishError';
  /** The outputs still to write, in order. */
  readonly remaining: OutputName[];
  /** The output that failed. */
  readonly output: OutputName;
  constructor(output: OutputName, remaining: OutputName[], cause: unknown) {
    const inner = cause instanceof PublishError ? cause : undefined;
    super(
      errorCode(cause),
      `delivery not written to the ${output === 'bus' ? 'bus' : 'ordered stream'}${remaining.length > 1 ? ` (nor to ${remaining.slice(1).join(', ')})` : ''}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
        attempts: inner?.attempts ?? 0,
        lastErrorCode: inner?.lastErrorCode,
        onBus: inner?.onBus ?? 'unknown',
      },
    );
    this.output = output;
    this.remaining = remaining;
  }
}
