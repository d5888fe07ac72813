// GitHub App installation tokens against real local peers: DynamoDB Local (the token table) and the local forge
// API on 127.0.0.1, whose app routes check the app JWT the way GitHub does (local-stack/github-app-server.ts). The
// app's key pair is made here at test time; the private key reaches the sources as the offline secret.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
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
import { ForgeRateLimitError } from '../../../../lib/aws/errors.js';
import { ForgeGovernor } from '../../../../lib/aws/governor/governor.js';
import { readGovernorConfig } from '../../../../lib/aws/governor/limits.js';
import {
  GitHubAppError,
  type LoggerLike,
  type RefreshRun,
  TokenStoreError,
} from '../../../../lib/aws/index.js';
import type { GitHubAppConfig, OAuthClientConfig } from '../../../../lib/aws/tokens/config.js';
import { refreshTokens } from '../../../../lib/aws/tokens/refresh.js';
import { createTokenSource } from '../../../../lib/aws/tokens/token-source.js';
import { tokenPartitionKey } from '../../../../lib/aws/tokens/token-store.js';
import type { HttpRequest } from '../../../../lib/oauth2/types.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../../local-stack/authorization-server.js';
import { type ForgeApi, startForgeApi } from '../../../../local-stack/forge-api.js';
import { createGitHubApps, type GitHubApps } from '../../../../local-stack/github-app-server.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { registerSecret } from '../../../helpers/secrets.js';

const APP_ID = '12345';
const ORG_INSTALLATION = 678;
const USER_INSTALLATION = 910;
const ddb = useDynamoDbLocal();
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  // GitHub hands app keys out as PKCS#1 ("BEGIN RSA PRIVATE KEY").
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const keyBody = privateKey.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
registerSecret(privateKey, ...keyBody);

/** How far the forge's clock is from ours, in ms (a Lambda clock ahead of the forge's is a negative offset). */
let forgeClockOffsetMs = 0;
let apps: GitHubApps;
let forgeApi: ForgeApi;
let tokens: string;
/** Authorization headers our sources sent (the app JWTs), seen through the connection's `onRequest` hook. */
let sent: string[];
/** Every line our recording logger was given. */
let logged: string[];

const logger: LoggerLike = {
  info: (...args) => logged.push(JSON.stringify(args)),
  warn: (...args) => logged.push(JSON.stringify(args)),
  error: (...args) => logged.push(JSON.stringify(args)),
};

function appConfig(overrides: Partial<GitHubAppConfig> = {}): GitHubAppConfig {
  return {
    kind: 'github_app',
    provider: 'github',
    appId: APP_ID,
    installationId: ORG_INSTALLATION,
    apiUrl: forgeApi.url,
    privateKeyEnv: 'APP_PRIVATE_KEY',
    ...overrides,
  };
}

/** A source as one Lambda builds it: its own DynamoDB client, its own store; `aheadMs` moves its clock. */
function lambdaSource(config: GitHubAppConfig = appConfig(), aheadMs = 0) {
  return createTokenSource(config, {
    documentClient: ddb.documentClient(),
    tableName: tokens,
    logger,
    env: { IS_OFFLINE: 'true', APP_PRIVATE_KEY: privateKey },
    connection: {
      onRequest: (request: HttpRequest) => {
        sent.push(request.headers.authorization ?? '');
      },
    },
    store: { pollMs: 50, ...(aheadMs === 0 ? {} : { now: () => Date.now() + aheadMs }) },
  });
}

/** The app entry that names the account its installation is looked up by, instead of the installation id. */
function byAccount(account: string, overrides: Partial<GitHubAppConfig> = {}): GitHubAppConfig {
  const { installationId: _, ...config } = appConfig(overrides);
  return { ...config, account };
}

async function storedItem(config: GitHubAppConfig = appConfig()) {
  const source = lambdaSource(config);
  return (await ddb.documentClient().send(new GetCommand({ TableName: tokens, Key: { pk: source.key } })))
    .Item;
}

