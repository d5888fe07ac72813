import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenStore, TokenStoreConflictError } from '../../../../lib/aws/index.js';
import type { OAuthClientConfig } from '../../../../lib/aws/tokens/config.js';
import { refreshTokens } from '../../../../lib/aws/tokens/refresh.js';
import { clientTarget, createTokenSource } from '../../../../lib/aws/tokens/token-source.js';
import { tokenPartitionKey } from '../../../../lib/aws/tokens/token-store.js';
import { AccessToken, Client } from '../../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../../local-stack/authorization-server.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
let server: AuthorizationServer;
const SCOPE = 'forge:read';
const key = { provider: 'local', clientId: DEFAULT_CLIENT.client_id, scope: SCOPE };

beforeAll(async () => {
  server = await startAuthorizationServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => server.resetCounters());

/** The configured client of these tests, as `FORGEBRIDGE_OAUTH_CLIENTS` would give it. */
function clientConfig(overrides: Partial<OAuthClientConfig> = {}): OAuthClientConfig {
  return {
    provider: 'local',
    clientId: DEFAULT_CLIENT.client_id,
    site: server.issuer,
    scope: SCOPE,
    resource: FORGE_API_RESOURCE,
    ...overrides,
  };
}

/** A store as one Lambda would build it: its own DynamoDB client, its own OAuth client, no shared memory. */
function lambdaStore(tableName: string, options: { clientSecret?: string; pollMs?: number } = {}) {
  return new TokenStore<AccessToken>({
    ...clientTarget(clientConfig(), options.clientSecret ?? DEFAULT_CLIENT.client_secret),
    client: ddb.documentClient(),
    tableName,
    pollMs: options.pollMs ?? 50,
  });
}

function oauthClient() {
  return new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, { site: server.issuer });
}

