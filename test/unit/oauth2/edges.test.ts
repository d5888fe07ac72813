// Edge cases of small exported pieces: the registries, the grants that have no authorization URL or token
// request, discovery's fallbacks and the transport's multi-value response headers.
import { afterEach, describe, expect, it } from 'vitest';
import {
  Client,
  configure,
  DiscoveryError,
  ExtensionRegistry,
  resetConfig,
} from '../../../lib/oauth2/index.js';
import { JSON_HEADERS, mockAgent, mockClient, SITE } from './helpers.js';

afterEach(() => resetConfig());

describe('ExtensionRegistry', () => {
  it('adds, finds, deletes and clears named functions', () => {
    const registry = new ExtensionRegistry<(value: never) => unknown>();
    registry.add('a', () => 1).add('b', () => 2);
    expect(registry.has('a')).toBe(true);
    expect(registry.delete('a')).toBe(true);
    expect(registry.delete('a')).toBe(false);
    registry.clear();
    expect(registry.has('b')).toBe(false);
    expect(() => registry.add('', () => 1)).toThrow(new TypeError('"name" must be a non-empty string'));
    expect(() => registry.add('c', 1 as never)).toThrow(new TypeError('"fn" must be a function'));
  });
});

describe('configure()', () => {
  it('rejects a non-boolean "silenceExtraTokensWarning"', () => {
    expect(() => configure((c) => Object.assign(c, { silenceExtraTokensWarning: 'no' }))).toThrow(
      new TypeError('"silenceExtraTokensWarning" must be a boolean'),
    );
  });

  it('rejects filtered debug keys that are not strings', () => {
    expect(() => configure((c) => Object.assign(c, { filteredDebugKeys: [1] }))).toThrow(
      new TypeError('"filteredDebugKeys" must be an array of strings'),
    );
  });
});

describe('grants without an authorization URL', () => {
  const client = new Client('id', 'secret', { site: SITE });

  it('password and client credentials have none', () => {
    expect(() => client.password.authorizeUrl()).toThrow(
      new TypeError('the password grant has no authorization URL'),
    );
    expect(() => client.clientCredentials.authorizeUrl()).toThrow(
      new TypeError('the client credentials grant has no authorization URL'),
    );
  });

  it('the password grant checks its username and password', () => {
    expect(() => client.password.getToken('', 'pw')).toThrow(
      new TypeError('"username" must be a non-empty string'),
    );
    expect(() => client.password.getToken('user', 1 as never)).toThrow(
      new TypeError('"password" must be a string'),
    );
  });

  it('the implicit authorize URL refuses a client secret', () => {
    expect(() => client.implicit.authorizeUrl({ client_secret: 'x' })).toThrow(
      new TypeError('"client_secret" is not allowed in the authorize URL'),
    );
  });
});

describe('Client.discover() fallbacks', () => {
  const ISSUER = 'https://id.example.test/realms/main';

  it('falls back to RFC 8414 when the OIDC document is missing or not an object', async () => {
    const agent = mockAgent();
    const pool = agent.get('https://id.example.test');
    pool.intercept({ path: '/realms/main/.well-known/openid-configuration' }).reply(200, '[1]', JSON_HEADERS);
    pool
      .intercept({ path: '/.well-known/oauth-authorization-server/realms/main' })
      .reply(200, { issuer: ISSUER, token_endpoint: `${ISSUER}/token` }, JSON_HEADERS);
    const client = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } });
    expect(client.tokenUrl()).toBe(`${ISSUER}/token`);
  });

  it('fails with "discovery_failed" naming each URL when no document can be read', async () => {
    const agent = mockAgent();
    const pool = agent.get('https://id.example.test');
    pool
      .intercept({ path: '/realms/main/.well-known/openid-configuration' })
      .replyWithError(new Error('down'));
    pool.intercept({ path: '/.well-known/oauth-authorization-server/realms/main' }).reply(404, 'no');
    const error = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DiscoveryError);
    expect((error as DiscoveryError).code).toBe('discovery_failed');
    expect((error as Error).message).toContain('status 404');
  });

  it('fails with "invalid_metadata" when the document names no endpoint', async () => {
    const agent = mockAgent();
    agent
      .get('https://id.example.test')
      .intercept({ path: '/realms/main/.well-known/openid-configuration' })
      .reply(200, { issuer: ISSUER }, JSON_HEADERS);
    const error = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } }).catch(
      (e: unknown) => e,
    );
    expect((error as DiscoveryError).code).toBe('invalid_metadata');
  });
});

describe('Transport responses', () => {
  it('keeps every value of a repeated response header', async () => {
    const agent = mockAgent();
    agent
      .get(SITE)
      .intercept({ path: '/api' })
      .reply(200, 'ok', { headers: { 'set-cookie': ['a=1', 'b=2'] } });
    const response = await mockClient(agent).request('GET', 'api');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  });
});

describe('option checks', () => {
  const bad = 1 as never;
  it.each([
    [{ options: null as never }, '"options" must be an object'],
    [{ assertionLifetime: 0 }, '"assertionLifetime" must be a positive integer'],
    [{ connection: 'x' as never }, '"connection" must be an object'],
    [{ connection: { maxRedirects: -1 } }, '"connection.maxRedirects" must be a non-negative integer'],
    [{ connection: { fetch: bad } }, '"connection.fetch" must be a function'],
    [{ connection: { headers: bad } }, '"connection.headers" must be an object'],
    [{ connection: { tls: bad } }, '"connection.tls" must be an object'],
  ])('new Client() rejects %j', (options, message) => {
    const given = 'options' in options ? (options.options as never) : (options as never);
    expect(() => new Client('id', 'secret', given)).toThrow(new TypeError(message));
  });

  it('new Client() rejects a secret that is not a string', () => {
    expect(() => new Client('id', bad)).toThrow(
      new TypeError('"clientSecret" must be a string or undefined'),
    );
  });

  it('tokenRequest() rejects params that are not an object', async () => {
    await expect(new Client('id', 'secret', { site: SITE }).tokenRequest(SITE, bad)).rejects.toThrow(
      new TypeError('"params" must be an object'),
    );
  });

  it.each([
    [[null, 'x', {}], '"client" must be a Client'],
    [['client', bad, {}], '"token" must be a string'],
    [['client', 'x', bad], '"options" must be an object'],
    [['client', 'x', { headerFormat: bad }], '"headerFormat" must be a string'],
    [['client', 'x', { autoRefresh: 'yes' as never }], '"autoRefresh" must be a boolean or a function'],
    [['client', 'x', { onRefresh: bad }], '"onRefresh" must be a function'],
  ])('new AccessToken() rejects %j', async (args, message) => {
    const { AccessToken } = await import('../../../lib/oauth2/index.js');
    const client = new Client('id', 'secret', { site: SITE });
    const [first, token, options] = args as [unknown, unknown, unknown];
    expect(
      () => new AccessToken((first === 'client' ? client : first) as never, token as never, options as never),
    ).toThrow(new TypeError(message));
  });
});