function jwtsSent(): string[] {
  return sent
    .map((header) => header.replace(/^Bearer /, ''))
    .filter((value) => value.split('.').length === 3);
}

let authorizationServer: AuthorizationServer;

beforeAll(async () => {
  apps = createGitHubApps({ now: () => Date.now() + forgeClockOffsetMs });
  authorizationServer = await startAuthorizationServer();
  // One forge API for both kinds: the authorization server's tokens and the installation tokens it issued.
  forgeApi = await startForgeApi({
    issuer: authorizationServer.issuer,
    jwksUri: authorizationServer.jwksUri,
    audience: FORGE_API_RESOURCE,
    githubApps: apps,
  });
  apps.addInstallation({
    id: ORG_INSTALLATION,
    appId: APP_ID,
    account: { login: 'octo-org', type: 'Organization' },
    permissions: { issues: 'write', metadata: 'read' },
    repositories: ['hello', 'world'],
  });
  apps.addInstallation({ id: USER_INSTALLATION, appId: APP_ID, account: { login: 'octocat', type: 'User' } });
});
afterAll(async () => {
  await forgeApi?.stop();
  await authorizationServer?.stop();
});
beforeEach(async () => {
  forgeClockOffsetMs = 0;
  apps.registerApp(APP_ID, createPublicKey(publicKey));
  apps.resetCounters();
  authorizationServer.resetCounters();
  sent = [];
  logged = [];
  tokens = (await ddb.tables()).tokens;
});

