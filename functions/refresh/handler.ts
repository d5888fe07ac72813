/**
 * Scheduled token refresh (every 5 minutes): each entry of `FORGEBRIDGE_OAUTH_CLIENTS`, an OAuth client
 * (client credentials) or a GitHub App installation (app JWT, installation token), gets its token renewed in
 * DynamoDB when it is within the refresh window of expiry (lib/aws' `refreshTokens`). A failed entry fails the
 * invocation, so the Errors metric and its alarms fire.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import {
  createTokenSources,
  type RefreshRun,
  readTokenConfig,
  refreshTokens,
  sdkTimeouts,
  TokenRefreshError,
} from '../../lib/aws/index.js';

const logger = new Logger({ serviceName: 'forgebridge-refresh' });
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(sdkTimeouts()));
const ssm = new SSMClient(sdkTimeouts());
const sources = createTokenSources(readTokenConfig(), { documentClient, ssm, logger });

async function run(): Promise<RefreshRun> {
  const result = await refreshTokens(sources, { logger });
  if (result.failed > 0) throw new TokenRefreshError(result);
  return result;
}

/** The Lambda entry point. */
export const handler = middy(run).use(injectLambdaContext(logger));
