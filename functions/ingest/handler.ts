/**
 * Webhook ingest: an HTTP API route or a Function URL (payload 2.0), or a REST API (payload 1.0), delivers a
 * forge webhook; lib/aws verifies it, dedupes it on the delivery id and publishes it onto the bus.
 * Wiring only: SDK clients at module scope, configuration from the environment (docs/serverless.md).
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import { numberEnv, optionalEnv, requireEnv } from '../../lib/aws/env.js';
import {
  type ApiGatewayEvent,
  createSecretsProvider,
  DedupeStore,
  EventPublisher,
  fromApiGatewayEvent,
  handleDelivery,
  type IngestConfig,
  type IngestResponse,
} from '../../lib/aws/index.js';

const logger = new Logger({ serviceName: 'forgebridge-ingest' });

// Socket timeouts: a stalled call fails (and is retried) within the forge's ~10 s, instead of hanging until
// the Lambda timeout with the dedupe lock held. A call that timed out may still have been carried out, so a
// retried PutEvents can publish twice (subscribers dedupe on `detail.delivery`): the local stack, whose bus
// shares two busy cores with every function, raises the timeout with FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS.
const requestTimeout = numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS') ?? 2_000;
const quick = {
  requestHandler: { connectionTimeout: 1_000, requestTimeout, throwOnRequestTimeout: true },
};
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(quick));
const eventBridge = new EventBridgeClient(quick);
const s3 = new S3Client({
  requestHandler: {
    connectionTimeout: 1_000,
    requestTimeout: Math.max(requestTimeout, 5_000),
    throwOnRequestTimeout: true,
  },
});
const ssm = new SSMClient(quick);

const dedupe = new DedupeStore({
  client: documentClient,
  tableName: requireEnv('FORGEBRIDGE_DEDUPE_TABLE'),
  ttlSeconds: numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS'),
  lockSeconds: numberEnv('FORGEBRIDGE_DEDUPE_LOCK_SECONDS'),
});

const publisher = new EventPublisher({
  eventBridge,
  eventBusName: requireEnv('FORGEBRIDGE_BUS_NAME'),
  source: optionalEnv('FORGEBRIDGE_SOURCE'),
  maxEntryBytes: numberEnv('FORGEBRIDGE_MAX_ENTRY_BYTES'),
  s3,
  bucket: optionalEnv('FORGEBRIDGE_BUCKET'),
  budgetMs: numberEnv('FORGEBRIDGE_PUBLISH_BUDGET_MS'),
  logger,
});

const secrets = createSecretsProvider({
  parameterName: optionalEnv('FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER'),
  ssm,
});

// Header names default to the forge-neutral `X-Forge-Event` / `X-Forge-Delivery`; a real forge sets its own.
const eventHeader = optionalEnv('FORGEBRIDGE_EVENT_HEADER');
const deliveryHeader = optionalEnv('FORGEBRIDGE_DELIVERY_HEADER');
const config: IngestConfig = {
  headers: {
    ...(eventHeader === undefined ? {} : { event: eventHeader.toLowerCase() }),
    ...(deliveryHeader === undefined ? {} : { delivery: deliveryHeader.toLowerCase() }),
  },
  allowSha1: optionalEnv('FORGEBRIDGE_ALLOW_SHA1') !== 'false',
  maxBodyBytes: numberEnv('FORGEBRIDGE_MAX_BODY_BYTES'),
};

const dependencies = { getSecrets: () => secrets.getSecrets(), dedupe, publisher, logger };

/**
 * Answers one delivery: 202 once it is on the bus, 200 `{"duplicate":true}` for a redelivery, 409 while the same
 * delivery is in progress, 4xx for bad input (as lib/webhooks' middleware), 503 when it could not be published.
 */
async function run(event: ApiGatewayEvent): Promise<IngestResponse> {
  return handleDelivery(fromApiGatewayEvent(event), dependencies, config);
}

/**
 * The Lambda entry point.
 *
 * @example
 * ```yaml
 * ingest:
 *   handler: functions/ingest/handler.handler
 *   events: [{ httpApi: { method: POST, path: /webhooks } }]
 * ```
 * @see https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 */
export const handler = middy(run).use(injectLambdaContext(logger));