describe('GitHub App installation tokens against DynamoDB Local and the local forge API', () => {
  it('fetches an installation token, stores it toHash-shaped, and calls the forge API with it', async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await (await lambdaSource().store()).get();
    expect(apps.accessTokenRequests()).toBe(1);
    expect(token.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    expect(token.expiresAt).toBeGreaterThanOrEqual(before + 3600);
    expect(token.expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);
    const item = await storedItem();
    expect(item?.pk).toBe(
      tokenPartitionKey({
        provider: 'github',
        clientId: `app/${APP_ID}`,
        scope: `installation/${ORG_INSTALLATION}`,
      }),
    );
    expect(item).toMatchObject({ version: 1, tokenExpiresAt: token.expiresAt });
    expect(item?.token).toEqual({
      access_token: token.token,
      refresh_token: null,
      expires_at: token.expiresAt,
      mode: 'header',
      header_format: 'Bearer %s',
      param_name: 'access_token',
      token_type: 'bearer',
      permissions: { issues: 'write', metadata: 'read' },
      repository_selection: 'selected',
    });
    // The request carried the headers GitHub asks for, and a Bearer app JWT.
    expect(sent).toEqual([expect.stringMatching(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/)]);

    const response = await token.get(`${forgeApi.url}/repos/octo-org/hello/issues/3`);
    expect(response.status).toBe(200);
    expect(forgeApi.requests().at(-1)).toMatchObject({
      method: 'GET',
      path: '/repos/octo-org/hello/issues/3',
      status: 200,
      clientId: `app/${APP_ID}`,
      installationId: ORG_INSTALLATION,
    });
    // A stored token loads in another Lambda and is accepted as well, with no new token request.
    const again = await (await lambdaSource().store()).get();
    expect(again.token).toBe(token.token);
    expect((await again.get(`${forgeApi.url}/repos/octo-org/hello/issues/4`)).status).toBe(200);
    expect(apps.accessTokenRequests()).toBe(1);
  });

  it('refreshes within the store’s margin before expiry, and not while the token is fresh', async () => {
    const first = await (await lambdaSource().store()).get();
    // 50 minutes later (the forge's clock and ours alike): 10 minutes left, outside the 5-minute margin.
    forgeClockOffsetMs = 3000_000;
    const later = await (await lambdaSource(appConfig(), 3000_000).store()).refresh();
    expect(later).toMatchObject({ outcome: 'fresh', version: 1 });
    expect(later.token.token).toBe(first.token);
    expect(apps.accessTokenRequests()).toBe(1);
    // 56 minutes 40 s later: 200 s left, inside the margin: one new token, while the old one is still valid.
    forgeClockOffsetMs = 3400_000;
    const old = apps.verifyInstallationToken(first.token);
    expect(old).toBeDefined();
    const renewed = await (await lambdaSource(appConfig(), 3400_000).store()).refresh();
    expect(renewed).toMatchObject({ outcome: 'refreshed', version: 2 });
    expect(renewed.token.token).not.toBe(first.token);
    expect(renewed.token.expiresAt).toBeGreaterThan((first.expiresAt as number) + 3000);
    expect(apps.accessTokenRequests()).toBe(2);
    expect((await storedItem())?.token?.access_token).toBe(renewed.token.token);
  });

  it('20 concurrent readers in 20 Lambdas make exactly 1 access_tokens request, fresh and near expiry alike', async () => {
    const readers = Array.from({ length: 20 }, () => lambdaSource());
    const results = await Promise.all(readers.map(async (source) => (await source.store()).get()));
    expect(apps.accessTokenRequests()).toBe(1);
    expect(new Set(results.map((token) => token.token)).size).toBe(1);
    expect(await storedItem()).toMatchObject({ version: 1 });

    forgeClockOffsetMs = 3500_000;
    const late = Array.from({ length: 20 }, () => lambdaSource(appConfig(), 3500_000));
    const renewed = await Promise.all(late.map(async (source) => (await source.store()).refresh()));
    expect(apps.accessTokenRequests()).toBe(2);
    expect(renewed.filter((result) => result.outcome === 'refreshed')).toHaveLength(1);
    for (const result of renewed) {
      // The others keep the old token while it is valid, or take the new one.
      expect([results[0]?.token, renewed.find((r) => r.outcome === 'refreshed')?.token.token]).toContain(
        result.token.token,
      );
    }
    expect(await storedItem()).toMatchObject({ version: 2 });
  });

  it('works with a Lambda clock 30 s ahead of the forge’s (iat is backdated 60 s); 90 s ahead is refused', async () => {
    forgeClockOffsetMs = -30_000;
    const token = await (await lambdaSource().store()).get();
    expect(token.token).toMatch(/^ghs_/);
    expect(apps.accessTokenRequests()).toBe(1);

    forgeClockOffsetMs = -90_000;
    const error = await (await lambdaSource(appConfig({ installationId: USER_INSTALLATION })).store())
      .get()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as Error).cause).toBeInstanceOf(GitHubAppError);
    expect((error as Error).cause).toMatchObject({
      status: 401,
      message: `installation token request of app "${APP_ID}" failed: 401 "'Issued at' claim ('iat') must be an Integer representing a time in the past"`,
    });

    // A Lambda clock 5 minutes behind the forge's: the JWT still ends within its 10 minutes.
    forgeClockOffsetMs = 300_000;
    const behind = await (await lambdaSource(appConfig({ installationId: USER_INSTALLATION })).store()).get();
    expect(behind.token).toMatch(/^ghs_/);
  });

  it('a revoked key gives a clear error with the status, and neither the key nor the JWT in it or in any log line', async () => {
    apps.revokeKey(APP_ID);
    const stdout: MockInstance<typeof process.stdout.write> = vi.spyOn(process.stdout, 'write');
    const stderr: MockInstance<typeof process.stderr.write> = vi.spyOn(process.stderr, 'write');
    let run: RefreshRun;
    let error: unknown;
    try {
      const source = lambdaSource();
      run = await refreshTokens([source], { logger });
      error = await (await source.store()).get().catch((caught: unknown) => caught);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    const key = lambdaSource().key;
    const reason = `installation token request of app "${APP_ID}" failed: 401 "A JSON web token could not be decoded"`;
    expect(run.reports).toEqual([
      {
        key,
        status: 'failed',
        error: { code: 'refresh_failed', message: `token refresh failed for "${key}": ${reason}` },
      },
    ]);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as Error).cause).toMatchObject({
      name: 'GitHubAppError',
      code: 'github_app_failed',
      status: 401,
    });
    expect(((error as Error).cause as Error).message).toBe(reason);
    expect(logged).toContainEqual(
      JSON.stringify(['token refresh failed', { key, code: 'refresh_failed', reason }]),
    );

    const jwts = jwtsSent();
    expect(jwts).toHaveLength(2);
    const everything = [
      JSON.stringify(run),
      String(error),
      String((error as Error).cause),
      JSON.stringify((error as Error).cause),
      ((error as Error).cause as Error).stack ?? '',
      ...logged,
      ...stdout.mock.calls.map(([chunk]) => String(chunk)),
      ...stderr.mock.calls.map(([chunk]) => String(chunk)),
    ].join('\n');
    for (const secret of [...jwts, privateKey, ...keyBody]) expect(everything).not.toContain(secret);
    // Only the released lease's trace is stored: no token.
    const item = await storedItem();
    expect(item).toMatchObject({ version: 0 });
    expect(item).not.toHaveProperty('token');
  });

  it('names the status and the forge’s message for an unknown installation and a narrowing it cannot grant', async () => {
    const missing = await (await lambdaSource(appConfig({ installationId: 4040 })).store())
      .get()
      .catch((caught: unknown) => caught);
    expect(((missing as Error).cause as Error).message).toBe(
      `installation token request of app "${APP_ID}" failed: 404 "Not Found"`,
    );
    const wide = await (await lambdaSource(appConfig({ repositories: ['elsewhere'] })).store())
      .get()
      .catch((caught: unknown) => caught);
    expect((wide as Error).cause).toMatchObject({ status: 422 });
    expect(((wide as Error).cause as Error).message).toContain(
      '422 "There is at least one repository that does not exist or is not accessible to the parent installation."',
    );
  });

  it('narrows the token to repositories and permissions, under its own key', async () => {
    const narrow = appConfig({ repositories: ['hello'], permissions: { issues: 'read' } });
    const token = await (await lambdaSource(narrow).store()).get();
    expect(token.params).toMatchObject({ permissions: { issues: 'read' }, repository_selection: 'selected' });
    expect(apps.verifyInstallationToken(token.token)?.permissions).toEqual({ issues: 'read' });
    expect(lambdaSource(narrow).key).not.toBe(lambdaSource().key);
    const wide = await (await lambdaSource().store()).get();
    expect(wide.token).not.toBe(token.token);
    expect(apps.accessTokenRequests()).toBe(2);
  });

  it('looks the installation up by account with the app JWT, org first, once per process', async () => {
    const start = forgeApi.requests().length;
    const byOrg = lambdaSource(byAccount('octo-org'));
    const store = await byOrg.store();
    await store.get();
    await store.refresh({ force: true });
    const byUser = lambdaSource(byAccount('octocat'));
    const user = await (await byUser.store()).get();
    const paths = forgeApi
      .requests()
      .slice(start)
      .map((request) => `${request.method} ${request.path} ${request.status}`);
    expect(paths).toEqual([
      'GET /orgs/octo-org/installation 200',
      `POST /app/installations/${ORG_INSTALLATION}/access_tokens 201`,
      `POST /app/installations/${ORG_INSTALLATION}/access_tokens 201`,
      'GET /orgs/octocat/installation 404',
      'GET /users/octocat/installation 200',
      `POST /app/installations/${USER_INSTALLATION}/access_tokens 201`,
    ]);
    expect(apps.verifyInstallationToken(user.token)?.installationId).toBe(USER_INSTALLATION);
    expect(byUser.key).toBe(
      tokenPartitionKey({ provider: 'github', clientId: `app/${APP_ID}`, scope: 'account/octocat' }),
    );
    const unknown = await (await lambdaSource(byAccount('nobody', { accountType: 'user' })).store())
      .get()
      .catch((caught: unknown) => caught);
    expect(((unknown as Error).cause as Error).message).toBe(
      `installation lookup of app "${APP_ID}" for account "nobody" failed: 404 "Not Found"`,
    );
  });

  it("takes the token exchange's turn with the installation's forge API governor: a stop in force holds it", async () => {
    const config = appConfig({ repositories: ['governed'] });
    const governed = (maxWaitMs: number) =>
      createTokenSource(config, {
        documentClient: ddb.documentClient(),
        tableName: tokens,
        logger,
        env: { IS_OFFLINE: 'true', APP_PRIVATE_KEY: privateKey },
        governor: { ...readGovernorConfig({}), maxWaitMs },
      });
    const source = governed(100);
    // Another instance was told to wait 10 minutes (a secondary limit): the exchange does not go out.
    const other = new ForgeGovernor({
      client: ddb.documentClient(),
      tableName: tokens,
      owner: source.key,
      limits: { concurrency: 10, budgets: [] },
    });
    await (await other.acquire('GET')).release({
      status: 403,
      headers: new Headers({ 'retry-after': '600' }),
    });
    const start = forgeApi.requests().length;
    const refused = await (await source.store()).get().catch((caught: unknown) => caught);
    expect((refused as Error).cause).toBeInstanceOf(ForgeRateLimitError);
    expect((refused as { cause: ForgeRateLimitError }).cause.limit).toBe('retry-after');
    expect(forgeApi.requests().slice(start)).toEqual([]);
  });
});

