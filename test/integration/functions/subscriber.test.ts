// The example subscriber through its real Middy chain, against real peers: DynamoDB Local (the token table),
// oidc-provider (client credentials) and the local forge API (which accepts only the authorization server's
// tokens). The subscriber's log lines are read from stdout, as the end-to-end tests read them.

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type MockInstance,
  vi,
} from 'vitest';
import { DeliveryLog } from '../../../lib/aws/delivery-log/index.js';
import { tokenPartitionKey } from '../../../lib/aws/tokens/token-store.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { createTables } from '../../../local-stack/dynamodb.js';
import { type ForgeApi, startForgeApi } from '../../../local-stack/forge-api.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { lambdaContext } from '../../helpers/lambda-context.js';

const ddb = useDynamoDbLocal();
let server: AuthorizationServer;
let forgeApi: ForgeApi;
let tokenTable: string;
let stdout: MockInstance<typeof process.stdout.write>;

const context = lambdaContext('forgebridge-test-onIssuesOpened');

type Handler = (event: unknown, context: Context) => Promise<void>;

const client = () => ({
  provider: 'forge',
  clientId: DEFAULT_CLIENT.client_id,
  scope: 'forge:read',
  resource: FORGE_API_RESOURCE,
  site: server.issuer,
  tokenUrl: server.tokenEndpoint,
});

async function loadSubscriber(env: Record<string, string> = {}): Promise<Handler> {
  vi.resetModules();
  for (const [name, value] of Object.entries({
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_DEV: '',
    IS_OFFLINE: 'true',
    FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
    FORGEBRIDGE_TOKEN_TABLE: tokenTable,
    FORGEBRIDGE_FORGE_API_URL: `${forgeApi.url}/`,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([client()]),
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

beforeAll(async () => {
  server = await startAuthorizationServer();
  forgeApi = await startForgeApi({
    issuer: server.issuer,
    jwksUri: server.jwksUri,
    audience: FORGE_API_RESOURCE,
  });
  tokenTable = (await ddb.tables()).tokens;
});
afterAll(async () => {
  await forgeApi?.stop();
  await server?.stop();
});
beforeEach(async () => {
  server.resetCounters();
  await ddb
    .documentClient()
    .send(new DeleteCommand({ TableName: tokenTable, Key: { pk: tokenPartitionKey(client()) } }));
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});

describe('functions/subscriber handler', { timeout: 30_000 }, () => {
  it('gets a token, calls the forge API with it, logs the status and title, then the delivery', async () => {
    const handler = await loadSubscriber();
    await handler(issuesOpened('d-1', 7), context);
    expect(server.tokenRequests()).toBe(1);
    expect(forgeApi.requests().at(-1)).toMatchObject({
      method: 'GET',
      path: '/repos/octo/hello/issues/7',
      status: 200,
      clientId: DEFAULT_CLIENT.client_id,
      scope: 'forge:read',
    });
    expect(logLines().filter((line) => line.message !== 'token refresh')).toEqual([
      expect.objectContaining({
        message: 'forge api called',
        function_name: 'forgebridge-test-onIssuesOpened',
        delivery: 'd-1',
        status: 200,
        title: 'Issue 7 of octo/hello',
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
    const stored = (
      await ddb.documentClient().send(
        new GetCommand({
          TableName: tokenTable,
          Key: { pk: tokenPartitionKey(client()) },
        }),
      )
    ).Item;
    expect(stored).toMatchObject({ version: 1 });
    const written = stdout.mock.calls.join('\n');
    expect(written).not.toContain(String(stored?.token?.access_token));
    expect(written).not.toContain(DEFAULT_CLIENT.client_secret);
  });

  it('reports its outcome into the delivery log under its function name when FORGEBRIDGE_DELIVERIES_TABLE is set', async () => {
    const deliveries = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTables(ddb.endpoint, { deliveries });
    const handler = await loadSubscriber({
      FORGEBRIDGE_DELIVERIES_TABLE: deliveries,
      AWS_LAMBDA_FUNCTION_NAME: 'forgebridge-test-onIssuesOpened',
    });
    const log = new DeliveryLog({ client: ddb.client(), tableName: deliveries });
    // The ingest's record of the delivery, as it leaves one before publishing.
    const recorded = await log.record({
      deliveryId: 'd-log',
      event: 'issues',
      action: 'opened',
      verdict: 'verified',
      httpStatus: 202,
      outcome: 'published',
    });
    expect(recorded.ok).toBe(true);
    const started = performance.now();
    await handler(issuesOpened('d-log', 9), context);
    const elapsed = performance.now() - started;
    const details = await log.get('d-log');
    expect(details?.subscribers['forgebridge-test-onIssuesOpened']).toMatchObject({ outcome: 'ok' });
    // The handler's own time, in whole milliseconds: within the invocation the test timed.
    const durationMs = details?.subscribers['forgebridge-test-onIssuesOpened']?.durationMs;
    expect(Number.isInteger(durationMs)).toBe(true);
    expect(durationMs).toBeGreaterThanOrEqual(0);
    expect(durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('serves the token from memory on the next delivery of a warm process', async () => {
    const handler = await loadSubscriber();
    await handler(issuesOpened('d-1', 7), context);
    await handler(issuesOpened('d-2', 8), context);
    expect(server.tokenRequests()).toBe(1);
    expect(logLines().filter((line) => line.message === 'forge api called')).toEqual([
      expect.objectContaining({ delivery: 'd-1', status: 200 }),
      expect.objectContaining({ delivery: 'd-2', status: 200, title: 'Issue 8 of octo/hello' }),
    ]);
  });

  it('logs no title when the forge API answers without one', async () => {
    // A forge whose issue answers carry no title: a plain server on 127.0.0.1 that records what it was sent.
    const authorizations: string[] = [];
    const bare = createServer((request, response) => {
      authorizations.push(request.headers.authorization ?? '');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ number: 5, title: null }));
    });
    bare.listen(0, '127.0.0.1');
    await once(bare, 'listening');
    try {
      const handler = await loadSubscriber({
        FORGEBRIDGE_FORGE_API_URL: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`,
      });
      await handler(issuesOpened('d-5', 5), context);
      expect(authorizations).toEqual([expect.stringMatching(/^Bearer \S+$/)]);
      const [called] = logLines().filter((line) => line.message === 'forge api called');
      expect(called).toMatchObject({ delivery: 'd-5', status: 200 });
      expect(called).not.toHaveProperty('title');
    } finally {
      bare.close();
    }
  });

  it('logs another event without calling the forge API', async () => {
    const handler = await loadSubscriber();
    const before = forgeApi.requests().length;
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
    expect(forgeApi.requests()).toHaveLength(before);
    expect(server.tokenRequests()).toBe(0);
  });

  it('fails the invocation, logging no API call, when the client secret is wrong, and logs no delivery (EventBridge retries it)', async () => {
    const handler = await loadSubscriber({ FORGEBRIDGE_OAUTH_CLIENT_SECRET: 'wrong-secret' });
    const error = (await handler(issuesOpened('d-4', 9), context).catch(
      (caught: unknown) => caught,
    )) as Error;
    // lib/webhooks wraps a failed handler; the token store's error is its cause.
    expect(error).toMatchObject({ code: 'handler_failed' });
    expect(JSON.stringify(error.cause ?? (error as { errors?: unknown }).errors)).toContain('refresh_failed');
    expect(logLines()).toEqual([]);
    expect(stdout.mock.calls.join('\n')).not.toContain('wrong-secret');
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
