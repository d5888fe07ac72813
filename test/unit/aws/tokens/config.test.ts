import { describe, expect, it } from 'vitest';
import { readForgeApiConfig, readOAuthClients, readTokenConfig } from '../../../../lib/aws/tokens/config.js';

const bot = { provider: 'forge', clientId: 'bot', site: 'https://forge.example.com' };

describe('readOAuthClients()', () => {
  it('is empty when FORGEBRIDGE_OAUTH_CLIENTS is unset or empty', () => {
    expect(readOAuthClients({})).toEqual([]);
    expect(readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: '' })).toEqual([]);
  });

  it('parses every field of each client, and drops empty optional ones', () => {
    const full = {
      ...bot,
      scope: 'repo',
      resource: 'urn:api',
      tokenUrl: 'oauth/token',
      secretParameter: '/p/bot',
      secretEnv: 'BOT_SECRET',
    };
    const clients = readOAuthClients({
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        full,
        { ...bot, clientId: 'other', scope: '', resource: null },
      ]),
    });
    expect(clients).toEqual([full, { ...bot, clientId: 'other' }]);
  });

  it('names the malformed variable or field', () => {
    const read = (value: string) => () => readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: value });
    const notArray = new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" must be a json array');
    expect(read('{')).toThrow(notArray);
    expect(read('{}')).toThrow(notArray);
    expect(read('null')).toThrow(notArray);
    expect(read('[null]')).toThrow(new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0]" must be an object'));
    expect(read(JSON.stringify([bot, 'x']))).toThrow(
      new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[1]" must be an object'),
    );
    expect(read(JSON.stringify([{ provider: 'forge', site: 'https://f' }]))).toThrow(
      new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" is required'),
    );
    expect(read(JSON.stringify([{ ...bot, clientId: 1 }]))).toThrow(
      new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" must be a string'),
    );
    expect(read(JSON.stringify([{ ...bot, scope: ['repo'] }]))).toThrow(
      new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].scope" must be a string'),
    );
  });
});

describe('readTokenConfig()', () => {
  it('reads the table, the refresh window and the clients', () => {
    expect(
      readTokenConfig({
        FORGEBRIDGE_TOKEN_TABLE: 'tokens',
        FORGEBRIDGE_REFRESH_WINDOW_SECONDS: '600',
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([bot]),
      }),
    ).toEqual({ tableName: 'tokens', refreshWindowSeconds: 600, clients: [bot] });
    expect(readTokenConfig({ FORGEBRIDGE_TOKEN_TABLE: 'tokens' })).toEqual({
      tableName: 'tokens',
      refreshWindowSeconds: undefined,
      clients: [],
    });
  });

  it('names a missing table or a bad window', () => {
    expect(() => readTokenConfig({})).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_TOKEN_TABLE" is required'),
    );
    expect(() =>
      readTokenConfig({ FORGEBRIDGE_TOKEN_TABLE: 't', FORGEBRIDGE_REFRESH_WINDOW_SECONDS: 'soon' }),
    ).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_REFRESH_WINDOW_SECONDS" must be a positive number'),
    );
  });
});

describe('readForgeApiConfig()', () => {
  const env = {
    FORGEBRIDGE_FORGE_API_URL: 'https://forge.example.com/api/v1//',
    FORGEBRIDGE_TOKEN_TABLE: 'tokens',
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([bot, { ...bot, provider: 'other', clientId: 'o' }]),
  };

  it('takes the first client, and the API URL without trailing slashes', () => {
    const config = readForgeApiConfig(env);
    expect(config.forgeApiUrl).toBe('https://forge.example.com/api/v1');
    expect(config.client).toEqual(bot);
    expect(config).toMatchObject({ tableName: 'tokens', refreshWindowSeconds: undefined });
    expect(config.clients).toHaveLength(2);
  });

  it('takes the first client of FORGEBRIDGE_OAUTH_PROVIDER', () => {
    expect(readForgeApiConfig({ ...env, FORGEBRIDGE_OAUTH_PROVIDER: 'other' }).client).toMatchObject({
      clientId: 'o',
    });
  });

  it('names a missing API URL, and a client list without a matching client', () => {
    expect(() => readForgeApiConfig({ ...env, FORGEBRIDGE_FORGE_API_URL: '' })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_FORGE_API_URL" is required'),
    );
    const noClient = new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" names no client');
    expect(() => readForgeApiConfig({ ...env, FORGEBRIDGE_OAUTH_PROVIDER: 'gitea' })).toThrow(noClient);
    expect(() => readForgeApiConfig({ ...env, FORGEBRIDGE_OAUTH_CLIENTS: '[]' })).toThrow(noClient);
  });
});

