import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { logLineMetric } from '../metrics.js';
import type { PublisherLike } from '../publish/index.js';
import { errorCode, positive } from '../rules.js';
import type { LoggerLike } from '../types.js';
import type { DeliveryQueue, QueuedDelivery } from './queue.js';

/** Options of {@link redriveQueue}. Defaults live in {@link AwsDefaults}. */
export interface RedriveOptions {
  /** The queue the ingest writes to. */
  queue: DeliveryQueue;
  /** The same publisher the ingest uses: a queued delivery goes out as the same entry. */
  publisher: PublisherLike;
  logger?: LoggerLike | undefined;
  /** How long a queued delivery is retried before it is dead-lettered, in seconds. Default 86400 (24 h). */
  maxAgeSeconds?: number | undefined;
  /** How long a run holds a record it publishes, in seconds. Default 60 (keep it above the publish budget). */
  leaseSeconds?: number | undefined;
  /** Most records one run takes. Default 100. */
  batchSize?: number | undefined;
  /** Records published at once. Default 4. */
  concurrency?: number | undefined;
  /** First wait after a failed retry, in seconds, doubled per attempt. Default 30. */
  retryBaseSeconds?: number | undefined;
  /** Longest wait between retries, in seconds. Default 900. */
  retryMaxSeconds?: number | undefined;
  /** CloudWatch namespace of the dead-letter metric. Default `forgebridge`. */
  metricNamespace?: string | undefined;
  /** The Lambda's remaining time; no record is taken with less than `reserveMs` left. */
  remainingMs?: (() => number) | undefined;
  /** Time a record needs (a publish budget and its writes), in ms. Default 5000. */
  reserveMs?: number | undefined;
}

/** What one {@link redriveQueue} run did. */
export interface RedriveReport {
  /** Due records listed. */
  due: number;
  /** Published and removed from the queue. */
  published: number;
  /** Failed again, due later. */
  retried: number;
  /** Given up after the maximum age. */
  dead: number;
  /** Not tried: taken by another run, held by an ingest attempt right now, the bus still down, or no time left. */
  skipped: number;
  /** Not published: a later attempt (the forge's redelivery) had put the delivery on the bus; record removed. */
  alreadyPublished: number;
}

/** Errors that say the bus (or S3) is down right now: trying the rest of the batch would only wait out budgets. */
const OUTAGE_CODES = new Set<string>([AwsErrorCodes.publishFailed, AwsErrorCodes.claimCheckFailed]);

/**
 * One run of the retrier: lists the due queue records (one Query), leases each with a conditional write so
 * that concurrent runs never publish the same one, reads the delivery's dedupe record (a record a later attempt
 * already published is removed unpublished; one without a dedupe record gets a completed one once published),
 * publishes it with the ingest's publisher, deletes the record
 * on success, and on failure sets its next due time (exponential backoff) or, once it is older than
 * `maxAgeSeconds`, dead-letters it with an error log line carrying the `DeadLetteredDeliveries` metric
 * (CloudWatch embedded metric format, {@link logLineMetric}). A failed publish that looks like an outage ends the run early.
 */
