/**
 * One reconciliation run: for each source that names its hook, list the forge's recent deliveries, keep each
 * delivery's latest attempt, and for those that failed at the forge and that our side never took (no completed
 * dedupe record under the same key as the ingest's), ask the forge to deliver them again, so they come back
 * through the verifying ingest. Bounded per run, a backoff per delivery, a stop on a rate limit, and a forge API
 * that is down ends the source (and the run) normally with the error logged.
 */
import { AwsDefaults } from '../constants.js';
import type { DeliveryLog } from '../delivery-log/delivery-log.js';
import { ForgeApiError, ForgeApiErrorCodes } from '../errors.js';
import { logLineMetric } from '../metrics.js';
import type { DedupeRecords } from '../queue/index.js';
import { errorCode } from '../rules.js';
import type { LoggerLike } from '../types.js';
import type { AttemptSource, ReconcileAttempts } from './attempts.js';
import type { DeliveryLogApi, ForgeDelivery, ReconcileReport } from './types.js';

/** One source to reconcile: its name (part of the dedupe key), forge preset and delivery-log API. */
export interface ReconcileSource {
  name: string;
  forge: string;
  /**
   * The id of the hook whose log is read, where the forge's delivery ids are the event's and not the hook's
   * (GitHub's repository and organization hooks): part of the dedupe key, as the ingest reads it from
   * `X-GitHub-Hook-ID`. `undefined` where the id is already one hook's (GitLab) or not configured (an App's hook).
   */
  hook?: string | undefined;
  api: DeliveryLogApi;
  /** How far back the forge keeps deliveries, in seconds (GitHub 3 days, GitLab 7). */
  windowSeconds: number;
}

/** The reconciler's own items of a source's deliveries: per hook where the id is the event's. */
function owner(source: ReconcileSource): AttemptSource {
  return source.hook === undefined ? source.name : { name: source.name, hook: source.hook };
}

/** Publishes a delivery too large for the ingest from its API payload; resolves whether it went out now. */
export type RecoverDelivery = (
  source: ReconcileSource,
  attempt: ForgeDelivery,
) => Promise<'published' | 'duplicate'>;

/** Options of {@link reconcile}. */
export interface ReconcileOptions {
  sources: readonly ReconcileSource[];
  /** The ingest's dedupe records: a completed one means the delivery is ours. */
  dedupe: Pick<DedupeRecords, 'state'>;
  attempts: Pick<ReconcileAttempts, 'claim' | 'giveUp' | 'markLate'>;
  /** Where `late` and `redelivered` rows go, when the delivery log is on. */
  deliveryLog?: Pick<DeliveryLog, 'record'> | undefined;
  /** Recovery of deliveries the ingest cannot take (the forge recorded 413); without it they are skipped. */
  recover?: RecoverDelivery | undefined;
  logger?: LoggerLike | undefined;
  /** Most redeliveries (and recoveries) per run. Default 100. */
  maxRedeliveries?: number | undefined;
  /** Most pages listed per source per run. Default 10 (1,000 attempts on GitHub). */
  maxPages?: number | undefined;
  /** Wait before giving up is allowed: the longest backoff, in seconds. Default 21600 (6 h). */
  maxBackoffSeconds?: number | undefined;
  /** Report what would be done; redeliver, publish and write nothing. */
  dryRun?: boolean | undefined;
  /** CloudWatch namespace of the give-up metric. Default `forgebridge`. */
  metricNamespace?: string | undefined;
  now?: (() => number) | undefined;
  /** The Lambda's remaining time in ms: no delivery is started with less than `reserveMs` left. */
  remainingMs?: (() => number) | undefined;
  /** Time one delivery may take (its API calls and writes), in ms. Default 15000. */
  reserveMs?: number | undefined;
}

/** The status a forge records for a request our side answered 413 (too large for Lambda or the gateway). */
const TOO_LARGE = 413;

