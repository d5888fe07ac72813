import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import type { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { AwsDefaults } from '../constants.js';
import type { Env } from '../env.js';
import { ForgebridgeMetrics } from '../metrics.js';
import type { PublisherLike } from '../publish/index.js';
import { type DeliveryQueue, type RedriveReport, redriveQueue } from '../queue/index.js';
import { errorCode } from '../rules.js';
import { type RedriveConfig, readRedriveConfig } from '../stage/function-config.js';
import type { LoggerLike } from '../types.js';
import { deliveryPath } from './delivery-path.js';
import { loggerContext } from './observability.js';

/** The SDK clients the retrier talks through; each one not given is built with its timeouts. */
export interface RedriveClients {
  dynamodb?: DynamoDBClient | undefined;
  /** Built with `maxAttempts: 1`: the publisher retries `PutEvents` itself, within its budget. */
  eventBridge?: EventBridgeClient | undefined;
  /** With an ordered stream: built with `maxAttempts: 1`; the stream publisher retries itself. */
  kinesis?: KinesisClient | undefined;
  s3?: S3Client | undefined;
}

/** Options of {@link createRedriveHandler}; every one has a default read from the environment. */
export interface RedriveHandlerOptions {
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** The configuration itself, instead of reading it from `env`. */
  config?: RedriveConfig | undefined;
  clients?: RedriveClients | undefined;
  /** A Powertools `Logger` (Lambda context added) or any {@link LoggerLike}. Default: service `forgebridge-redrive`. */
  logger?: LoggerLike | undefined;
  /** Default: an `EventPublisher` on the configured bus and bucket, as the ingest's. */
  publisher?: PublisherLike | undefined;
  /** Default: the `DeliveryQueue` on the dedupe table the ingest writes to. */
  queue?: DeliveryQueue | undefined;
  /** Prints each run's queue metrics (EMF lines on stdout). Default: `ForgebridgeMetrics`; `false` turns it off. */
  metrics?: Pick<ForgebridgeMetrics, 'queue'> | false | undefined;
}

/**
 * Builds the scheduled retrier: each run publishes the due deliveries of the queue the ingest wrote (each once
 * across concurrent runs), taking a record only while a whole publish budget and its writes fit in the time
 * left; a run that finds the bus still down returns normally and the records wait for the next run.
 *
 * @example
 * ```ts
 * export const handler = createRedriveHandler();
 * ```
 */
export function createRedriveHandler(options: RedriveHandlerOptions = {}) {
  const config = options.config ?? readRedriveConfig(options.env ?? process.env);
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-redrive' });
  const { publisher, queue } = deliveryPath({
    publisher: config.publisher,
    tableName: config.tableName,
    requestTimeoutMs: config.requestTimeoutMs,
    clients: options.clients ?? {},
    logger,
    given: options,
  });
  // A record is taken only with time for a whole publish budget and its writes left.
  const reserveMs = (config.publisher.budgetMs ?? AwsDefaults.publishBudgetMs) + 2 * config.requestTimeoutMs;

  const metrics =
    options.metrics === false
      ? undefined
      : (options.metrics ??
        new ForgebridgeMetrics({ env: options.env, namespace: config.queue.metricNamespace }));

  const run = async (_event: unknown, context: Context): Promise<RedriveReport> => {
    const report = await redriveQueue({
      queue,
      publisher,
      logger,
      ...config.queue,
      reserveMs,
      remainingMs: () => context.getRemainingTimeInMillis(),
    });
    if (metrics !== undefined) {
      // What is left after the run, on every run: an empty queue reports 0, never nothing. A queue that cannot be
      // read (BatchGetItem denied, throttled) reports QueueStatsFailed instead: without it the age alarm, which
      // reads missing data as fine, would stay OK while deliveries wait.
      let left: { depth: number; oldestAgeSeconds: number } | undefined;
      try {
        left = await queue.stats();
      } catch (error) {
        logger.warn('queue depth not read', { errorCode: errorCode(error) });
      }
      metrics.queue({
        ...left,
        statsFailed: left === undefined,
        published: report.published,
      });
    }
    return report;
  };
  const chain = middy(run);
  const loggerMiddleware = loggerContext(logger);
  if (loggerMiddleware !== undefined) chain.use(loggerMiddleware);
  return chain;
}
