/**
 * Scheduled retrier (every minute): publishes the deliveries the ingest queued because the bus did not take
 * them in time (lib/aws' `redriveQueue`), each exactly once across concurrent runs; after
 * `FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS` a delivery is dead-lettered and the `DeadLetteredDeliveries` metric fires
 * its alarm. A run that finds the bus still down returns normally: the records wait for the next run.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  AwsDefaults,
  DeliveryQueue,
  EventPublisher,
  type RedriveReport,
  readRedriveConfig,
  redriveQueue,
  sdkTimeouts,
} from '../../lib/aws/index.js';

const config = readRedriveConfig();
const logger = new Logger({ serviceName: 'forgebridge-redrive' });

const quick = sdkTimeouts(config.requestTimeoutMs);
// The publisher retries PutEvents itself, within its budget (as in the ingest).
const eventBridge = new EventBridgeClient({ ...quick, maxAttempts: 1 });
const s3 = new S3Client(sdkTimeouts(Math.max(config.requestTimeoutMs, 5_000)));
const publisher = new EventPublisher({ ...config.publisher, eventBridge, s3, logger });
const queue = new DeliveryQueue({
  client: new DynamoDBClient(quick),
  tableName: config.tableName,
  s3,
  bucket: config.publisher.bucket,
});
// A record is taken only with time for a whole publish budget and its writes left.
const reserveMs = (config.publisher.budgetMs ?? AwsDefaults.publishBudgetMs) + 2 * config.requestTimeoutMs;

async function run(_event: unknown, context: Context): Promise<RedriveReport> {
  return redriveQueue({
    queue,
    publisher,
    logger,
    ...config.queue,
    reserveMs,
    remainingMs: () => context.getRemainingTimeInMillis(),
  });
}

/** The Lambda entry point. */
export const handler = middy(run).use(injectLambdaContext(logger));