describe('TokenStore against DynamoDB Local and oidc-provider', () => {
  it('round-trips toHash() through DynamoDB and fromHash()', async () => {
    const { tokens } = await ddb.tables();
    const token = await oauthClient().clientCredentials.getToken({
      scope: SCOPE,
      resource: FORGE_API_RESOURCE,
    });
    const writer = lambdaStore(tokens);
    expect(await writer.save(token, 0)).toBe(1);
    const stored = await lambdaStore(tokens).read();
    expect(stored?.version).toBe(1);
    expect(stored?.token).toBeInstanceOf(AccessToken);
    expect(stored?.token?.toHash()).toEqual(token.toHash());
    expect(stored?.token?.token).toBe(token.token);
    expect(stored?.token?.expiresAt).toBe(token.expiresAt);
  });

  it('loads a token item written with the Ruby gem’s to_hash shape', async () => {
    const { tokens } = await ddb.tables();
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const rubyHash = {
      access_token: 'ruby-written-token',
      refresh_token: null,
      expires_at: expiresAt,
      mode: 'header',
      header_format: 'Bearer %s',
      param_name: 'access_token',
      token_type: 'bearer',
      scope: SCOPE,
    };
    await ddb
      .documentClient()
      .send(new PutCommand({ TableName: tokens, Item: { pk: tokenPartitionKey(key), token: rubyHash } }));
    const store = lambdaStore(tokens);
    const token = await store.get();
    expect(token.token).toBe('ruby-written-token');
    expect(token.expiresAt).toBe(expiresAt);
    expect(token.toHash()).toEqual(rubyHash);
    expect(server.tokenRequests()).toBe(0);
  });

  it('detects a conditional-write conflict between two writers of the same version', async () => {
    const { tokens } = await ddb.tables();
    const oauth = oauthClient();
    const a = lambdaStore(tokens);
    const b = lambdaStore(tokens);
    await a.save(new AccessToken(oauth, 'v1', { expires_at: Math.floor(Date.now() / 1000) + 3600 }), 0);
    const seenByA = await a.read();
    const seenByB = await b.read();
    expect(seenByA?.version).toBe(1);
    expect(seenByB?.version).toBe(1);
    expect(await a.save(new AccessToken(oauth, 'from-a', { expires_in: 3600 }), 1)).toBe(2);
    const error = await b
      .save(new AccessToken(oauth, 'from-b', { expires_in: 3600 }), 1)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenStoreConflictError);
    expect(error).toMatchObject({ code: 'token_store_conflict' });
    expect((error as Error).message).not.toContain('from-b');
    const final = await lambdaStore(tokens).read();
    expect(final?.token?.token).toBe('from-a');
    expect(final?.version).toBe(2);
  });

  it('20 concurrent refreshers with no token stored make exactly 1 token request and agree on it', async () => {
    const { tokens } = await ddb.tables();
    const stores = Array.from({ length: 20 }, () => lambdaStore(tokens));
    const results = await Promise.all(stores.map((store) => store.get()));
    expect(server.tokenRequests()).toBe(1);
    expect(new Set(results.map((token) => token.token)).size).toBe(1);
    const stored = await lambdaStore(tokens).read();
    expect(stored?.version).toBe(1);
    expect(stored?.token?.token).toBe(results[0]?.token);
  });

  it('20 concurrent refreshers of an expired token make exactly 1 token request and lose no update', async () => {
    const { tokens } = await ddb.tables();
    const oauth = oauthClient();
    const seed = lambdaStore(tokens);
    await seed.save(new AccessToken(oauth, 'old-1', { expires_in: 3600 }), 0);
    await seed.save(new AccessToken(oauth, 'old-2', { expires_at: Math.floor(Date.now() / 1000) - 10 }), 1);
    const stores = Array.from({ length: 20 }, () => lambdaStore(tokens));
    const results = await Promise.all(stores.map((store) => store.refresh()));
    expect(server.tokenRequests()).toBe(1);
    expect(results.filter((result) => result.outcome === 'refreshed')).toHaveLength(1);
    // The others waited for it, or (on a loaded machine, starting late) first read the token it had already saved:
    // none served the expired one (`stale`) or fetched its own.
    expect(results.filter((result) => !['refreshed', 'waited', 'fresh'].includes(result.outcome))).toEqual(
      [],
    );
    expect(new Set(results.map((result) => result.token.token)).size).toBe(1);
    expect(results[0]?.token.token).not.toBe('old-2');
    const stored = await lambdaStore(tokens).read();
    expect(stored?.version).toBe(3);
  });

  it('20 concurrent refreshers of a token inside the window make 1 request; the others keep the old one', async () => {
    const { tokens } = await ddb.tables();
    const oauth = oauthClient();
    await lambdaStore(tokens).save(new AccessToken(oauth, 'expiring', { expires_in: 120 }), 0);
    const results = await Promise.all(Array.from({ length: 20 }, () => lambdaStore(tokens).refresh()));
    expect(server.tokenRequests()).toBe(1);
    const refreshed = results.filter((result) => result.outcome === 'refreshed');
    expect(refreshed).toHaveLength(1);
    // Every other one keeps the old token, still valid, instead of waiting for the new one; one that read the item
    // only after the refresh had been written (a slow start on a busy machine) has the new one, as fresh.
    const others = results.filter((result) => result.outcome !== 'refreshed');
    const newToken = refreshed[0]?.token.token;
    expect(newToken).not.toBe('expiring');
    expect(others).toHaveLength(19);
    for (const result of others) {
      expect([
        ['stale', 'expiring'],
        ['fresh', newToken],
      ]).toContainEqual([result.outcome, result.token.token]);
    }
    const stored = await lambdaStore(tokens).read();
    expect(stored).toMatchObject({ version: 2 });
    expect(stored?.token?.token).toBe(refreshed[0]?.token.token);
  });

  it('a warm store serves the token from memory, with no DynamoDB read and no token request', async () => {
    const { tokens } = await ddb.tables();
    const store = lambdaStore(tokens);
    const first = await store.get();
    server.resetCounters();
    // Were it read again, the missing item would make the store fetch a new token.
    await ddb
      .documentClient()
      .send(new DeleteCommand({ TableName: tokens, Key: { pk: tokenPartitionKey(key) } }));
    const again = await store.get();
    expect(again).toBe(first);
    expect(server.tokenRequests()).toBe(0);
  });

  it('the scheduled refresh renews expiring clients, skips fresh ones, and reports failing ones by store key', async () => {
    const { tokens } = await ddb.tables();
    const oauth = oauthClient();
    const fresh = { provider: 'local', clientId: DEFAULT_CLIENT.client_id, scope: 'forge:write' };
    const freshStore = new TokenStore({
      client: ddb.documentClient(),
      tableName: tokens,
      key: fresh,
      fromHash: (hash) => AccessToken.fromHash(oauth, hash),
      fetchToken: () => Promise.reject(new Error('must not be called')),
    });
    await freshStore.save(new AccessToken(oauth, 'fresh', { expires_in: 3600 }), 0);
    await lambdaStore(tokens).save(new AccessToken(oauth, 'expiring', { expires_in: 60 }), 0);
    const options = {
      documentClient: ddb.documentClient(),
      tableName: tokens,
      env: { IS_OFFLINE: 'true', GOOD_SECRET: DEFAULT_CLIENT.client_secret, WRONG_SECRET: 'wrong-secret' },
    };
    const run = await refreshTokens(
      [
        createTokenSource(clientConfig({ secretEnv: 'GOOD_SECRET' }), options),
        { key: freshStore.key, store: async () => freshStore },
        createTokenSource(clientConfig({ scope: 'other', secretEnv: 'WRONG_SECRET' }), options),
        createTokenSource(clientConfig({ scope: 'locked', secretEnv: 'UNSET_SECRET' }), options),
      ],
      { windowSeconds: 300 },
    );
    expect(run.reports.map((report) => report.status)).toEqual(['refreshed', 'fresh', 'failed', 'failed']);
    expect(run).toMatchObject({ refreshed: 1, failed: 2 });
    const otherKey = tokenPartitionKey({
      provider: 'local',
      clientId: DEFAULT_CLIENT.client_id,
      scope: 'other',
    });
    expect(run.reports[2]).toEqual({
      key: otherKey,
      status: 'failed',
      error: { code: 'refresh_failed', message: `token refresh failed for "${otherKey}"` },
    });
    expect(run.reports[3]).toEqual({
      key: tokenPartitionKey({ provider: 'local', clientId: DEFAULT_CLIENT.client_id, scope: 'locked' }),
      status: 'failed',
      error: { code: 'secrets_missing', message: 'no secret in environment variable "UNSET_SECRET"' },
    });
    expect(server.tokenRequests()).toBe(2);
    const renewed = await lambdaStore(tokens).read();
    expect(renewed?.version).toBe(2);
    expect(renewed?.token?.token).not.toBe('expiring');
    expect(JSON.stringify(run)).not.toContain('wrong-secret');
    expect(JSON.stringify(run)).not.toContain(renewed?.token?.token);
  });
});

