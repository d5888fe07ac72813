// The example subscriber through its real Middy chain: it logs `delivery received`, reads the client's token
// from the token table (DynamoDB mocked) and calls the forge API (undici MockAgent as the global dispatcher),
// logging `forge api called`. The log lines are read from stdout, as the end-to-end tests read them.
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { type Dispatcher, getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';

const API = 'https://forge.example.test';
const ACCESS_TOKEN = 'forge-access-token-7f3a';
const CLIENT_SECRET = 'client-secret-9b1c';
const dynamo = mockClient(DynamoDBDocumentClient);
let stdout: MockInstance<typeof process.stdout.write>;
let agent: MockAgent;
let previous: Dispatcher;

const context = {
  functionName: 'forgebridge-test-onIssuesOpened',
  awsRequestId: 'request-1',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:forgebridge-test-onIssuesOpened',
  memoryLimitInMB: '512',
  functionVersion: '$LATEST',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

type Handler = (event: unknown, context: Context) => Promise<void>;

async function loadSubscriber(env: Record<string, string> = {}): Promise<Handler> {
  vi.resetModules();
  for (const [name, value] of Object.entries({
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_DEV: '',
    IS_OFFLINE: 'true',
    FORGEBRIDGE_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
    FORGEBRIDGE_TOKEN_TABLE: 'tokens',
    FORGEBRIDGE_FORGE_API_URL: `${API}/api/v1/`,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
      { provider: 'forge', clientId: 'bot', site: 'https://auth.example.test', scope: 'issues:read' },
    ]),
    ...env,
  })) {
    vi.stubEnv(name, value);
  }
  return ((await import('../../../functions/subscriber/handler.js')) as { handler: Handler }).handler;
}

function logLines(): Record<string, unknown>[] {
  return stdout.mock.calls
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function issuesOpened(delivery: string, number: number) {
  return {
    source: 'forge.webhooks',
    'detail-type': 'issues.opened',
    detail: {
      delivery,
      event: 'issues',
      action: 'opened',
      payload: { action: 'opened', issue: { number }, repository: { full_name: 'octo/hello' } },
    },
  };
}

/** The forge API answers one issue request; resolves the Authorization header it received. */
function issueEndpoint(number: number, body: unknown) {
  const seen: string[] = [];
  agent
    .get(API)
    .intercept({ method: 'GET', path: `/api/v1/repos/octo/hello/issues/${number}` })
    .reply((options) => {
      seen.push(new Headers(options.headers as Record<string, string>).get('authorization') ?? '');
      return {
        statusCode: 200,
        data: JSON.stringify(body),
        responseOptions: { headers: { 'content-type': 'application/json' } },
      };
    });
  return seen;
}

beforeEach(() => {
  dynamo.reset();
  dynamo.on(GetCommand, { TableName: 'tokens', Key: { pk: 'forge#bot#issues%3Aread' } }).resolves({
    Item: {
      pk: 'forge#bot#issues%3Aread',
      token: {
        access_token: ACCESS_TOKEN,
        token_type: 'bearer',
        expires_at: Math.floor(Date.now() / 1000) + 3600,
      },
      version: 4,
    },
  });
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  previous = getGlobalDispatcher();
  agent = new MockAgent();
  agent.disableNetConnect();
  setGlobalDispatcher(agent);
});

afterEach(async () => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
  setGlobalDispatcher(previous);
  await agent.close();
});

describe('functions/subscriber handler', { timeout: 30_000 }, () => {
  // The first test of each file imports a handler (and its whole graph) cold: give it room on a busy machine.
  it('calls the forge API with the stored token, logs the status and title, then the delivery', async () => {
    const handler = await loadSubscriber();
    const seen = issueEndpoint(7, { number: 7, title: 'It broke' });
    await handler(issuesOpened('d-1', 7), context);
    expect(seen).toEqual([`Bearer ${ACCESS_TOKEN}`]);
    expect(logLines()).toEqual([
      expect.objectContaining({
        message: 'forge api called',
        function_name: 'forgebridge-test-onIssuesOpened',
        delivery: 'd-1',
        status: 200,
        title: 'It broke',
      }),
      expect.objectContaining({
        message: 'delivery received',
        function_name: 'forgebridge-test-onIssuesOpened',
        delivery: 'd-1',
        event: 'issues',
        action: 'opened',
        detailType: 'issues.opened',
        claimCheck: false,
      }),
    ]);
    const written = stdout.mock.calls.join('\n');
    expect(written).not.toContain(ACCESS_TOKEN);
    expect(written).not.toContain(CLIENT_SECRET);
  });

  it('serves the token from memory on the next delivery, and logs no title the API did not give', async () => {
    const handler = await loadSubscriber();
    issueEndpoint(7, { number: 7, title: 'It broke' });
    issueEndpoint(8, { number: 8, title: null });
    await handler(issuesOpened('d-1', 7), context);
    await handler(issuesOpened('d-2', 8), context);
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(1);
    const called = logLines().filter((line) => line.message === 'forge api called');
    expect(called).toHaveLength(2);
    expect(called[1]).toMatchObject({ delivery: 'd-2', status: 200 });
    expect(called[1]).not.toHaveProperty('title');
  });

  it('logs another event without calling the forge API', async () => {
    const handler = await loadSubscriber();
    await handler(
      {
        'detail-type': 'push',
        detail: { delivery: 'd-3', event: 'push', payload: { ref: 'refs/heads/main' } },
      },
      context,
    );
    expect(logLines()).toEqual([
      expect.objectContaining({
        message: 'delivery received',
        delivery: 'd-3',
        event: 'push',
        claimCheck: false,
      }),
    ]);
    expect(logLines()[0]).not.toHaveProperty('action');
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('fails at cold start without a forge API URL, or without a client of the configured provider', async () => {
    await expect(loadSubscriber({ FORGEBRIDGE_FORGE_API_URL: '' })).rejects.toThrow(
      new TypeError('environment variable "FORGEBRIDGE_FORGE_API_URL" is required'),
    );
    await expect(loadSubscriber({ FORGEBRIDGE_OAUTH_PROVIDER: 'gitea' })).rejects.toThrow(
      new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" names no client'),
    );
  });
});
