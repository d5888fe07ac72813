import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { PublishError } from '../errors.js';
import type { Delivery, DeliveryEntry, LoggerLike, PayloadRef } from '../types.js';
import { ClaimCheck } from './claim-check.js';
import { buildEventEntry, eventEntrySize } from './event-entry.js';

/** Options of {@link EventPublisher}. Defaults live in {@link AwsDefaults}. */
export interface EventPublisherOptions {
  /** The EventBridge client (construct it with `maxAttempts: 1`: the publisher does its own retries). */
  eventBridge: EventBridgeClient;
  /** Target bus name or ARN. Default: the account's default bus. */
  eventBusName?: string | undefined;
  /** EventBridge `Source`. Default `'forge.webhooks'`. */
  source?: string | undefined;
  /** Largest entry sent as-is, in bytes. Default 262144 (256 KB); AWS raised the hard limit to 1 MB. */
  maxEntryBytes?: number | undefined;
  /** S3 client for the claim check. Required with `bucket` for deliveries over `maxEntryBytes`. */
  s3?: S3Client | undefined;
  /** Claim-check bucket. */
  bucket?: string | undefined;
  /** Claim-check key prefix. Default `'deliveries/'`. */
  claimCheckPrefix?: string | undefined;
  /** Total time for one delivery, retries included, in ms. Default 3000. */
  budgetMs?: number | undefined;
  /** First backoff delay in ms, doubled per retry with full jitter. Default 50. */
  baseDelayMs?: number | undefined;
  /** Largest single backoff delay in ms. Default 1000. */
  maxDelayMs?: number | undefined;
  logger?: LoggerLike | undefined;
  /** Clock in ms (tests). Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Sleep (tests). Default a timer. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Random source in [0, 1) for the jitter (tests). Default `Math.random`. */
  random?: (() => number) | undefined;
}

/** What {@link EventPublisher.publish} did. */
export interface PublishResult {
  /** The EventBridge event id. */
  eventId: string | undefined;
  /** PutEvents attempts made (1 when the first one succeeded). */
  attempts: number;
  /** Set when the payload went to S3 (claim check). */
  payloadRef?: PayloadRef;
  /** Size of the entry that was sent, as EventBridge counts it. */
  entryBytes: number;
}

/** Entry error codes that will not go away by retrying. */
const PERMANENT_ENTRY_ERRORS = new Set([
  'ValidationException',
  'MalformedDetail',
  'InvalidArgument',
  'AccessDeniedException',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
  'ResourceNotFoundException',
]);

/** SDK exceptions (thrown, not per entry) that will not go away by retrying. */
const PERMANENT_EXCEPTIONS = new Set([
  'ValidationException',
  'AccessDeniedException',
  'ResourceNotFoundException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
]);

function errorName(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string') {
    return error.name;
  }
  return 'Error';
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`"${name}" must be a positive number`);
  return value;
}

/**
 * Publishes one verified delivery as one PutEvents entry, with a claim check for large payloads and
 * jittered retries of failed entries within a total time budget.
 */
export class EventPublisher {
  readonly #eventBridge: EventBridgeClient;
  readonly #eventBusName: string | undefined;
  readonly #source: string;
  readonly #maxEntryBytes: number;
  readonly #claimCheck: ClaimCheck | undefined;
  readonly #budgetMs: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;

  constructor(options: EventPublisherOptions) {
    if (options?.eventBridge === undefined) throw new TypeError('"eventBridge" is required');
    if (options.source === '') throw new TypeError('"source" must not be empty');
    this.#eventBridge = options.eventBridge;
    this.#eventBusName = options.eventBusName || undefined;
    this.#source = options.source ?? AwsDefaults.source;
    this.#maxEntryBytes = positive('maxEntryBytes', options.maxEntryBytes ?? AwsDefaults.maxEntryBytes);
    this.#now = options.now ?? Date.now;
    this.#claimCheck =
      options.s3 !== undefined && options.bucket
        ? new ClaimCheck({
            s3: options.s3,
            bucket: options.bucket,
            prefix: options.claimCheckPrefix,
            now: this.#now,
          })
        : undefined;
    this.#budgetMs = positive('budgetMs', options.budgetMs ?? AwsDefaults.publishBudgetMs);
    this.#baseDelayMs = positive('baseDelayMs', options.baseDelayMs ?? AwsDefaults.publishBaseDelayMs);
    this.#maxDelayMs = positive('maxDelayMs', options.maxDelayMs ?? AwsDefaults.publishMaxDelayMs);
    this.#logger = options.logger;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
  }

