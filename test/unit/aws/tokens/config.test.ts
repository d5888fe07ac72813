import { describe, expect, it } from 'vitest';
import { readForgeApiConfig, readOAuthClients, readTokenConfig } from '../../../../lib/aws/index.js';

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
    expect(readForgeApiConfig({ ...env, FORGEBRIDGE_OAUTH_PROVIDER: 'other' }).client.clientId).toBe('o');
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
