/**
 * Scheduled token refresh (every 5 minutes): for each OAuth client in `FORGEBRIDGE_OAUTH_CLIENTS`, lib/aws'
 * `refreshTokens` renews the client-credentials token in DynamoDB when it is within the refresh window of
 * expiry. Refresh is single-flight across processes (a lease in the table), so readers never race it.
 * Wiring only: SDK clients at module scope, configuration from the environment (docs/serverless.md).
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { numberEnv, requireEnv } from '../../lib/aws/env.js';
import { type RefreshReport, refreshTokens } from '../../lib/aws/index.js';
import { createTokenSource, readOAuthClients } from '../shared/oauth-clients.js';

const logger = new Logger({ serviceName: 'forgebridge-refresh' });

const timeouts = {
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
};
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient(timeouts));
const ssm = new SSMClient(timeouts);

const tableName = requireEnv('FORGEBRIDGE_TOKEN_TABLE');
const windowSeconds = numberEnv('FORGEBRIDGE_REFRESH_WINDOW_SECONDS');
const sources = readOAuthClients().map((client) =>
  createTokenSource(client, { documentClient, ssm, tableName, refreshWindowSeconds: windowSeconds, logger }),
);

/** The outcome of one run, also returned so `osls invoke` shows it. */
export interface RefreshRun {
  refreshed: number;
  failed: number;
  reports: RefreshReport[];
}

async function run(_event: ScheduledEvent | Record<string, never>): Promise<RefreshRun> {
  const reports: RefreshReport[] = [];
  const targets = [];
  for (const source of sources) {
    try {
      targets.push(await source.target());
    } catch (error) {
      // A client whose secret cannot be read is reported, and the others are still refreshed.
      const code = error instanceof Error && 'code' in error ? String(error.code) : 'secrets_unavailable';
      reports.push({
        key: `${source.config.provider}#${source.config.clientId}`,
        status: 'failed',
        error: { code, message: 'client secret unavailable' },
      });
    }
  }
  reports.push(
    ...(await refreshTokens(targets, { client: documentClient, tableName, windowSeconds, logger })),
  );
  const failed = reports.filter((report) => report.status === 'failed').length;
  const refreshed = reports.filter((report) => report.status === 'refreshed').length;
  logger.info('refresh run', { clients: reports.length, refreshed, failed });
  if (failed > 0) {
    // Fail the invocation so the failure shows in the function's Errors metric and alarms can fire.
    throw new Error(`${failed} of ${reports.length} token refreshes failed`);
  }
  return { refreshed, failed, reports };
}

/**
 * The Lambda entry point.
 *
 * @example
 * ```yaml
 * refresh:
 *   handler: functions/refresh/handler.handler
 *   events: [{ schedule: rate(5 minutes) }]
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export const handler = middy(run).use(injectLambdaContext(logger));