  /**
   * Puts the delivery on the bus. Resolves once EventBridge accepted the entry; rejects with a
   * {@link PublishError} when it could not within the budget (codes `publish_failed`, `publish_rejected`,
   * `entry_too_large`, `claim_check_failed`).
   */
  async publish(delivery: Delivery): Promise<PublishResult> {
    const started = this.#now();
    const deadline = started + this.#budgetMs;
    let entry = buildEventEntry(delivery, { source: this.#source, eventBusName: this.#eventBusName });
    let entryBytes = eventEntrySize(entry);
    let payloadRef: PayloadRef | undefined;
    if (entryBytes > this.#maxEntryBytes) {
      payloadRef = await this.#store(delivery, entryBytes, deadline);
      entry = buildEventEntry(delivery, {
        source: this.#source,
        eventBusName: this.#eventBusName,
        payloadRef,
      });
      entryBytes = eventEntrySize(entry);
      if (entryBytes > this.#maxEntryBytes) {
        throw new PublishError(
          AwsErrorCodes.entryTooLarge,
          `entry of ${entryBytes} bytes exceeds "maxEntryBytes" (${this.#maxEntryBytes}) even with a claim check`,
        );
      }
    }
    const { eventId, attempts } = await this.#send(entry, deadline);
    const result: PublishResult = { eventId, attempts, entryBytes };
    if (payloadRef !== undefined) result.payloadRef = payloadRef;
    return result;
  }

  async #store(delivery: Delivery, entryBytes: number, deadline: number): Promise<PayloadRef> {
    if (this.#claimCheck === undefined) {
      throw new PublishError(
        AwsErrorCodes.entryTooLarge,
        `entry of ${entryBytes} bytes exceeds "maxEntryBytes" (${this.#maxEntryBytes}) and no claim-check "bucket" is configured`,
      );
    }
    try {
      return await this.#claimCheck.store(delivery, {
        abortSignal: AbortSignal.timeout(Math.max(1, deadline - this.#now())),
      });
    } catch (error) {
      throw new PublishError(
        AwsErrorCodes.claimCheckFailed,
        `claim-check object could not be stored in "bucket"`,
        {
          cause: error,
        },
      );
    }
  }

  async #send(
    entry: DeliveryEntry,
    deadline: number,
  ): Promise<{ eventId: string | undefined; attempts: number }> {
    let attempts = 0;
    let lastErrorCode: string | undefined;
    let lastCause: unknown;
    for (;;) {
      attempts += 1;
      const remaining = deadline - this.#now();
      try {
        const output = await this.#eventBridge.send(new PutEventsCommand({ Entries: [entry] }), {
          abortSignal: AbortSignal.timeout(Math.max(1, remaining)),
        });
        const result = output.Entries?.[0];
        if ((output.FailedEntryCount ?? 0) === 0 && result !== undefined && result.ErrorCode === undefined) {
          return { eventId: result.EventId, attempts };
        }
        lastErrorCode = result?.ErrorCode ?? 'UnknownEntryError';
        lastCause = undefined;
        if (PERMANENT_ENTRY_ERRORS.has(lastErrorCode)) {
          throw new PublishError(
            AwsErrorCodes.publishRejected,
            `eventbridge rejected the entry with "${lastErrorCode}"`,
            {
              attempts,
              lastErrorCode,
            },
          );
        }
      } catch (error) {
        if (error instanceof PublishError) throw error;
        lastErrorCode = errorName(error);
        lastCause = error;
        if (PERMANENT_EXCEPTIONS.has(lastErrorCode)) {
          throw new PublishError(
            AwsErrorCodes.publishRejected,
            `eventbridge refused the request with "${lastErrorCode}"`,
            {
              attempts,
              lastErrorCode,
              cause: error,
            },
          );
        }
      }
      const ceiling = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempts - 1));
      const delay = Math.floor(this.#random() * ceiling);
      if (this.#now() + delay >= deadline) {
        throw new PublishError(
          AwsErrorCodes.publishFailed,
          `delivery not published after ${attempts} attempts (last error "${lastErrorCode}")`,
          { attempts, lastErrorCode, cause: lastCause },
        );
      }
      this.#logger?.warn('putevents attempt failed, retrying', {
        attempt: attempts,
        errorCode: lastErrorCode,
        delay,
      });
      await this.#sleep(delay);
    }
  }
}
