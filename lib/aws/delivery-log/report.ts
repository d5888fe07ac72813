import { performance } from 'node:perf_hooks';
import { SubscriberTimeoutError } from '../errors.js';
import { currentInvocation, inInvocation } from '../invocation.js';
import { errorCode } from '../rules.js';
import type { LoggerLike } from '../types.js';
import type { DeliveryLog } from './delivery-log.js';

/** Options of {@link withDeliveryReport}. */
export interface DeliveryReportOptions {
  /** The subscriber's name in the log (its function name fits). */
  name: string;
  /** Where the outcome goes: a {@link DeliveryLog} on the delivery log table. */
  deliveryLog: Pick<DeliveryLog, 'recordSubscriber'>;
  /** Where a failed report is logged (its error code and the delivery id only). */
  logger?: Pick<LoggerLike, 'warn'> | undefined;
}

/**
 * How long before the function's timeout a handler still running is reported `error` (SubscriberTimeoutError):
 * enough for the report's one DynamoDB write. A fifth of the time left when that is shorter (a function of 1 s).
 */
const TIMEOUT_REPORT_MARGIN_MS = 500;

/** The part of an EventBridge event the report reads: `detail.delivery`, `detail.source` and `detail.hook`. */
export interface ReportableEvent {
  detail?: unknown;
}

function detailOf(event: unknown): { delivery?: unknown; source?: unknown; hook?: unknown } | undefined {
  const detail = (event as ReportableEvent | undefined)?.detail;
  if (typeof detail === 'string') {
    try {
      return JSON.parse(detail) as { delivery?: unknown; source?: unknown; hook?: unknown };
    } catch {
      return undefined;
    }
  }
  return typeof detail === 'object' && detail !== null ? detail : undefined;
}

function errorSummary(error: unknown): { name: string; message?: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      name:
        error.constructor?.name && error.constructor.name !== 'Object' ? error.constructor.name : error.name,
      message: error.message,
      ...(typeof code === 'string' ? { code } : {}),
    };
  }
  return { name: typeof error };
}

/**
 * Wraps a subscriber's EventBridge handler so it reports its outcome to the delivery log: the time it took,
 * `ok` or `error` (the error's class name and its message cut at 300 characters; never the event or payload).
 * The handler's own error is rethrown as it was, so EventBridge still retries; a failed report is logged and
 * never fails the handler. An event without `detail.delivery` runs unreported.
 *
 * @example
 * ```ts
 * const log = new DeliveryLog({ client: new DynamoDBClient({}), tableName: process.env.DELIVERIES_TABLE! });
 * const receive = createSubscriber({ events, logger, s3 });
 * export const handler = withDeliveryReport(receive, { name: 'notify-chat', deliveryLog: log, logger });
 * ```
 */
export function withDeliveryReport<A extends [unknown, ...unknown[]], R>(
  handler: (...args: A) => R | Promise<R>,
  options: DeliveryReportOptions,
): (...args: A) => Promise<R> {
  if (typeof handler !== 'function') throw new TypeError('"handler" must be a function');
  const { name, deliveryLog, logger } = options ?? ({} as DeliveryReportOptions);
  if (typeof name !== 'string' || name === '' || name.length > 128) {
    throw new TypeError('"name" must be a name of 1 to 128 characters');
  }
  if (typeof deliveryLog?.recordSubscriber !== 'function') {
    throw new TypeError('"deliveryLog" must have a "recordSubscriber" function');
  }

  async function report(
    detail: { delivery?: unknown; source?: unknown; hook?: unknown } | undefined,
    outcome: 'ok' | 'error',
    started: number,
    error?: unknown,
  ): Promise<void> {
    const delivery = detail?.delivery;
    if (typeof delivery !== 'string') return;
    try {
      await deliveryLog.recordSubscriber(delivery, {
        subscriber: name,
        outcome,
        durationMs: performance.now() - started,
        ...forgeWait(),
        ...(outcome === 'error' ? { error: errorSummary(error) } : {}),
        ...(typeof detail?.source === 'string' ? { source: detail.source } : {}),
        ...(typeof detail?.hook === 'string' ? { hook: detail.hook } : {}),
      });
    } catch (reportError) {
      try {
        logger?.warn('delivery report failed', {
          code: errorCode(reportError),
          delivery: delivery.slice(0, 256),
        });
      } catch {
        // A throwing logger must not fail the subscriber either.
      }
    }
  }

  return inInvocation(async (...args: A): Promise<R> => {
    const detail = detailOf(args[0]);
    const started = performance.now();
    let result: R;
    const deadline = currentInvocation()?.deadline;
    let timer: NodeJS.Timeout | undefined;
    try {
      const running = Promise.resolve(handler(...args));
      // No deadline, or one past what a timer can wait (2^31 - 1 ms; Lambda's longest is 15 minutes): no race.
      if (deadline === undefined || deadline - Date.now() > 2_147_483_647) {
        result = await running;
      } else {
        // A handler still running at the timeout would leave no report: Lambda ends it before it could write one.
        const margin = Math.min(TIMEOUT_REPORT_MARGIN_MS, Math.floor((deadline - Date.now()) / 5));
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new SubscriberTimeoutError(margin)),
            deadline - margin - Date.now(),
          );
        });
        result = await Promise.race([running, timeout]);
      }
    } catch (error) {
      await report(detail, 'error', started, error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    await report(detail, 'ok', started);
    return result;
  });
}

/** How long the invocation's forge API calls waited, when they did. */
function forgeWait(): { forgeWaitMs?: number } {
  const waited = currentInvocation()?.forgeWaitMs ?? 0;
  return waited > 0 ? { forgeWaitMs: waited } : {};
}
