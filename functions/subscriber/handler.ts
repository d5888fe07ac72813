/**
 * The example subscriber, on `issues.opened`: it calls the forge API about the new issue with an `AccessToken`
 * from the DynamoDB token store (served from memory while fresh), of whichever kind its provider's entry is (an
 * OAuth client's token or a GitHub App installation token, both sent as `Bearer`), and logs `forge api called`; lib/aws'
 * `createSubscriber` resolves the delivery from the EventBridge event (S3 claim check included) and logs
 * `delivery received` once the handler succeeded. With `FORGEBRIDGE_DELIVERIES_TABLE` set it reports its outcome
 * (ok / error, duration) into the delivery log with `withDeliveryReport`.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import {
  createSubscriber,
  createTokenSource,
  DeliveryLog,
  readDeliveryLogConfig,
  readForgeApiConfig,
  sdkTimeouts,
  withDeliveryReport,
} from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';

const logger = new Logger({ serviceName: 'forgebridge-subscriber' });
const s3 = new S3Client(sdkTimeouts());
const dynamodb = new DynamoDBClient(sdkTimeouts());
const documentClient = DynamoDBDocumentClient.from(dynamodb);
const ssm = new SSMClient(sdkTimeouts());
const config = readForgeApiConfig();
const tokens = createTokenSource(config.client, { ...config, documentClient, ssm, logger });

const events = createEventHandler();
events.on('issues.opened', async ({ id, payload }) => {
  const token = await (await tokens.store()).get();
  const issue = payload.issue as { number: number };
  const response = await token.get(
    `${config.forgeApiUrl}/repos/${payload.repository.full_name}/issues/${issue.number}`,
  );
  const title = (response.parsed as { title?: unknown } | undefined)?.title;
  logger.info('forge api called', {
    delivery: id,
    status: response.status,
    ...(typeof title === 'string' && { title }),
  });
});
const receive = createSubscriber({ events, logger, s3 });

const run = middy(async (event: Parameters<typeof receive>[0]) => {
  await receive(event);
}).use(injectLambdaContext(logger));
const logConfig = readDeliveryLogConfig();

/** The Lambda entry point. */
export const handler =
  logConfig === undefined
    ? run
    : withDeliveryReport(run, {
        // The function's own name (`forgebridge-prod-onIssuesOpened`): the log's row names who received it.
        name: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'onIssuesOpened',
        deliveryLog: new DeliveryLog({
          client: dynamodb,
          tableName: logConfig.tableName,
          ttlSeconds: logConfig.ttlSeconds,
        }),
        logger,
      });