describe('the functions with both kinds in one FORGEBRIDGE_OAUTH_CLIENTS list', { timeout: 30_000 }, () => {
  const context = {
    functionName: 'forgebridge-test-refresh',
    awsRequestId: 'request-1',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:forgebridge-test-refresh',
    memoryLimitInMB: '256',
    functionVersion: '$LATEST',
    getRemainingTimeInMillis: () => 10_000,
  } as unknown as Context;
  let stdout: MockInstance<typeof process.stdout.write>;
  let stderr: MockInstance<typeof process.stderr.write>;

  const oauthClient = (): OAuthClientConfig => ({
    provider: 'forge',
    clientId: DEFAULT_CLIENT.client_id,
    scope: 'forge:read',
    resource: FORGE_API_RESOURCE,
    site: authorizationServer.issuer,
    tokenUrl: authorizationServer.tokenEndpoint,
  });
  // As a user writes it: no privateKeyEnv, so offline the key is read from FORGEBRIDGE_GITHUB_APP_PRIVATE_KEY.
  const githubApp = () => ({
    kind: 'github_app',
    provider: 'github',
    appId: Number(APP_ID),
    installationId: ORG_INSTALLATION,
    apiUrl: `${forgeApi.url}/`,
    privateKeyParameter: '/forgebridge/github-app/private-key',
  });

  async function load<T>(module: string, env: Record<string, string> = {}): Promise<T> {
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
      FORGEBRIDGE_GITHUB_APP_PRIVATE_KEY: privateKey,
      FORGEBRIDGE_TOKEN_TABLE: tokens,
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([oauthClient(), githubApp()]),
      ...env,
    })) {
      vi.stubEnv(name, value);
    }
    return (await import(module)) as T;
  }

  /** Everything the function wrote: Powertools writes info lines to stdout and error lines to stderr. */
  const written = () =>
    [...stdout.mock.calls, ...stderr.mock.calls].map(([chunk]) => String(chunk)).join('\n');

  function logLines(): Record<string, unknown>[] {
    return [...stdout.mock.calls, ...stderr.mock.calls]
      .flatMap(([chunk]) => String(chunk).split('\n'))
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  beforeEach(() => {
    stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => {
    stdout.mockRestore();
    stderr.mockRestore();
    vi.unstubAllEnvs();
  });

  it('the scheduled refresh renews an OAuth client and a GitHub App, then finds both fresh', async () => {
    type Refresh = { handler: (event: unknown, context: Context) => Promise<RefreshRun> };
    const { handler } = await load<Refresh>('../../../../functions/refresh/handler.js');
    const first = await handler({}, context);
    const oauthKey = tokenPartitionKey(oauthClient());
    const appKey = tokenPartitionKey({
      provider: 'github',
      clientId: `app/${APP_ID}`,
      scope: `installation/${ORG_INSTALLATION}`,
    });
    expect(first.reports.map(({ key, status }) => ({ key, status }))).toEqual([
      { key: oauthKey, status: 'refreshed' },
      { key: appKey, status: 'refreshed' },
    ]);
    expect(first).toMatchObject({ refreshed: 2, failed: 0 });
    expect(authorizationServer.tokenRequests()).toBe(1);
    expect(apps.accessTokenRequests()).toBe(1);
    const second = await handler({}, context);
    expect(second.reports.map((report) => report.status)).toEqual(['fresh', 'fresh']);
    expect(authorizationServer.tokenRequests()).toBe(1);
    expect(apps.accessTokenRequests()).toBe(1);
    const stored = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: tokens, Key: { pk: appKey } }));
    expect(stored.Item?.token).toMatchObject({
      access_token: expect.stringMatching(/^ghs_/),
      token_type: 'bearer',
    });
    expect(logLines().filter((line) => line.message === 'token refresh')).toHaveLength(4);
    expect(written()).not.toContain(String(stored.Item?.token?.access_token));
    for (const secret of [privateKey, ...keyBody]) expect(written()).not.toContain(secret);
  });

  it('the scheduled refresh fails the invocation when the app’s key is revoked, and still renews the OAuth client', async () => {
    apps.revokeKey(APP_ID);
    type Refresh = { handler: (event: unknown, context: Context) => Promise<RefreshRun> };
    const { handler } = await load<Refresh>('../../../../functions/refresh/handler.js');
    const error = await handler({}, context).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TokenRefreshError', message: '1 of 2 token refreshes failed' });
    const run = (error as { run: RefreshRun }).run;
    expect(run.reports.map((report) => report.status)).toEqual(['refreshed', 'failed']);
    expect(run.reports[1]?.error?.message).toContain('401 "A JSON web token could not be decoded"');
    const failed = logLines().find((line) => line.message === 'token refresh failed');
    expect(failed).toMatchObject({
      code: 'refresh_failed',
      reason: `installation token request of app "${APP_ID}" failed: 401 "A JSON web token could not be decoded"`,
    });
    for (const secret of [privateKey, ...keyBody]) expect(written()).not.toContain(secret);
    expect(written()).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
  });

  it('the example subscriber calls the forge API with the GitHub App token when its provider is the app', async () => {
    type Subscriber = { handler: (event: unknown, context: Context) => Promise<void> };
    const { handler } = await load<Subscriber>('../../../../functions/subscriber/handler.js', {
      FORGEBRIDGE_FORGE_API_URL: forgeApi.url,
      FORGEBRIDGE_OAUTH_PROVIDER: 'github',
    });
    await handler(
      {
        source: 'forge.webhooks',
        'detail-type': 'issues.opened',
        detail: {
          delivery: 'd-app-1',
          event: 'issues',
          action: 'opened',
          payload: { action: 'opened', issue: { number: 12 }, repository: { full_name: 'octo-org/hello' } },
        },
      },
      context,
    );
    expect(apps.accessTokenRequests()).toBe(1);
    expect(authorizationServer.tokenRequests()).toBe(0);
    expect(forgeApi.requests().at(-1)).toMatchObject({
      method: 'GET',
      path: '/repos/octo-org/hello/issues/12',
      status: 200,
      clientId: `app/${APP_ID}`,
      installationId: ORG_INSTALLATION,
    });
    expect(logLines().find((line) => line.message === 'forge api called')).toMatchObject({
      delivery: 'd-app-1',
      status: 200,
      title: 'Issue 12 of octo-org/hello',
    });
  });
});