describe('TokenStore across processes', () => {
  it('5 processes × 4 stores refreshing one expired token at once send exactly 1 token request', async () => {
    const { tokens } = await ddb.tables();
    const oauth = oauthClient();
    await lambdaStore(tokens).save(
      new AccessToken(oauth, 'expired', { expires_at: Math.floor(Date.now() / 1000) - 1 }),
      0,
    );
    server.resetCounters();
    const children = Array.from({ length: 5 }, () =>
      spawn(process.execPath, ['--import', 'tsx', 'test/helpers/aws-token-refresher.ts'], {
        env: {
          ...process.env,
          FB_ENDPOINT: ddb.endpoint,
          FB_TABLE: tokens,
          FB_ISSUER: server.issuer,
          FB_CLIENT_ID: DEFAULT_CLIENT.client_id,
          FB_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
          FB_SCOPE: SCOPE,
          FB_RESOURCE: FORGE_API_RESOURCE,
          FB_STORES: '4',
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    try {
      const outputs = children.map((child) =>
        createInterface({ input: child.stdout! })[Symbol.asyncIterator](),
      );
      for (const lines of outputs) expect((await lines.next()).value).toBe('ready');
      for (const child of children) child.stdin!.write('go\n');
      const results = await Promise.all(
        outputs.map(
          async (lines) =>
            JSON.parse(String((await lines.next()).value)) as { tokens: string[]; outcomes: string[] },
        ),
      );
      const allTokens = results.flatMap((result) => result.tokens);
      const outcomes = results.flatMap((result) => result.outcomes);
      expect(allTokens).toHaveLength(20);
      expect(server.tokenRequests()).toBe(1);
      expect(new Set(allTokens).size).toBe(1);
      expect(allTokens[0]).not.toBe('expired');
      expect(outcomes.filter((outcome) => outcome === 'refreshed')).toHaveLength(1);
      expect((await lambdaStore(tokens).read())?.version).toBe(2);
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill();
    }
  });
});
