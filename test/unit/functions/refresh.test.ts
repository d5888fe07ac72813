// The scheduled refresh handler through its real Middy chain: which clients it refreshes, what it reports, and
// that a failure fails the invocation (so it shows in the function's Errors metric). DynamoDB is mocked. The refresh itself runs end to end in
// test/integration/stack/suites/routing.ts against oidc-provider and DynamoDB Local.
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const dynamo = mockClient(DynamoDBDocumentClient);
const context = {
  functionName: 'forgebridge-test-refresh',
  awsRequestId: 'request-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

type Handler = (event: unknown, context: Context) => Promise<{ refreshed: number; failed: number }>;

async function loadRefresh(env: Record<string, string>): Promise<Handler> {
  vi.resetModules();
  for (const [name, value] of Object.entries({
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    FORGEBRIDGE_TOKEN_TABLE: 'tokens',
    ...env,
  })) {
    vi.stubEnv(name, value);
  }
  return ((await import('../../../functions/refresh/handler.js')) as { handler: Handler }).handler;
}

beforeEach(() => dynamo.reset());
afterEach(() => vi.unstubAllEnvs());

describe('functions/refresh handler', { timeout: 30_000 }, () => {
  // The first test of each file imports a handler (and its whole graph) cold: give it room on a busy machine.
  it('does nothing, successfully, when no OAuth client is configured', async () => {
    const handler = await loadRefresh({ FORGEBRIDGE_OAUTH_CLIENTS: '' });
    await expect(handler({}, context)).resolves.toEqual({ refreshed: 0, failed: 0, reports: [] });
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('reports each client under its token table key', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    dynamo.on(GetCommand, { TableName: 'tokens', Key: { pk: 'forge#bot#repo' } }).resolves({
      Item: {
        pk: 'forge#bot#repo',
        token: { access_token: 'stored-token', expires_at: expiresAt },
        version: 3,
      },
    });
    const handler = await loadRefresh({
      IS_OFFLINE: 'true',
      FORGEBRIDGE_OAUTH_CLIENT_SECRET: 'bot-secret',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        { provider: 'forge', clientId: 'bot', site: 'http://127.0.0.1:9', scope: 'repo' },
      ]),
    });
    await expect(handler({}, context)).resolves.toEqual({
      refreshed: 0,
      failed: 0,
      reports: [{ key: 'forge#bot#repo', status: 'fresh', version: 3, expiresAt }],
    });
  });

  it('reports a client whose secret cannot be read, still refreshes the others, then fails', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    dynamo.on(GetCommand).resolves({
      Item: { pk: 'forge#ok#', token: { access_token: 'stored-token', expires_at: expiresAt }, version: 1 },
    });
    const handler = await loadRefresh({
      IS_OFFLINE: 'true',
      OK_SECRET: 'ok-secret',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        { provider: 'forge', clientId: 'bot', site: 'http://127.0.0.1:9', secretEnv: 'BOT_SECRET_UNSET' },
        { provider: 'forge', clientId: 'ok', site: 'http://127.0.0.1:9', secretEnv: 'OK_SECRET' },
      ]),
    });
    const error = await handler({}, context).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'TokenRefreshError',
      message: '1 of 2 token refreshes failed',
      run: {
        refreshed: 0,
        failed: 1,
        reports: [
          {
            key: 'forge#bot#',
            status: 'failed',
            error: {
              code: 'secrets_missing',
              message: 'no secret in environment variable "BOT_SECRET_UNSET"',
            },
          },
          { key: 'forge#ok#', status: 'fresh', version: 1, expiresAt },
        ],
      },
    });
    expect(dynamo.commandCalls(GetCommand).map((call) => call.args[0].input.Key)).toEqual([
      { pk: 'forge#ok#' },
    ]);
    expect(JSON.stringify(error)).not.toContain('ok-secret');
  });

  it('fails the invocation when a client secret cannot be read, without leaking anything', async () => {
    const handler = await loadRefresh({
      IS_OFFLINE: 'true',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        { provider: 'forge', clientId: 'bot', site: 'http://127.0.0.1:9', secretEnv: 'BOT_SECRET_UNSET' },
      ]),
    });
    await expect(handler({}, context)).rejects.toMatchObject({
      name: 'TokenRefreshError',
      code: 'refresh_failed',
      message: '1 of 1 token refreshes failed',
    });
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('fails at cold start when the client list is malformed', async () => {
    await expect(loadRefresh({ FORGEBRIDGE_OAUTH_CLIENTS: '[{"provider":"forge"}]' })).rejects.toThrow(
      new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" is required'),
    );
  });

  it('fails at cold start without a token table', async () => {
    await expect(loadRefresh({ FORGEBRIDGE_TOKEN_TABLE: '' })).rejects.toThrow(
      new TypeError('environment variable "FORGEBRIDGE_TOKEN_TABLE" is required'),
    );
  });
});