describe('readOAuthClients() with GitHub App entries', () => {
  const app = { kind: 'github_app', provider: 'github', appId: '12345', installationId: 678 };
  const read = (...entries: unknown[]) =>
    readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify(entries) });
  const fails = (entry: unknown, message: string) =>
    expect(() => read(bot, entry)).toThrow(new TypeError(message));

  it('reads both kinds from one list; an OAuth client with or without its kind', () => {
    const [oauth, explicit, github] = read(bot, { ...bot, kind: 'oauth_client_credentials' }, app);
    expect(oauth).toEqual(bot);
    expect(explicit).toEqual({ ...bot, kind: 'oauth_client_credentials' });
    expect(github).toEqual(app);
  });

  it('parses every GitHub App field: numbers as strings or numbers, the API URL without trailing slashes', () => {
    const full = {
      kind: 'github_app',
      provider: 'ghes',
      appId: 42,
      account: 'octo-org',
      accountType: 'org',
      privateKeyParameter: '/fb/github-app/key',
      privateKeyEnv: 'APP_KEY',
      apiUrl: 'https://ghe.example.com/api/v3/',
      repositories: ['hello', 'hello.js'],
      repositoryIds: [1, '2'],
      permissions: { issues: 'read', pull_requests: 'write' },
    };
    expect(read(full)).toEqual([
      {
        ...full,
        appId: '42',
        apiUrl: 'https://ghe.example.com/api/v3',
        repositoryIds: [1, 2],
      },
    ]);
    expect(read({ ...app, installationId: '678', appId: 'Iv1.abc' })).toEqual([{ ...app, appId: 'Iv1.abc' }]);
  });

  it('names the malformed GitHub App field', () => {
    const at = '"FORGEBRIDGE_OAUTH_CLIENTS[1]';
    fails({ ...bot, kind: 'github' }, `${at}.kind" must be "oauth_client_credentials" or "github_app"`);
    fails({ ...app, provider: undefined }, `${at}.provider" is required`);
    fails({ ...app, appId: undefined }, `${at}.appId" is required`);
    fails({ ...app, appId: -1 }, `${at}.appId" must be a positive integer`);
    fails({ ...app, appId: 'a b' }, `${at}.appId" must be an app id or client id`);
    fails({ ...app, installationId: undefined }, `${at}.installationId" or ${at}.account" is required`);
    fails({ ...app, account: 'octo' }, `${at}.installationId" and ${at}.account" are exclusive`);
    fails({ ...app, installationId: 1.5 }, `${at}.installationId" must be a positive integer`);
    fails({ ...app, installationId: 'x' }, `${at}.installationId" must be a positive integer`);
    fails(
      { ...app, installationId: undefined, account: 'octo/x' },
      `${at}.account" must be a user or organization login`,
    );
    fails(
      { ...app, installationId: undefined, account: 'octo', accountType: 'team' },
      `${at}.accountType" must be "org" or "user"`,
    );
    fails({ ...app, privateKeyParameter: 7 }, `${at}.privateKeyParameter" must be a string`);
    fails({ ...app, apiUrl: 'ftp://x' }, `${at}.apiUrl" must be an http(s) URL`);
    fails({ ...app, apiUrl: 'not a url' }, `${at}.apiUrl" must be an http(s) URL`);
    fails({ ...app, repositories: [] }, `${at}.repositories" must be an array of 1 to 500 repository names`);
    fails(
      { ...app, repositories: 'hello' },
      `${at}.repositories" must be an array of 1 to 500 repository names`,
    );
    fails(
      { ...app, repositories: ['octo/hello'] },
      `${at}.repositories[0]" must be a repository name without its owner`,
    );
    fails({ ...app, repositoryIds: [1, 0] }, `${at}.repositoryIds[1]" must be a positive integer`);
    fails(
      { ...app, permissions: ['issues'] },
      `${at}.permissions" must be an object of permission names and levels`,
    );
    fails({ ...app, permissions: {} }, `${at}.permissions" must be an object of permission names and levels`);
    fails({ ...app, permissions: { Issues: 'read' } }, `${at}.permissions" has an invalid permission name`);
    fails(
      { ...app, permissions: { issues: 'all' } },
      `${at}.permissions.issues" must be "read", "write" or "admin"`,
    );
  });

  it('gives a subscriber the GitHub App entry of its provider', () => {
    const config = readForgeApiConfig({
      FORGEBRIDGE_FORGE_API_URL: 'https://api.github.com',
      FORGEBRIDGE_TOKEN_TABLE: 'tokens',
      FORGEBRIDGE_OAUTH_PROVIDER: 'github',
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([bot, app]),
    });
    expect(config.client).toEqual(app);
  });
});
