/**
 * Webhook ingest: an HTTP API route or Function URL (payload 2.0), or a REST API (payload 1.0), delivers a forge
 * webhook; it is verified, deduped on its delivery id and published onto the bus (lib/aws/ingest).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import {
  createIngest,
  createSecretsProvider,
  DeliveryQueue,
  EventPublisher,
  forgeWebhook,
  readIngestConfig,
  sdkTimeouts,
  webhookErrors,
} from '../../lib/aws/index.js';

const config = readIngestConfig();
const logger = new Logger({ serviceName: 'forgebridge-ingest' });

// A stalled call fails within the forge's ~10 s instead of hanging until the Lambda timeout with the lock held;
// the local stack raises the timeout for its busy bus.
const quick = sdkTimeouts(config.requestTimeoutMs);
// The publisher retries PutEvents itself, within its budget.
const eventBridge = new EventBridgeClient({ ...quick, maxAttempts: 1 });
const s3 = new S3Client(sdkTimeouts(Math.max(config.requestTimeoutMs, 5_000)));
const secrets = createSecretsProvider({ parameterName: config.secretParameter, ssm: new SSMClient(quick) });

const publisher = new EventPublisher({ ...config.publisher, eventBridge, s3, logger });
const dynamodb = new DynamoDBClient(quick);
// What the bus does not take in time is kept for the retrier (functions/redrive), large bodies in the bucket.
const queue = new DeliveryQueue({
  client: dynamodb,
  tableName: config.dedupe.tableName,
  ttlSeconds: config.dedupe.ttlSeconds,
  s3,
  bucket: config.publisher.bucket,
});
const run = createIngest({ publisher, dedupe: { ...config.dedupe, client: dynamodb }, queue, logger });

export const handler = middy(run)
  .use(injectLambdaContext(logger))
  .use(forgeWebhook({ ...config.webhook, secret: () => secrets.getSecrets() }))
  .use(httpJsonBodyParser())
  .use(webhookErrors({ logger }));