export async function redriveQueue(options: RedriveOptions): Promise<RedriveReport> {
  const { queue, publisher, logger } = options;
  if (queue === undefined) throw new TypeError('"queue" is required');
  if (typeof publisher?.publish !== 'function')
    throw new TypeError('"publisher" must have a "publish" function');
  const maxAgeMs = positive('maxAgeSeconds', options.maxAgeSeconds ?? AwsDefaults.queueMaxAgeSeconds) * 1000;
  const leaseMs = positive('leaseSeconds', options.leaseSeconds ?? AwsDefaults.queueLeaseSeconds) * 1000;
  const batchSize = positive('batchSize', options.batchSize ?? AwsDefaults.queueBatchSize);
  const concurrency = positive('concurrency', options.concurrency ?? AwsDefaults.queueConcurrency);
  const baseMs =
    positive('retryBaseSeconds', options.retryBaseSeconds ?? AwsDefaults.queueRetryBaseSeconds) * 1000;
  const maxMs =
    positive('retryMaxSeconds', options.retryMaxSeconds ?? AwsDefaults.queueRetryMaxSeconds) * 1000;
  const reserveMs = options.reserveMs ?? 5_000;
  const namespace = options.metricNamespace ?? AwsDefaults.metricNamespace;

  const keys = await queue.due(Math.floor(batchSize));
  const report: RedriveReport = {
    due: keys.length,
    published: 0,
    retried: 0,
    dead: 0,
    skipped: 0,
    alreadyPublished: 0,
  };
  let outage = false;

  const settle = async (record: QueuedDelivery, failure: unknown): Promise<void> => {
    const fields = { delivery: record.delivery, event: record.event, attempts: record.attempts + 1 };
    const reason = errorCode(failure);
    if (OUTAGE_CODES.has(reason)) outage = true;
    if (Date.now() - record.queuedAt >= maxAgeMs) {
      await queue.bury(record, failure);
      report.dead += 1;
      logger?.error('queued delivery dead-lettered', {
        ...fields,
        reason,
        queuedAt: new Date(record.queuedAt).toISOString(),
        ...logLineMetric('deadLetteredDeliveries', namespace),
      });
      return;
    }
    const delayMs = Math.min(maxMs, baseMs * 2 ** record.attempts);
    await queue.retryLater(record, failure, delayMs);
    report.retried += 1;
    logger?.warn('queued delivery not published, retrying later', { ...fields, errorCode: reason, delayMs });
  };

  const one = async (key: string): Promise<void> => {
    if (outage || (options.remainingMs !== undefined && options.remainingMs() < reserveMs)) {
      report.skipped += 1;
      return;
    }
    const record = await queue.lease(key, leaseMs);
    if (record === undefined) {
      report.skipped += 1;
      return;
    }
    // A queue write whose reply was lost was answered 503, so the forge may have redelivered it since: the dedupe
    // record tells whether that attempt put it on the bus.
    const state = await queue.deliveryState(record);
    if (state === 'in-progress') {
      // An ingest attempt holds it now; the lease runs out and a later run looks again.
      report.skipped += 1;
      return;
    }
    if (state === 'published') {
      report.alreadyPublished += 1;
      logger?.info('queued delivery already published by a later attempt', { delivery: record.delivery });
      try {
        await queue.remove(record);
      } catch (error) {
        logger?.error('queue record delete failed', {
          delivery: record.delivery,
          errorCode: errorCode(error),
        });
      }
      return;
    }
    try {
      // Only what is left: a delivery the bus took before the stream failed is written to the stream alone.
      await publisher.publish(
        await queue.load(record),
        record.outputs === undefined ? undefined : { outputs: record.outputs },
      );
    } catch (failure) {
      try {
        await settle(record, failure);
      } catch (error) {
        // The lease runs out and the record is due again: nothing is lost.
        logger?.error('queue record update failed', {
          delivery: record.delivery,
          errorCode: errorCode(error),
        });
      }
      return;
    }
    report.published += 1;
    logger?.info('queued delivery published', {
      delivery: record.delivery,
      event: record.event,
      attempts: record.attempts + 1,
      queuedForMs: Date.now() - record.queuedAt,
    });
    if (state === 'none') {
      try {
        await queue.markPublished(record);
      } catch (error) {
        // A redelivery before the record's TTL may then publish it again: the at-least-once edge, logged.
        logger?.error('dedupe record write failed', {
          delivery: record.delivery,
          errorCode: errorCode(error),
        });
      }
    }
    try {
      await queue.remove(record);
    } catch (error) {
      // It is on the bus; once the lease runs out it is published again (subscribers dedupe on detail.delivery).
      logger?.error('queue record delete failed', { delivery: record.delivery, errorCode: errorCode(error) });
    }
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      try {
        await one(key);
      } catch (error) {
        report.skipped += 1;
        logger?.error('queue record lease failed', { errorCode: errorCode(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.floor(concurrency), keys.length) }, worker));
  if (report.due > 0) logger?.info('queue redriven', { ...report });
  return report;
}
