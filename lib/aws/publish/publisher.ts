import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { type OnBus, PublishError } from '../errors.js';
import { positive } from '../rules.js';
import type { Delivery, DeliveryEntry, LoggerLike, PayloadRef } from '../types.js';
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
import { buildEventEntry, eventEntrySize, refusedForSize } from './event-entry.js';

/** The publish operation the ingest, the retrier and the reconciler need ({@link EventPublisher} fits). */
export interface PublisherLike {
  /**
   * `options.outputs` names the outputs still to write (a queue record's), for a publisher with several
   * (`OutputsPublisher`: the bus and the ordered stream); a publisher with one output ignores it.
   */
  publish(delivery: Delivery, options?: { outputs?: readonly string[] | undefined }): Promise<unknown>;
}

/** Options of {@link EventPublisher}. Defaults live in {@link AwsDefaults}. */
export interface EventPublisherOptions extends PublishAttemptOptions {
  /** The EventBridge client (construct it with `maxAttempts: 1`: the publisher does its own retries). */
  eventBridge: EventBridgeClient;
  /** Target bus name or ARN. Default: the account's default bus. */
  eventBusName?: string | undefined;
  /** EventBridge `Source`. Default `'forge.webhooks'`. */
  source?: string | undefined;
  /** Largest entry sent as-is, in bytes. Default 983040 (960 KiB, within EventBridge's 1 MB). */
  maxEntryBytes?: number | undefined;
  /**
   * The trace header each entry carries (`TraceHeader`), read when it is published. Default: the invocation's
   * `_X_AMZN_TRACE_ID`, which Lambda sets under active tracing; none without it.
   */
  traceHeader?: (() => string | undefined) | undefined;
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

/** One PutEvents attempt: the event id, or why not and what that says about the bus. */
type Attempt =
  | { accepted: true; eventId: string | undefined }
  | {
      accepted: false;
      errorCode: string;
      cause: unknown;
      /** `'entry'` when EventBridge answered with a failed entry, `'request'` when the call threw. */
      kind: 'entry' | 'request';
      permanent: boolean;
      /** The bus refused the entry for its size (see {@link refusedForSize}): a claim check may take its place. */
      tooLarge: boolean;
      /** The bus is known not to hold the entry after this attempt. */
      notOnBus: boolean;
    };

/** What {@link EventPublisher} `#send` ended with: the event id, or a refusal of the entry for its size. */
type Sent =
  | { tooLarge: false; eventId: string | undefined; attempts: number }
  | { tooLarge: true; attempts: number; lastErrorCode: string; cause: unknown; onBus: OnBus };

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
  readonly #traceHeader: () => string | undefined;

  constructor(options: EventPublisherOptions) {
    if (options?.eventBridge === undefined) throw new TypeError('"eventBridge" is required');
    if (options.source === '') throw new TypeError('"source" must not be empty');
    this.#eventBridge = options.eventBridge;
    this.#eventBusName = options.eventBusName || undefined;
    this.#source = options.source ?? AwsDefaults.source;
    this.#maxEntryBytes = positive('maxEntryBytes', options.maxEntryBytes ?? AwsDefaults.maxEntryBytes);
    ({
      claimCheck: this.#claimCheck,
      budgetMs: this.#budgetMs,
      baseDelayMs: this.#baseDelayMs,
      maxDelayMs: this.#maxDelayMs,
    } = publishAttempts(options));
    this.#logger = options.logger;
    this.#traceHeader = options.traceHeader ?? (() => process.env._X_AMZN_TRACE_ID);
  }

