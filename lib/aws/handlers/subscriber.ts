import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { createEventHandler } from '../../webhooks/index.js';
import { DeliveryLog, withDeliveryReport } from '../delivery-log/index.js';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { inInvocation } from '../invocation.js';
import { ForgebridgeMetrics } from '../metrics.js';
import { type KinesisBatchRecord, streamEventOfRecord } from '../publish/index.js';
import { errorCode } from '../rules.js';
import { readDeliveryLogConfig } from '../stage/function-config.js';
import { createSubscriber, type ReplayMode } from '../subscriber/index.js';
import type { DeliveryDetail, LoggerLike } from '../types.js';
import { deliveryLogKey, loggerContext } from './observability.js';

/** The event handler a subscriber registers on: lib/webhooks' `createEventHandler()`. */
export type SubscriberEvents = ReturnType<typeof createEventHandler>;

/** What {@link SubscriberHandlerOptions.register} is given besides the event handler. */
export interface SubscriberContext {
  /** The function's logger (a Powertools `Logger` unless another was given). */
  logger: LoggerLike;
}

/** Options of {@link createSubscriberHandler}; every one has a default read from the environment. */
export interface SubscriberHandlerOptions {
  /**
   * Registers the subscriber's handlers: `(events) => events.on('issues.opened', ...)`. Without it every
   * delivery is resolved and logged (`delivery received`) only.
   */
  register?: ((events: SubscriberEvents, context: SubscriberContext) => void) | undefined;
  /** The subscriber's name in the delivery log. Default: the function's own (`AWS_LAMBDA_FUNCTION_NAME`), else `subscriber`. */
  name?: string | undefined;
  /**
   * A delivery `forgebridge replay --since` put on the whole bus again that this subscriber had reported `ok`:
   * skipped (`skip-ok`, the default: a `replay skipped` line, no handler runs) or handled again (`run`).
   */
  replays?: ReplayMode | undefined;
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** `s3` reads claim-checked payloads, `dynamodb` writes the delivery report; each built when not given. */
  clients?: { s3?: S3Client | undefined; dynamodb?: DynamoDBClient | undefined } | undefined;
  /** A Powertools `Logger` (Lambda context added) or any {@link LoggerLike}. Default: service `forgebridge-subscriber`. */
  logger?: LoggerLike | undefined;
  /**
   * Where the outcome is reported. Default: the delivery log of `FORGEBRIDGE_DELIVERIES_TABLE`, no report without
   * it; `false` turns it off.
   */
  deliveryLog?: Pick<DeliveryLog, 'recordSubscriber'> | false | undefined;
  /**
   * Where a reporting subscriber counts each event (`SubscriberOutcome`, `SubscriberDuration`: EMF lines on
   * stdout). Default: `ForgebridgeMetrics`; `false` turns it off. A subscriber that does not report prints none.
   */
  metrics?: Pick<ForgebridgeMetrics, 'subscriber'> | false | undefined;
}

/** The subscriber's Lambda handler: one EventBridge event of the bus in. */
export type SubscriberLambdaHandler = (
  event: EventBridgeEvent<string, DeliveryDetail>,
  context: Context,
) => Promise<void>;

/**
 * Builds a subscriber Lambda: it resolves each delivery from its EventBridge event (through the S3 claim check
 * when there is one), dispatches it to the handlers `register` added, logs `delivery received` once they
 * succeeded, and, when the delivery log's table is set, reports its outcome (ok / error and duration) there
 * under the function's name. A handler's error fails the invocation, so EventBridge retries it.
 *
 * @example
 * ```ts
 * export const handler = createSubscriberHandler({
 *   register: (events, { logger }) => events.on('push', ({ id }) => logger.info('pushed', { delivery: id })),
 * });
 * ```
 */
