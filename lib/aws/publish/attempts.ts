// What the two publishers (the bus's and the ordered stream's) share: their claim-check and retry options, and how
// they read a failed AWS call (its error's name, whether it proves nothing was written) and wait before the next.
import type { S3Client } from '@aws-sdk/client-s3';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { type OnBus, PublishError } from '../errors.js';
import { positive } from '../rules.js';
import type { Delivery, LoggerLike, PayloadRef } from '../types.js';
import { ClaimCheck } from './claim-check.js';

/** The claim check and the retries of a publisher. Defaults live in `AwsDefaults`. */
export interface PublishAttemptOptions {
  /** S3 client for the claim check. Required with `bucket` for deliveries over the size limit. */
  s3?: S3Client | undefined;
  /** Claim-check bucket. */
  bucket?: string | undefined;
  /** Claim-check key prefix. Default `'deliveries/'`. */
  claimCheckPrefix?: string | undefined;
  /**
   * Time for one delivery, retries included, in ms. Default 3000. A retry starts only when the slowest attempt so
   * far would still end within it; an attempt under way is never cut off (the client's request timeout bounds it).
   */
  budgetMs?: number | undefined;
  /** First backoff delay in ms, doubled per retry with full jitter. Default 50. */
  baseDelayMs?: number | undefined;
  /** Largest single backoff delay in ms. Default 1000. */
  maxDelayMs?: number | undefined;
  logger?: LoggerLike | undefined;
}

/** {@link PublishAttemptOptions} checked, with their defaults: a `TypeError` names a field that is not positive. */
export interface PublishAttempts {
  claimCheck: ClaimCheck | undefined;
  budgetMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Reads a publisher's claim-check and retry options. */
export function publishAttempts(options: PublishAttemptOptions): PublishAttempts {
  return {
    claimCheck:
      options.s3 !== undefined && options.bucket
        ? new ClaimCheck({ s3: options.s3, bucket: options.bucket, prefix: options.claimCheckPrefix })
        : undefined,
    budgetMs: positive('budgetMs', options.budgetMs ?? AwsDefaults.publishBudgetMs),
    baseDelayMs: positive('baseDelayMs', options.baseDelayMs ?? AwsDefaults.publishBaseDelayMs),
    maxDelayMs: positive('maxDelayMs', options.maxDelayMs ?? AwsDefaults.publishMaxDelayMs),
  };
}

/** Socket errors raised before any byte of the request left: the service cannot have seen it. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** Errors the SDK raises before it sends anything (no credentials to sign with). */
const NOT_SENT_NAMES = new Set(['CredentialsProviderError']);

/** A thrown error's `name` (an SDK exception's is its code, `ThrottlingException`), else `'Error'`. */
export function errorName(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string') {
    return error.name;
  }
  return 'Error';
}

/**
 * Whether a thrown error proves the request wrote nothing: the service answered with an HTTP error status (4xx,
 * 5xx, throttling; the SDK puts it in `$metadata`), or the request was never sent. A timeout, a reset connection, a
 * 200 whose body could not be read, or a gateway's 504 (it gave up waiting for the service) leave it unknown.
 */
export function provesNotWritten(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 400 && status !== 504) return true;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && NOT_SENT_CODES.has(code)) || NOT_SENT_NAMES.has(errorName(error));
}

/** The wait before retry `retry` (1 for the first): full jitter under `baseMs` doubled per retry, capped at `maxMs`. */
export function backoffDelay(retry: number, baseMs: number, maxMs: number): number {
  return Math.floor(Math.random() * Math.min(maxMs, baseMs * 2 ** (retry - 1)));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stores a delivery's payload for the claim check within the publish deadline. `before` says why the delivery cannot
 * go as it is (`overLimit`) and what its sends so far got, for the {@link PublishError} when there is no bucket
 * (`entry_too_large`) or the upload fails (`claim_check_failed`).
 */
export async function storeClaimCheck(
  claimCheck: ClaimCheck | undefined,
  delivery: Delivery,
  deadline: number,
  before: { overLimit: string; attempts?: number; lastErrorCode?: string | undefined; onBus: OnBus },
): Promise<PayloadRef> {
  const { attempts = 0, lastErrorCode, onBus } = before;
  if (claimCheck === undefined) {
    throw new PublishError(
      AwsErrorCodes.entryTooLarge,
      `${before.overLimit} and no claim-check "bucket" is configured`,
      { attempts, lastErrorCode, onBus },
    );
  }
  try {
    // Cutting an upload off is harmless (nothing is published yet, a later try overwrites the same key), and it
    // keeps the S3 client's own retries within the budget.
    return await claimCheck.store(delivery, {
      abortSignal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
    });
  } catch (error) {
    throw new PublishError(
      AwsErrorCodes.claimCheckFailed,
      'claim-check object could not be stored in "bucket"',
      {
        cause: error,
        attempts,
        lastErrorCode,
        onBus,
      },
    );
  }
}
