/**
 * The example subscriber, on `issues.opened`: it rebuilds the delivery from the EventBridge event (resolving an
 * S3 claim check), logs `delivery received`, and calls the forge API about the new issue with an `AccessToken`
 * from the DynamoDB token store (served from memory while fresh), logging `forge api called`.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import {
  createSubscriber,
  createTokenSource,
  type DeliveryDetail,
  readForgeApiConfig,
} from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';

const logger = new Logger({ serviceName: 'forgebridge-subscriber' });
const timeouts = {
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
};
const s3 = new S3Client(timeouts);
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(timeouts));
const ssm = new SSMClient(timeouts);
const config = readForgeApiConfig();
const tokens = createTokenSource(config.client, { ...config, documentClient, ssm, logger });

const events = createEventHandler();
events.on('issues.opened', async ({ id, payload }) => {
  const issue = payload.issue as { number: number };
  const token = await (await tokens.store()).get();
  const response = await token.get(
    `${config.forgeApiUrl}/repos/${payload.repository.full_name}/issues/${issue.number}`,
  );
  const title = (response.parsed as { title?: unknown } | undefined)?.title;
  logger.info('forge api called', {
    delivery: id,
    status: response.status,
    ...(typeof title === 'string' ? { title } : {}),
  });
});
const receive = createSubscriber({ events, logger, s3 });

/** The Lambda entry point. */
export const handler = middy(async (event: EventBridgeEvent<string, DeliveryDetail>) => {
  await receive(event);
}).use(injectLambdaContext(logger));
