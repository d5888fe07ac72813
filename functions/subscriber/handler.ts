/**
 * The example subscriber, on `issues.opened`: it rebuilds `{ id, name, payload }` from the EventBridge event
 * (resolving an S3 claim check), dispatches it through lib/webhooks' event handler, and calls the forge API
 * about the new issue with an `AccessToken` from the DynamoDB token store (served from memory while fresh).
 * Wiring only: SDK clients at module scope, configuration from the environment (docs/serverless.md).
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { numberEnv, optionalEnv, requireEnv } from '../../lib/aws/env.js';
import { type DeliveryDetail, resolveDelivery } from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';
import { createTokenSource, readOAuthClients } from '../shared/oauth-clients.js';

const logger = new Logger({ serviceName: 'forgebridge-subscriber' });

const timeouts = {
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
};
const s3 = new S3Client(timeouts);
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(timeouts));
const ssm = new SSMClient(timeouts);

const forgeApiUrl = requireEnv('FORGEBRIDGE_FORGE_API_URL').replace(/\/+$/, '');
const provider = optionalEnv('FORGEBRIDGE_OAUTH_PROVIDER');
const clients = readOAuthClients();
const client = clients.find((candidate) => provider === undefined || candidate.provider === provider);
if (client === undefined)
  throw new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" names no client');
const tokens = createTokenSource(client, {
  documentClient,
  ssm,
  tableName: requireEnv('FORGEBRIDGE_TOKEN_TABLE'),
  refreshWindowSeconds: numberEnv('FORGEBRIDGE_REFRESH_WINDOW_SECONDS'),
  logger,
});

interface IssuesOpened {
  action: 'opened';
  issue: { number: number; title?: string };
  repository: { full_name: string };
}

const events = createEventHandler();
events.on('issues.opened', async ({ id, payload }) => {
  const { issue, repository } = payload as unknown as IssuesOpened;
  const token = await (await tokens.store()).get();
  const response = await token.get(`${forgeApiUrl}/repos/${repository.full_name}/issues/${issue.number}`);
  const body = response.parsed as { title?: unknown } | undefined;
  logger.info('forge api called', {
    delivery: id,
    status: response.status,
    ...(typeof body?.title === 'string' ? { title: body.title } : {}),
  });
});

async function run(event: EventBridgeEvent<string, DeliveryDetail>): Promise<void> {
  const delivery = await resolveDelivery(event, { s3 });
  const action = (delivery.payload as { action?: unknown } | null)?.action;
  logger.info('delivery received', {
    delivery: delivery.id,
    event: delivery.name,
    ...(typeof action === 'string' ? { action } : {}),
    detailType: event['detail-type'],
    claimCheck: event.detail.payloadRef !== undefined,
  });
  await events.receive(delivery as Parameters<typeof events.receive>[0]);
}

/**
 * The Lambda entry point.
 *
 * @example
 * ```yaml
 * onIssuesOpened:
 *   handler: functions/subscriber/handler.handler
 *   events: [{ eventBridge: { eventBus: !GetAtt Bus.Name, pattern: { detail-type: [issues.opened] } } }]
 * ```
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
 */
export const handler = middy(run).use(injectLambdaContext(logger));
