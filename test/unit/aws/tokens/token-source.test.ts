import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SecretsError, TokenStore } from '../../../../lib/aws/index.js';
import type { OAuthClientConfig } from '../../../../lib/aws/tokens/config.js';
import {
  clientTarget,
  createTokenSource,
  createTokenSources,
} from '../../../../lib/aws/tokens/token-source.js';
import { tokenPartitionKey } from '../../../../lib/aws/tokens/token-store.js';
import { AccessToken } from '../../../../lib/oauth2/index.js';

const SITE = 'https://auth.example.test';
const ddbMock = mockClient(DynamoDBDocumentClient);
const ssmMock = mockClient(SSMClient);
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const ssm = new SSMClient({ region: 'us-east-1' });
const config: OAuthClientConfig = {
  provider: 'forge',
  clientId: 'ci-bot',
  site: SITE,
  scope: 'repo read:org',
  resource: 'urn:forge:api',
  secretParameter: '/fb/oauth/ci-bot',
};

let agent: MockAgent;
/** The form bodies and Authorization headers the token endpoint received. */
let requests: { body: URLSearchParams; authorization: string }[];

function tokenEndpoint(path = '/oauth/token', accessToken = 'issued-token') {
  agent
    .get(SITE)
    .intercept({ method: 'POST', path })
    .reply((options) => {
      const headers = new Headers(options.headers as Record<string, string>);
      requests.push({
        body: new URLSearchParams(String(options.body)),
        authorization: headers.get('authorization') ?? '',
      });
      return {
        statusCode: 200,
        data: JSON.stringify({ access_token: accessToken, token_type: 'bearer', expires_in: 3600 }),
        responseOptions: { headers: { 'content-type': 'application/json' } },
      };
    });
}