function ok(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Runs one reconciliation over every source and returns its report, also logged as one line. */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const { dedupe, attempts, deliveryLog, recover, logger } = options;
  const now = options.now ?? Date.now;
  const maxRedeliveries = options.maxRedeliveries ?? 100;
  const maxPages = options.maxPages ?? 10;
  const maxBackoffMs = (options.maxBackoffSeconds ?? 6 * 60 * 60) * 1000;
  const dryRun = options.dryRun === true;
  const report: ReconcileReport = {
    sources: 0,
    listed: 0,
    failed: 0,
    alreadyOurs: 0,
    late: 0,
    redelivered: 0,
    recovered: 0,
    skipped: 0,
    gaveUp: 0,
    errors: 0,
    rateLimited: false,
    dryRun,
    bySource: {},
  };
  let budget = maxRedeliveries;

  const logRow = async (
    source: ReconcileSource,
    attempt: ForgeDelivery,
    outcome: 'late' | 'redelivered',
    reason: string,
  ) => {
    if (deliveryLog === undefined || dryRun) return;
    await deliveryLog.record({
      deliveryId: attempt.deliveryId,
      source: source.name,
      hook: source.hook,
      forge: source.forge,
      event: attempt.event,
      action: attempt.action,
      nativeEvent: attempt.event,
      verdict: 'forge_api',
      httpStatus:
        outcome === 'redelivered'
          ? 202
          : attempt.statusCode >= 100 && attempt.statusCode <= 599
            ? attempt.statusCode
            : 504,
      outcome,
      reason,
    });
  };

  /**
   * One failed delivery of `source`; `keyed` is the same source with the hook the ingest keys its deliveries with
   * (learned from the forge where the configuration does not name it), the reconciler's own items staying
   * under `source`.
   */
  const one = async (
    configured: ReconcileSource,
    source: ReconcileSource,
    attempt: ForgeDelivery,
    firstAt: number,
  ): Promise<void> => {
    const key = { id: attempt.deliveryId, source: source.name, hook: source.hook };
    const state = await dedupe.state(key);
    const tooLarge = attempt.statusCode === TOO_LARGE;
    if (state === 'published' || state === 'queued') {
      report.alreadyOurs += 1;
      // A 413 the ingest never saw was recovered over the API: not late.
      if (!dryRun && !tooLarge && (await attempts.markLate(owner(configured), attempt.deliveryId, now()))) {
        report.late += 1;
        logger?.info('delivery taken late', {
          delivery: attempt.deliveryId,
          source: source.name,
          forgeStatus: attempt.statusCode,
        });
        await logRow(
          source,
          attempt,
          'late',
          `the forge recorded ${attempt.statusCode === 0 ? 'no answer (timed out)' : attempt.statusCode} but it was taken: not redelivered`,
        );
      }
      return;
    }
    const outOfTime =
      options.remainingMs !== undefined && options.remainingMs() < (options.reserveMs ?? 15_000);
    if (state === 'in-progress' || budget <= 0 || outOfTime || (tooLarge && recover === undefined)) {
      report.skipped += 1;
      return;
    }
    if (dryRun) {
      budget -= 1;
      if (tooLarge) report.recovered += 1;
      else report.redelivered += 1;
      return;
    }
    const claim = await attempts.claim(owner(configured), attempt.deliveryId, now());
    if (!claim.claimed) {
      report.skipped += 1;
      return;
    }
    if (claim.attempts > 1 && now() - firstAt > source.windowSeconds * 1000 - maxBackoffMs) {
      if (await attempts.giveUp(owner(configured), attempt.deliveryId, now())) {
        report.gaveUp += 1;
        const namespace = options.metricNamespace ?? AwsDefaults.metricNamespace;
        logger?.error('delivery given up', {
          delivery: attempt.deliveryId,
          source: source.name,
          attempts: claim.attempts - 1,
          ...logLineMetric('reconcileGaveUpDeliveries', namespace, now()),
        });
      }
      return;
    }
    budget -= 1;
    if (tooLarge && recover !== undefined) {
      if ((await recover(source, attempt)) === 'published') report.recovered += 1;
      else report.alreadyOurs += 1;
      return;
    }
    await source.api.redeliver(attempt);
    report.redelivered += 1;
    logger?.info('delivery redelivered', {
      delivery: attempt.deliveryId,
      source: source.name,
      attempt: claim.attempts,
    });
    await logRow(source, attempt, 'redelivered', 'redelivered by reconciler');
  };

  for (const source of options.sources) {
    if (report.rateLimited) break;
    report.sources += 1;
    const before = {
      failed: report.failed,
      ours: report.alreadyOurs,
      redelivered: report.redelivered,
      recovered: report.recovered,
    };
    const since = now() - source.windowSeconds * 1000;
    // The latest attempt of each delivery and when its first listed attempt was; pages come newest first.
    const latest = new Map<string, ForgeDelivery>();
    const first = new Map<string, number>();
    let pending: ForgeDelivery[] = [];
    try {
      try {
        for await (const page of source.api.list(since, maxPages)) {
          for (const attempt of page) {
            if (attempt.at < since) continue;
            report.listed += 1;
            const seen = latest.get(attempt.deliveryId);
            if (
              seen === undefined ||
              attempt.at > seen.at ||
              (attempt.at === seen.at && attempt.attemptId > seen.attemptId)
            ) {
              latest.set(attempt.deliveryId, attempt);
            }
            first.set(attempt.deliveryId, Math.min(first.get(attempt.deliveryId) ?? attempt.at, attempt.at));
          }
        }
        pending = [...latest.values()]
          .filter((attempt) => !ok(attempt.statusCode))
          .sort((a, b) => a.at - b.at);
        report.failed += pending.length;
        let keyed = source;
        if (source.hook === undefined && source.api.hookOf !== undefined && pending.length > 0) {
          const hook = await source.api.hookOf(pending[0] as ForgeDelivery);
          if (hook !== undefined) keyed = { ...source, hook };
        }
        while (pending.length > 0) {
          const attempt = pending[0] as ForgeDelivery;
          try {
            await one(source, keyed, attempt, first.get(attempt.deliveryId) ?? attempt.at);
          } catch (error) {
            // One delivery the forge refuses to redeliver (gone, 422) does not stop the others.
            if (!(error instanceof ForgeApiError) || error.code !== ForgeApiErrorCodes.refused) throw error;
            report.errors += 1;
            logger?.error('redelivery refused', {
              delivery: attempt.deliveryId,
              source: source.name,
              errorCode: error.code,
              error: error.message,
            });
          }
          pending.shift();
        }
      } catch (error) {
        report.skipped += pending.length;
        if (error instanceof ForgeApiError && error.code === ForgeApiErrorCodes.rateLimited) {
          report.rateLimited = true;
          logger?.warn('forge api rate limited, resuming next run', {
            source: source.name,
            ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
          });
          break;
        }
        report.errors += 1;
        logger?.error('reconcile of a source failed', {
          source: source.name,
          errorCode: errorCode(error),
          ...(error instanceof ForgeApiError ? { error: error.message } : {}),
        });
      }
    } finally {
      // This source's share, counted also when a rate limit ends the run here.
      report.bySource[source.name] = {
        failedAtForge: report.failed - before.failed - (report.alreadyOurs - before.ours),
        redelivered: report.redelivered - before.redelivered,
        recovered: report.recovered - before.recovered,
      };
    }
  }
  logger?.info('reconcile run', { ...report });
  return report;
}