export function createSubscriberHandler(options: SubscriberHandlerOptions = {}): SubscriberLambdaHandler {
  const env = options.env ?? process.env;
  const logConfig = options.deliveryLog === undefined ? readDeliveryLogConfig(env) : undefined;
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-subscriber' });
  const s3 = options.clients?.s3 ?? withoutSdkCallLog(new S3Client(sdkTimeouts()));
  const events = createEventHandler();
  options.register?.(events, { logger });
  // The function's own name (`forgebridge-prod-onIssuesOpened`): the log's row names who received it.
  const name = options.name ?? env.AWS_LAMBDA_FUNCTION_NAME ?? 'subscriber';
  const receive = createSubscriber({ events, logger, s3, name, replays: options.replays });
  const chain = middy(async (event: EventBridgeEvent<string, DeliveryDetail>) => {
    await receive(event);
  });
  const context = loggerContext(logger);
  if (context !== undefined) chain.use(context);
  // Every line of the invocation carries the delivery id the ingest logged.
  const key = deliveryLogKey(logger, (event: EventBridgeEvent<string, DeliveryDetail>) =>
    deliveryIdOf(event?.detail),
  );
  if (key !== undefined) chain.use(key);
  const report =
    options.deliveryLog === false
      ? undefined
      : (options.deliveryLog ??
        (logConfig === undefined
          ? undefined
          : new DeliveryLog({
              client: options.clients?.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(sdkTimeouts())),
              tableName: logConfig.tableName,
              ttlSeconds: logConfig.ttlSeconds,
            })));
  // Each invocation's deadline bounds its forge API calls' waits (lib/aws/invocation.ts).
  if (report === undefined) return inInvocation(chain);
  const metrics =
    options.metrics === false ? undefined : (options.metrics ?? new ForgebridgeMetrics({ env }));
  return withDeliveryReport(metrics === undefined ? chain : timed(chain, name, metrics), {
    name,
    deliveryLog: report,
    logger,
  });
}

/** The handler, counting each event's outcome and duration under the function's name. */
function timed(
  handler: SubscriberLambdaHandler,
  name: string,
  metrics: Pick<ForgebridgeMetrics, 'subscriber'>,
): SubscriberLambdaHandler {
  const count = (outcome: 'ok' | 'error', started: number) => {
    try {
      metrics.subscriber({ function: name, outcome, durationMs: performance.now() - started });
    } catch {
      // A metric never fails the subscriber.
    }
  };
  return async (event, context) => {
    const started = performance.now();
    try {
      await handler(event, context);
    } catch (error) {
      count('error', started);
      throw error;
    }
    count('ok', started);
  };
}

/** `detail.delivery`, the detail being an object or, from a relay's input transformer, its JSON text. */
function deliveryIdOf(detail: unknown): unknown {
  if (typeof detail === 'string') {
    try {
      return (JSON.parse(detail) as { delivery?: unknown } | null)?.delivery;
    } catch {
      return undefined;
    }
  }
  return (detail as { delivery?: unknown } | undefined)?.delivery;
}

/** A Kinesis event-source mapping's batch, as Lambda hands an ordered subscriber it. */
export interface OrderedBatchEvent {
  Records: KinesisBatchRecord[];
}

/** What an ordered subscriber answers (`ReportBatchItemFailures`): the first record it did not handle, if any. */
export interface OrderedBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** An ordered subscriber's Lambda handler: one batch of the ordered stream in, the first failed record out. */
export type OrderedSubscriberLambdaHandler = (
  event: OrderedBatchEvent,
  context: Context,
) => Promise<OrderedBatchResponse>;

/**
 * Builds an ordered subscriber: a Lambda on the ordered stream (a Kinesis event-source mapping with
 * `ReportBatchItemFailures`) that takes the same options and the same handlers as {@link createSubscriberHandler}.
 * Each record of the batch holds the EventBridge event a rule's target would get; they are handled one after the
 * other, in the stream's order, each as one subscriber invocation (its claim check resolved, its `delivery received`
 * line, its delivery-log report). At the first one that fails the batch stops and answers that record's sequence
 * number: Lambda retries from it, so no later record of its shard slot runs before it, and after the mapping's
 * last retry it goes to the on-failure destination.
 *
 * @example
 * ```ts
 * export const handler = createOrderedSubscriberHandler({
 *   register: (events) => events.on('pull_request', async ({ payload }) => { ... }),
 * });
 * ```
 */
export function createOrderedSubscriberHandler(
  options: SubscriberHandlerOptions = {},
): OrderedSubscriberLambdaHandler {
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-subscriber' });
  const handle = createSubscriberHandler({ ...options, logger });
  return async (event, context) => {
    const records = Array.isArray(event?.Records) ? event.Records : [];
    for (const record of records) {
      const sequenceNumber = record?.kinesis?.sequenceNumber;
      try {
        // The subscriber chain reports an error of its own handlers; a record that holds no delivery event is
        // failed here, before any handler ran.
        await handle(streamEventOfRecord(record) as EventBridgeEvent<string, DeliveryDetail>, context);
      } catch (error) {
        if (typeof sequenceNumber !== 'string') throw new TypeError('stream record has no sequence number');
        // Its code only: an error's message may quote the payload.
        logger.error('ordered delivery failed, batch stopped', {
          sequenceNumber,
          partitionKey: record.kinesis.partitionKey,
          errorCode: errorCode(error),
          left: records.length - records.indexOf(record),
        });
        return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
      }
    }
    return { batchItemFailures: [] };
  };
}
