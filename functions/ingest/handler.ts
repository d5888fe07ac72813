/**
 * Webhook ingest: an HTTP API route or Function URL (payload 2.0), or a REST API (payload 1.0), delivers a forge
 * webhook to `/webhooks` or `/webhooks/{source}`; it is verified with its source's forge preset and secret,
 * deduped on its source and delivery id and published onto the bus (lib/aws/ingest). With
 * `FORGEBRIDGE_DELIVERIES_TABLE` set, every answered request is recorded in the delivery log (one more write).
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
  DeliveryLog,
  DeliveryQueue,
  deliveryLog,
  EventPublisher,
  forgeWebhookSources,
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
const ssm = new SSMClient(quick);
// One secrets provider per source, made at the cold start (a source without its parameter fails it); each reads
// SSM only on its source's first delivery, so an unknown source is refused before any secret is read.
const sources = config.sources.map((source) => {
  if (source.secretParameter === undefined && !config.offline) {
    throw new TypeError(
      `webhook source "${source.name}" has no "secretParameter" (FORGEBRIDGE_WEBHOOK_SOURCES, or FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER for the default source)`,
    );
  }
  const provider = createSecretsProvider({
    parameterName: source.secretParameter,
    envVar: source.secretEnv,
    offline: config.offline,
    ssm,
  });
  return {
    name: source.name,
    forge: source.forge,
    headers: source.headers,
    secret: () => provider.getSecrets(),
  };
});

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

const log =
  config.deliveryLog === undefined
    ? undefined
    : new DeliveryLog({ ...config.deliveryLog, client: dynamodb, logger });

const chain = middy(run).use(injectLambdaContext(logger));
// First after the logger's context: it sees the request as it came in and, last, the answer given.
if (log !== undefined) chain.use(deliveryLog({ log, logger }));
export const handler = chain
  .use(
    forgeWebhookSources({
      sources,
      allowSha1: config.webhook.allowSha1,
      maxBodyBytes: config.webhook.maxBodyBytes,
    }),
  )
  .use(httpJsonBodyParser())
  .use(webhookErrors({ logger }));
