// The scheduled refresh handler's wiring: which clients it refreshes, and that a failure fails the invocation
// (so it shows in the function's Errors metric). The refresh itself runs end to end in
// test/integration/stack/routing.test.ts against oidc-provider and DynamoDB Local.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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

  it('fails the invocation when a client secret cannot be read, without leaking anything', async () => {
    const handler = await loadRefresh({
      IS_OFFLINE: 'true',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        { provider: 'forge', clientId: 'bot', site: 'http://127.0.0.1:9', secretEnv: 'BOT_SECRET_UNSET' },
      ]),
    });
    await expect(handler({}, context)).rejects.toThrow(new Error('1 of 1 token refreshes failed'));
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