  /**
   * Puts the delivery on the bus. Resolves once EventBridge accepted the entry; rejects with a
   * {@link PublishError} when it could not within the budget (codes `publish_failed`, `publish_rejected`,
   * `entry_too_large`, `claim_check_failed`), whose `onBus` says whether the entry may be on the bus anyway.
   * An entry over `maxEntryBytes`, or one the bus refuses for its size (its limit differs by region and was 256 KB
   * until 2026), goes through the claim check: the payload to S3, the entry with the routing fields and a
   * reference. It settles within the budget, or once the attempt under way at its end does: the first attempt
   * always starts, a retry only when the slowest attempt so far would end within the budget.
   */
  async publish(delivery: Delivery): Promise<PublishResult> {
    const deadline = Date.now() + this.#budgetMs;
    const entry = buildEventEntry(delivery, { source: this.#source, eventBusName: this.#eventBusName });
    const entryBytes = eventEntrySize(entry);
    if (entryBytes > this.#maxEntryBytes) {
      return this.#publishClaimChecked(delivery, deadline, {
        attempts: 0,
        onBus: 'no',
        overLimit: `entry of ${entryBytes} bytes exceeds "maxEntryBytes" (${this.#maxEntryBytes})`,
      });
    }
    const sent = await this.#send(this.#traced(entry), deadline, 'no');
    if (!sent.tooLarge) return { eventId: sent.eventId, attempts: sent.attempts, entryBytes };
    // Once per delivery: the sizes and the bus's error code, never the payload.
    this.#logger?.warn('eventbridge refused the entry for its size, publishing it through the claim check', {
      delivery: delivery.id,
      entryBytes,
      bodyBytes: delivery.rawBody.byteLength,
      maxEntryBytes: this.#maxEntryBytes,
      errorCode: sent.lastErrorCode,
    });
    return this.#publishClaimChecked(delivery, deadline, {
      attempts: sent.attempts,
      lastErrorCode: sent.lastErrorCode,
      onBus: sent.onBus,
      overLimit: `entry of ${entryBytes} bytes was refused by eventbridge for its size`,
    });
  }

  /** The entry with the invocation's trace header, when there is one EventBridge takes. */
  #traced(entry: DeliveryEntry): DeliveryEntry {
    const traceHeader = this.#traceHeader();
    // EventBridge takes a header of up to 500 characters; it does not count in the entry's size.
    if (typeof traceHeader === 'string' && traceHeader !== '' && traceHeader.length <= 500)
      entry.TraceHeader = traceHeader;
    return entry;
  }

  /**
   * Stores the payload and sends the claim-check entry in its place. `before` is what the delivery's own entry
   * got: why it could not go as it is, and the attempts, last error and `onBus` of its sends (if any).
   */
  async #publishClaimChecked(
    delivery: Delivery,
    deadline: number,
    before: { overLimit: string; attempts: number; lastErrorCode?: string | undefined; onBus: OnBus },
  ): Promise<PublishResult> {
    const { attempts, lastErrorCode, onBus } = before;
    const payloadRef = await storeClaimCheck(this.#claimCheck, delivery, deadline, before);
    const entry = buildEventEntry(delivery, {
      source: this.#source,
      eventBusName: this.#eventBusName,
      payloadRef,
    });
    const entryBytes = eventEntrySize(entry);
    if (entryBytes > this.#maxEntryBytes) {
      throw new PublishError(
        AwsErrorCodes.entryTooLarge,
        `entry of ${entryBytes} bytes exceeds "maxEntryBytes" (${this.#maxEntryBytes}) even with a claim check`,
        { attempts, lastErrorCode, onBus },
      );
    }
    const sent = await this.#send(this.#traced(entry), deadline, onBus, attempts);
    if (sent.tooLarge) {
      throw new PublishError(
        AwsErrorCodes.entryTooLarge,
        `claim-check entry of ${entryBytes} bytes was refused by eventbridge for its size`,
        { attempts: sent.attempts, lastErrorCode: sent.lastErrorCode, cause: sent.cause, onBus: sent.onBus },
      );
    }
    return { eventId: sent.eventId, attempts: sent.attempts, payloadRef, entryBytes };
  }

  async #attempt(entry: DeliveryEntry): Promise<Attempt> {
    try {
      // No abort signal: cutting off a request the bus may be accepting is what makes a publish ambiguous.
      const output = await this.#eventBridge.send(new PutEventsCommand({ Entries: [entry] }));
      const result = output.Entries?.[0];
      if ((output.FailedEntryCount ?? 0) === 0 && result !== undefined && result.ErrorCode === undefined) {
        return { accepted: true, eventId: result.EventId };
      }
      const errorCode = result?.ErrorCode ?? 'UnknownEntryError';
      return {
        accepted: false,
        errorCode,
        cause: undefined,
        kind: 'entry',
        permanent: PERMANENT_ENTRY_ERRORS.has(errorCode),
        tooLarge:
          result?.ErrorCode !== undefined &&
          refusedForSize({ code: errorCode, message: result.ErrorMessage }),
        // A reply without the entry's own result does not say whether the bus took it.
        notOnBus: result?.ErrorCode !== undefined,
      };
    } catch (error) {
      const errorCode = errorName(error);
      return {
        accepted: false,
        errorCode,
        cause: error,
        kind: 'request',
        permanent: PERMANENT_EXCEPTIONS.has(errorCode),
        tooLarge: refusedForSize({
          code: errorCode,
          message: error instanceof Error ? error.message : undefined,
          status: (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode,
        }),
        notOnBus: provesNotWritten(error),
      };
    }
  }

  /**
   * Sends one entry until the bus takes it, refuses it for its size (resolved, for the caller to claim-check), or
   * for good, or the budget ends (both thrown). `onBus` and `attempts` carry on from an earlier send of the
   * delivery.
   */
  async #send(entry: DeliveryEntry, deadline: number, onBusBefore: OnBus, attemptsBefore = 0): Promise<Sent> {
    let attempts = attemptsBefore;
    let slowestMs = 0;
    let onBus = onBusBefore;
    for (;;) {
      attempts += 1;
      const started = Date.now();
      const attempt = await this.#attempt(entry);
      if (attempt.accepted) return { tooLarge: false, eventId: attempt.eventId, attempts };
      slowestMs = Math.max(slowestMs, Date.now() - started);
      if (!attempt.notOnBus) onBus = 'unknown';
      const { errorCode: lastErrorCode, cause } = attempt;
      if (attempt.tooLarge) return { tooLarge: true, attempts, lastErrorCode, cause, onBus };
      if (attempt.permanent) {
        throw new PublishError(
          AwsErrorCodes.publishRejected,
          attempt.kind === 'entry'
            ? `eventbridge rejected the entry with "${lastErrorCode}"`
            : `eventbridge refused the request with "${lastErrorCode}"`,
          { attempts, lastErrorCode, cause, onBus },
        );
      }
      const delay = backoffDelay(attempts - attemptsBefore, this.#baseDelayMs, this.#maxDelayMs);
      if (Date.now() + delay + slowestMs > deadline) {
        throw new PublishError(
          AwsErrorCodes.publishFailed,
          `delivery not published after ${attempts} attempts (last error "${lastErrorCode}")`,
          { attempts, lastErrorCode, cause, onBus },
        );
      }
      this.#logger?.warn('putevents attempt failed, retrying', {
        attempt: attempts,
        errorCode: lastErrorCode,
        delay,
      });
      await sleep(delay);
    }
  }
}