/** Basic credentials as RFC 6749 §2.3.1 sends them: each part form-urlencoded first. */
function basic(id: string, secret: string) {
  const encode = (part: string) => new URLSearchParams({ p: part }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

beforeEach(() => {
  ddbMock.reset();
  ssmMock.reset();
  requests = [];
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

describe('clientTarget()', () => {
  it('keys the token by provider, client id and scope, and asks for a client-credentials token', async () => {
    tokenEndpoint();
    const target = clientTarget(config, 'the-secret', { dispatcher: agent });
    expect(target.key).toEqual({ provider: 'forge', clientId: 'ci-bot', scope: 'repo read:org' });
    const token = await target.fetchToken(undefined);
    expect(token).toBeInstanceOf(AccessToken);
    expect(token.token).toBe('issued-token');
    expect(requests).toHaveLength(1);
    expect(Object.fromEntries(requests[0]!.body)).toEqual({
      grant_type: 'client_credentials',
      scope: 'repo read:org',
      resource: 'urn:forge:api',
    });
    expect(requests[0]!.authorization).toBe(basic('ci-bot', 'the-secret'));
  });

  it('uses the configured token URL, and no scope or resource when none is configured', async () => {
    tokenEndpoint('/login/oauth/access_token');
    const target = clientTarget(
      { provider: 'forge', clientId: 'c', site: SITE, tokenUrl: 'login/oauth/access_token' },
      's',
      { dispatcher: agent },
    );
    expect(target.key).toEqual({ provider: 'forge', clientId: 'c' });
    await target.fetchToken(undefined);
    expect(Object.fromEntries(requests[0]!.body)).toEqual({ grant_type: 'client_credentials' });
  });

  it('loads a stored map as an AccessToken of the client', () => {
    const token = clientTarget(config, 's').fromHash({ access_token: 'stored', expires_at: 1_900_000_000 });
    expect(token).toBeInstanceOf(AccessToken);
    expect(token.token).toBe('stored');
    expect(token.expiresAt).toBe(1_900_000_000);
  });
});

describe('createTokenSource()', () => {
  it('has the token store key before any secret is read', () => {
    const source = createTokenSource(config, { documentClient, ssm, tableName: 'tokens', env: {} });
    expect(source.key).toBe(
      tokenPartitionKey({ provider: 'forge', clientId: 'ci-bot', scope: 'repo read:org' }),
    );
    expect(source.key).toBe('forge#ci-bot#read%3Aorg%20repo');
    expect(ssmMock.calls()).toHaveLength(0);
  });

  it('reads the secret from SSM once and builds one TokenStore, which fetches and stores a token', async () => {
    ssmMock
      .on(GetParameterCommand)
      .resolves({ Parameter: { Name: '/fb/oauth/ci-bot', Value: 'ssm,secret' } });
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    tokenEndpoint();
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const source = createTokenSource(config, {
      documentClient,
      ssm,
      tableName: 'tokens',
      logger,
      env: {},
      connection: { dispatcher: agent },
    });
    const [first, second] = await Promise.all([source.store(), source.store()]);
    expect(first).toBeInstanceOf(TokenStore);
    expect(second).toBe(first);
    expect(await source.store()).toBe(first);
    expect(first?.key).toBe(source.key);
    expect(ssmMock.commandCalls(GetParameterCommand)).toHaveLength(1);
    expect(ssmMock.commandCalls(GetParameterCommand)[0]!.args[0].input).toEqual({
      Name: '/fb/oauth/ci-bot',
      WithDecryption: true,
    });

    const token = await first!.get();
    expect(token.token).toBe('issued-token');
    // The whole parameter is the secret: an OAuth client secret is not a rotation list.
    expect(requests[0]!.authorization).toBe(basic('ci-bot', 'ssm,secret'));
    const put = ddbMock.commandCalls(PutCommand)[0]!.args[0].input;
    expect(put.TableName).toBe('tokens');
    expect(put.Item).toMatchObject({ pk: source.key, token: { access_token: 'issued-token' }, version: 1 });
    expect(JSON.stringify(logger.info.mock.calls)).not.toContain('ssm,secret');
  });

  it('rejects while the secret cannot be read, and reads it again on the next call', async () => {
    ssmMock
      .on(GetParameterCommand)
      .rejectsOnce(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }))
      .resolves({ Parameter: { Name: '/fb/oauth/ci-bot', Value: 'secret' } });
    const source = createTokenSource(config, { documentClient, ssm, tableName: 'tokens', env: {} });
    const error = await source.store().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SecretsError);
    expect(error).toMatchObject({ code: 'secrets_unavailable' });
    expect(await source.store()).toBeInstanceOf(TokenStore);
    expect(ssmMock.commandCalls(GetParameterCommand)).toHaveLength(2);
  });

  it('offline, reads the client secret from secretEnv, else FORGEBRIDGE_OAUTH_CLIENT_SECRET', async () => {
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    tokenEndpoint();
    tokenEndpoint();
    const env = {
      IS_OFFLINE: 'true',
      BOT_SECRET: ' bot-secret ',
      FORGEBRIDGE_OAUTH_CLIENT_SECRET: 'default-secret',
    };
    const own = createTokenSource(
      { ...config, secretEnv: 'BOT_SECRET' },
      { documentClient, tableName: 't', env, connection: { dispatcher: agent } },
    );
    const fallback = createTokenSource(
      { provider: 'forge', clientId: 'other', site: SITE },
      { documentClient, tableName: 't', env, connection: { dispatcher: agent } },
    );
    await (await own.store()).get();
    await (await fallback.store()).get();
    expect(requests.map((request) => request.authorization)).toEqual([
      basic('ci-bot', 'bot-secret'),
      basic('other', 'default-secret'),
    ]);
    expect(ssmMock.calls()).toHaveLength(0);
  });

  it('offline, names the variable when it holds no secret', async () => {
    const source = createTokenSource(config, { documentClient, tableName: 't', env: { IS_OFFLINE: '1' } });
    await expect(source.store()).rejects.toMatchObject({
      code: 'secrets_missing',
      message: 'no secret in environment variable "FORGEBRIDGE_OAUTH_CLIENT_SECRET"',
    });
  });

  it('needs a secret parameter when not offline', () => {
    expect(() =>
      createTokenSource(
        { provider: 'forge', clientId: 'c', site: SITE },
        { documentClient, tableName: 't', env: {} },
      ),
    ).toThrow(new TypeError('"secretParameter" is required unless running offline'));
  });
});

describe('createTokenSources()', () => {
  it('builds one source per configured client, with the table and refresh window of the configuration', async () => {
    const now = Date.UTC(2026, 10, 21, 12);
    const expiresAt = now / 1000 + 400;
    ddbMock
      .on(GetCommand)
      .resolves({ Item: { pk: 'x', token: { access_token: 'old', expires_at: expiresAt }, version: 3 } });
    const env = { IS_OFFLINE: 'true', FORGEBRIDGE_OAUTH_CLIENT_SECRET: 's' };
    const clients = [config, { ...config, clientId: 'two', scope: undefined }] as OAuthClientConfig[];
    const narrow = createTokenSources(
      { tableName: 'tokens', refreshWindowSeconds: 300, clients },
      { documentClient, env, store: { now: () => now } },
    );
    expect(narrow.map((source) => source.key)).toEqual(['forge#ci-bot#read%3Aorg%20repo', 'forge#two#']);
    // 400 s from expiry: outside a 300 s window, nothing to do.
    expect((await (await narrow[1]!.store()).refresh()).outcome).toBe('fresh');
    expect(ddbMock.commandCalls(GetCommand)[0]!.args[0].input.TableName).toBe('tokens');

    tokenEndpoint();
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    const [wide] = createTokenSources(
      { tableName: 'tokens', refreshWindowSeconds: 600, clients },
      { documentClient, env, store: { now: () => now }, connection: { dispatcher: agent } },
    );
    // Inside a 600 s window: refreshed.
    expect((await (await wide!.store()).refresh()).outcome).toBe('refreshed');
    expect(
      createTokenSources(
        { tableName: 't', refreshWindowSeconds: undefined, clients: [] },
        { documentClient },
      ),
    ).toEqual([]);
  });
});
