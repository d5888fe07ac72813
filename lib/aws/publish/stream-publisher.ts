import { type KinesisClient, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { type OnBus, PublishError } from '../errors.js';
import { positive } from '../rules.js';
import type { Delivery, LoggerLike, PayloadRef } from '../types.js';
import {
  backoffDelay,
  errorName,
  type PublishAttemptOptions,
  provesNotWritten,
  publishAttempts,
  sleep,
  storeClaimCheck,
} from './attempts.js';
import type { ClaimCheck } from './claim-check.js';
import { buildEventEntry } from './event-entry.js';
import {
  type OrderBy,
  orderKeyOf,
  partitionKeyOf,
  StreamLimits,
  streamEventOf,
  streamRecordData,
  streamRecordSize,
} from './stream-record.js';

/** Options of {@link StreamPublisher}: the claim check (the bus's, shared) and the retries as the bus's. */
export interface StreamPublisherOptions extends PublishAttemptOptions {
  /** The Kinesis client (construct it with `maxAttempts: 1`: the publisher does its own retries). */
  kinesis: KinesisClient;
  /** The ordered stream's name or ARN. */
  streamName: string;
  /** The events' `source`, as on the bus. Default `'forge.webhooks'`. */
  source?: string | undefined;
  /** What the stream keeps in order: each resource's deliveries (default), each repository's, or a path's key. */
  orderBy?: OrderBy | undefined;
  /** Largest record sent as it is, in bytes (data and partition key). Default Kinesis's 1 MiB. */
  maxRecordBytes?: number | undefined;
}

/** What {@link StreamPublisher.publish} did. */
export interface StreamPublishResult {
  /** The record's sequence number in its shard. */
  sequenceNumber: string | undefined;
  /** The shard the record went to. */
  shardId: string | undefined;
  /** The partition key it was written under. */
  partitionKey: string;
  /** PutRecord attempts made. */
  attempts: number;
  /** Set when the payload went to S3 (claim check). */
  payloadRef?: PayloadRef;
  /** Size of the record as Kinesis counts it. */
  recordBytes: number;
}

/**
 * Errors Kinesis answers that retrying will not change: a stream that does not exist or is not active, a record
 * or key it refuses, a role or key that denies. Throttling (`ProvisionedThroughputExceededException`,
 * `KMSThrottlingException`), 5xx and timeouts are retried within the budget.
 */
const PERMANENT = new Set([
  'ResourceNotFoundException',
  'ResourceInUseException',
  'InvalidArgumentException',
  'ValidationException',
  'AccessDeniedException',
  'KMSAccessDeniedException',
  'KMSDisabledException',
  'KMSInvalidStateException',
  'KMSNotFoundException',
  'KMSOptInRequired',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
]);

/**
 * Writes each accepted delivery to the ordered stream beside the bus: one PutRecord, partition key
 * `<source>|<resource key>` ({@link partitionKeyOf}), the record the same EventBridge-shaped event the bus's rules
 * get ({@link streamEventOf}), through the claim check when it is over the record limit. Records of one key land in
 * one shard in the order their writes succeeded, which is what an ordered subscriber then keeps.
 */
export class StreamPublisher {
  readonly #kinesis: KinesisClient;
  readonly #streamName: string;
  readonly #source: string;
  readonly #orderBy: OrderBy;
  readonly #maxRecordBytes: number;
  readonly #claimCheck: ClaimCheck | undefined;
  readonly #budgetMs: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #logger: LoggerLike | undefined;

  constructor(options: StreamPublisherOptions) {
    if (options?.kinesis === undefined) throw new TypeError('"kinesis" is required');
    if (typeof options.streamName !== 'string' || options.streamName === '')
      throw new TypeError('"streamName" must be a non-empty string');
    if (options.source === '') throw new TypeError('"source" must not be empty');
    this.#kinesis = options.kinesis;
    this.#streamName = options.streamName;
    this.#source = options.source ?? AwsDefaults.source;
    this.#orderBy = options.orderBy ?? 'resource';
    const maxRecordBytes = positive('maxRecordBytes', options.maxRecordBytes ?? StreamLimits.recordBytes);
    if (maxRecordBytes > StreamLimits.recordBytes)
      throw new TypeError(
        `"maxRecordBytes" must be at most ${StreamLimits.recordBytes} (Kinesis's record limit)`,
      );
    this.#maxRecordBytes = maxRecordBytes;
    ({
      claimCheck: this.#claimCheck,
      budgetMs: this.#budgetMs,
      baseDelayMs: this.#baseDelayMs,
      maxDelayMs: this.#maxDelayMs,
    } = publishAttempts(options));
    this.#logger = options.logger;
  }

  /**
   * Writes the delivery to the stream. Resolves once Kinesis took the record; rejects with a {@link PublishError}
   * (`publish_failed` when the budget ran out, `publish_rejected` on a permanent refusal, `entry_too_large` or
   * `claim_check_failed` for a record over the limit) whose `onBus` says whether the record may be in the stream.
   */
  async publish(
    delivery: Delivery,
    options: { payloadRef?: PayloadRef | undefined } = {},
  ): Promise<StreamPublishResult> {
    const deadline = Date.now() + this.#budgetMs;
    const partitionKey = partitionKeyOf(delivery.source, orderKeyOf(delivery, this.#orderBy));
    const time = new Date();
    let payloadRef: PayloadRef | undefined;
    let data = streamRecordData(streamEventOf(buildEventEntry(delivery, { source: this.#source }), time));
    let recordBytes = streamRecordSize(data, partitionKey);
    if (recordBytes > this.#maxRecordBytes) {
      // The bus's claim check of this delivery, when it made one: the same object, not stored again.
      payloadRef =
        options.payloadRef ??
        (await storeClaimCheck(this.#claimCheck, delivery, deadline, {
          overLimit: `stream record of ${recordBytes} bytes exceeds "maxRecordBytes" (${this.#maxRecordBytes})`,
          onBus: 'no',
        }));
      data = streamRecordData(
        streamEventOf(buildEventEntry(delivery, { source: this.#source, payloadRef }), time),
      );
      recordBytes = streamRecordSize(data, partitionKey);
      if (recordBytes > this.#maxRecordBytes) {
        throw new PublishError(
          AwsErrorCodes.entryTooLarge,
          `stream record of ${recordBytes} bytes exceeds "maxRecordBytes" (${this.#maxRecordBytes}) even with a claim check`,
          { onBus: 'no' },
        );
      }
    }
    let attempts = 0;
    let slowestMs = 0;
    let onBus: OnBus = 'no';
    for (;;) {
      attempts += 1;
      const started = Date.now();
      try {
        const output = await this.#kinesis.send(
          new PutRecordCommand({ StreamName: this.#streamName, PartitionKey: partitionKey, Data: data }),
        );
        return {
          sequenceNumber: output.SequenceNumber,
          shardId: output.ShardId,
          partitionKey,
          attempts,
          ...(payloadRef === undefined ? {} : { payloadRef }),
          recordBytes,
        };
      } catch (error) {
        slowestMs = Math.max(slowestMs, Date.now() - started);
        if (!provesNotWritten(error)) onBus = 'unknown';
        const lastErrorCode = errorName(error);
        if (PERMANENT.has(lastErrorCode)) {
          throw new PublishError(
            AwsErrorCodes.publishRejected,
            `kinesis refused the record with "${lastErrorCode}"`,
            { attempts, lastErrorCode, cause: error, onBus },
          );
        }
        const delay = backoffDelay(attempts, this.#baseDelayMs, this.#maxDelayMs);
        if (Date.now() + delay + slowestMs > deadline) {
          throw new PublishError(
            AwsErrorCodes.publishFailed,
            `delivery not written to the stream after ${attempts} attempts (last error "${lastErrorCode}")`,
            { attempts, lastErrorCode, cause: error, onBus },
          );
        }
        this.#logger?.warn('putrecord attempt failed, retrying', {
          attempt: attempts,
          errorCode: lastErrorCode,
          delay,
        });
        await sleep(delay);
      }
    }
  }
}
