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
const run = createIngest({
  publisher,
  dedupe: { ...config.dedupe, client: new DynamoDBClient(quick) },
  logger,
});

export const handler = middy(run)
  .use(injectLambdaContext(logger))
  .use(forgeWebhook({ ...config.webhook, secret: () => secrets.getSecrets() }))
  .use(httpJsonBodyParser())
  .use(webhookErrors({ logger }));
