import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccessToken, Client, configure, resetConfig } from '../../../lib/oauth2/index.js';
import { parseQuery } from '../../../lib/oauth2/url.js';
import {
  type Captured,
  capture,
  JSON_HEADERS,
  mockAgent,
  mockClient,
  normalizeHeaders,
  SITE,
  tokenEndpoint,
} from './helpers.js';

const NOW = 1_800_000_000;
const client = new Client('id', 'secret', { site: SITE });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW * 1000);
});
afterEach(() => {
  vi.useRealTimers();
  resetConfig();
  vi.restoreAllMocks();
});

describe('AccessToken expiry', () => {
  it('sets expiresAt = now + expires_in', () => {
    const t = AccessToken.fromHash(client, { access_token: 'a', expires_in: 3600 });
    expect(t.expiresAt).toBe(NOW + 3600);
    expect(t.expiresIn).toBe(3600);
    expect(t.expires()).toBe(true);
    expect(t.expired()).toBe(false);
  });

  it('reads expires_in given as a string and the legacy expires key', () => {
    expect(AccessToken.fromHash(client, { access_token: 'a', expires_in: '60' }).expiresAt).toBe(NOW + 60);
    expect(AccessToken.fromHash(client, { access_token: 'a', expires: 90 }).expiresAt).toBe(NOW + 90);
  });

  it('keeps a given expires_at over expires_in', () => {
    expect(
      AccessToken.fromHash(client, { access_token: 'a', expires_in: 10, expires_at: NOW + 99 }).expiresAt,
    ).toBe(NOW + 99);
  });

  it.each([
    ['an epoch number', NOW + 500, 1_800_000_500],
    ['an epoch string', '1800000500', 1_800_000_500],
    ['an ISO 8601 string', '2027-01-15T08:08:20Z', 1_800_000_500],
    ['an ISO 8601 string with offset', '2027-01-15T10:33:20+02:00', 1_800_002_000],
  ])('reads expires_at as %s', (_label, value, expected) => {
    expect(AccessToken.fromHash(client, { access_token: 'a', expires_at: value }).expiresAt).toBe(expected);
  });

  it('rejects an unreadable expires_at', () => {
    expect(() => AccessToken.fromHash(client, { access_token: 'a', expires_at: 'soon' })).toThrow(
      new TypeError(`"expires_at" must be epoch seconds, an epoch string or an ISO 8601 time`),
    );
  });

  it('subtracts expires_latency once from the stored expires_at', () => {
    const t = AccessToken.fromHash(client, { access_token: 'a', expires_in: 3600, expires_latency: 60 });
    expect(t.expiresAt).toBe(NOW + 3540);
    expect(t.expiresLatency).toBe(60);
    const reloaded = AccessToken.fromHash(client, t.toHash());
    expect(reloaded.expiresAt).toBe(NOW + 3540);
    const camel = new AccessToken(client, 'a', { expiresAt: NOW + 100, expiresLatency: '30' });
    expect(camel.expiresAt).toBe(NOW + 70);
  });

  it('treats expires_in: 0 as never expiring', () => {
    const t = AccessToken.fromHash(client, { access_token: 'a', expires_in: 0 });
    expect(t.expiresAt).toBeUndefined();
    expect(t.expires()).toBe(false);
    expect(t.expired()).toBe(false);
  });

  it('is expired when expires_at <= now', () => {
    expect(AccessToken.fromHash(client, { access_token: 'a', expires_at: NOW }).expired()).toBe(true);
    expect(AccessToken.fromHash(client, { access_token: 'a', expires_at: NOW + 1 }).expired()).toBe(false);
    vi.setSystemTime((NOW + 1) * 1000);
    expect(AccessToken.fromHash(client, { access_token: 'a', expires_at: NOW + 1 }).expired()).toBe(true);
  });
});

describe('AccessToken token selection', () => {
  it.each([
    [{ access_token: 'a', id_token: 'b', token: 'c' }, 'a'],
    [{ id_token: 'b', token: 'c' }, 'b'],
    [{ token: 'c', accessToken: 'd' }, 'c'],
    [{ accessToken: 'd', idToken: 'e' }, 'd'],
    [{ idToken: 'e' }, 'e'],
  ])('picks the first token-like key of %j', (hash, expected) => {
    expect(AccessToken.fromHash(client, hash).token).toBe(expected);
  });

  it('skips token-like keys whose value is null', () => {
    expect(AccessToken.fromHash(client, { access_token: null, id_token: 'b' }).token).toBe('b');
  });

  it('removes only the chosen key from the params', () => {
    const t = AccessToken.fromHash(client, { access_token: 'a', id_token: 'b', scope: 's' });
    expect(t.params).toEqual({ id_token: 'b', scope: 's' });
  });

  it('uses token_name when given, also matching its snake_case form', () => {
    const t = AccessToken.fromHash(client, { access_token: 'a', id_token: 'b', token_name: 'id_token' });
    expect(t.token).toBe('b');
    expect(t.params).toEqual({ access_token: 'a' });
    expect(t.options.tokenName).toBe('id_token');
    const camel = AccessToken.fromHash(client, { custom_token: 'z', tokenName: 'customToken' });
    expect(camel.token).toBe('z');
  });

  it('warns about extra token-like fields only when the warning is not silenced', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    AccessToken.fromHash(client, { access_token: 'a', id_token: 'b' });
    expect(warn).not.toHaveBeenCalled();
    configure((c) => {
      c.silenceExtraTokensWarning = false;
    });
    AccessToken.fromHash(client, { access_token: 'secret-a', id_token: 'secret-b' });
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, options] = warn.mock.calls[0] ?? [];
    expect(message).toBe(
      'AccessToken.fromHash: hash contained more than one token key (access_token, id_token); using "access_token"',
    );
    expect(options).toMatchObject({ code: 'OAUTH2_EXTRA_TOKENS' });
    expect(String(message)).not.toContain('secret-a');
  });

  it('warns about a missing token_name key only when not silenced', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    AccessToken.fromHash(client, { access_token: 'a', token_name: 'nope' });
    expect(warn).not.toHaveBeenCalled();
    configure((c) => {
      c.silence_no_tokens_warning = false;
    });
    AccessToken.fromHash(client, { access_token: 'a', token_name: 'nope' });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain('token_name "nope" is not among the keys');
  });

  it('throws TokenError for no token at all, or warns with raiseErrors: false', () => {
    expect(() => new AccessToken(client, '')).toThrow('access token has no token');
    const lenient = new Client('id', 's', { raiseErrors: false });
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    configure((c) => {
      c.silenceNoTokensWarning = false;
    });
    expect(new AccessToken(lenient, '').token).toBe('');
    expect(warn).toHaveBeenCalledWith(
      'AccessToken has no token',
      expect.objectContaining({ code: 'OAUTH2_NO_TOKENS' }),
    );
    expect(new AccessToken(client, '', { refresh_token: 'r' }).refreshToken).toBe('r');
  });
});

describe('AccessToken.fromKvform()', () => {
  it('keeps string keys without snake-casing and turns repeated keys into arrays', () => {
    const t = AccessToken.fromKvform(client, 'access_token=abc&expires_in=60&someKey=x&scope=a&scope=b');
    expect(t.token).toBe('abc');
    expect(t.expiresAt).toBe(NOW + 60);
    expect(t.params).toEqual({ someKey: 'x', scope: ['a', 'b'] });
  });

  it('refuses a leading "#" or "?", where the gem finds no token and raises', () => {
    for (const [lead, form] of [
      ['#', '#access_token=abc&token_type=bearer'],
      ['?', '?access_token=abc'],
    ] as const) {
      expect(() => AccessToken.fromKvform(client, form)).toThrow(
        new TypeError(
          `"kvform" starts with "${lead}": pass the fragment or query without it (new URL(url).hash.slice(1))`,
        ),
      );
    }
    expect(AccessToken.fromKvform(client, 'access_token=a#b').token).toBe('a#b');
  });
});

describe('AccessToken#toHash() / fromHash()', () => {
  it("writes the gem's keys in snake_case, without expires_in", () => {
    const t = AccessToken.fromHash(client, {
      access_token: 'a',
      refresh_token: 'r',
      expires_in: 60,
      token_type: 'bearer',
      scope: 'x y',
    });
    expect(t.toHash()).toEqual({
      token_type: 'bearer',
      scope: 'x y',
      access_token: 'a',
      refresh_token: 'r',
      expires_at: NOW + 60,
      mode: 'header',
      header_format: 'Bearer %s',
      param_name: 'access_token',
    });
  });

  it('round-trips: fromHash(h).toHash() deep-equals h', () => {
    const t = new AccessToken(client, 'a', {
      tokenName: 'id_token',
      mode: { get: 'query' },
      expiresIn: 5,
      extra: [1],
    });
    const h = t.toHash();
    expect(h.token_name).toBe('id_token');
    expect(AccessToken.fromHash(client, h).toHash()).toEqual(h);
    const plain = AccessToken.fromHash(client, { access_token: 'a' }).toHash();
    expect(AccessToken.fromHash(client, JSON.parse(JSON.stringify(plain))).toHash()).toEqual(plain);
  });

  it("loads a hash as the Ruby gem's to_hash writes it, and writes it back unchanged", () => {
    // JSON of OAuth2::AccessToken#to_hash (oauth2 2.0.x): extra params first, symbol keys as strings.
    const ruby = JSON.parse(
      '{"token_type":"Bearer","scope":"read write","access_token":"gem-token","refresh_token":null,' +
        '"expires_at":1800003600,"mode":"header","header_format":"Bearer %s","param_name":"access_token"}',
    );
    const t = AccessToken.fromHash(client, ruby);
    expect(t.token).toBe('gem-token');
    expect(t.refreshToken).toBeUndefined();
    expect(t.expiresAt).toBe(1_800_003_600);
    expect(t.params).toEqual({ token_type: 'Bearer', scope: 'read write' });
    expect(t.toHash()).toEqual(ruby);
  });
});

describe('AccessToken modes', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  function api(seen: Captured[], path: string, method: string): void {
    pool.intercept({ path, method }).reply((o) => {
      seen.push(capture(o));
      return { statusCode: 200, data: 'ok' };
    });
  }

  it("'header' (default) sends Bearer and overrides a caller Authorization", async () => {
    const seen: Captured[] = [];
    api(seen, '/api/me', 'GET');
    const t = new AccessToken(mockClient(agent), 'tok-1');
    await t.get('/api/me', { headers: { authorization: 'Basic nope', 'X-A': '1' } });
    expect(seen[0]?.headers.authorization).toBe('Bearer tok-1');
    expect(seen[0]?.headers['x-a']).toBe('1');
  });

  it('uses header_format', async () => {
    const seen: Captured[] = [];
    api(seen, '/api/me', 'GET');
    await new AccessToken(mockClient(agent), 'tok-1', { header_format: 'token %s' }).get('/api/me');
    expect(seen[0]?.headers.authorization).toBe('token tok-1');
  });

  it("'query' sends param_name in the query with the caller params", async () => {
    const seen: Captured[] = [];
    api(seen, '/api/me?access_token=tok-1&page=2', 'GET');
    api(seen, '/api/me?page=2&t=tok-1', 'GET');
    await new AccessToken(mockClient(agent), 'tok-1', { mode: 'query' }).get('/api/me', {
      params: { page: 2 },
    });
    await new AccessToken(mockClient(agent), 'tok-1', { mode: 'query', paramName: 't' }).get('/api/me', {
      params: { page: 2 },
    });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen).toHaveLength(2);
  });

  it("'body' appends the token to an object, a string or an empty body", async () => {
    const seen: Captured[] = [];
    api(seen, '/api/things', 'POST');
    api(seen, '/api/things', 'POST');
    api(seen, '/api/things', 'POST');
    const t = new AccessToken(mockClient(agent), 'tok 1', { mode: 'body' });
    await t.post('/api/things', { body: { name: 'x' } });
    await t.post('/api/things', { body: 'name=x' });
    await t.post('/api/things');
    expect(seen.map((s) => s.body)).toEqual([
      'access_token=tok%201&name=x',
      'name=x&access_token=tok%201',
      'access_token=tok%201',
    ]);
  });

  it('takes a function of the verb', async () => {
    const seen: Captured[] = [];
    api(seen, '/r?access_token=tok', 'GET');
    api(seen, '/r', 'DELETE');
    const verbs: string[] = [];
    const t = new AccessToken(mockClient(agent), 'tok', {
      mode: (verb) => {
        verbs.push(verb);
        return verb === 'get' ? 'query' : 'header';
      },
    });
    await t.get('/r');
    await t.delete('/r');
    expect(verbs).toEqual(['get', 'delete']);
    expect(seen[1]?.headers.authorization).toBe('Bearer tok');
  });

  it('takes a per-verb object, falling back to header for a missing verb', async () => {
    const seen: Captured[] = [];
    api(seen, '/r?access_token=tok', 'GET');
    api(seen, '/r', 'PUT');
    api(seen, '/r', 'PATCH');
    const t = new AccessToken(mockClient(agent), 'tok', { mode: { get: 'query', put: 'body' } });
    await t.get('/r');
    await t.put('/r', { body: { a: '1' } });
    await t.patch('/r');
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.body).toBe('a=1&access_token=tok');
    expect(seen[2]?.headers.authorization).toBe('Bearer tok');
  });

  it('rejects an invalid mode at construction', () => {
    expect(() => new AccessToken(client, 't', { mode: 'cookie' as never })).toThrow(
      new TypeError(`"mode" must be "header", "query", "body", a function of the verb or a per-verb object`),
    );
    expect(() => new AccessToken(client, 't', { mode: { get: 'cookie' } as never })).toThrow(
      new TypeError(`"mode.get" must be "header", "query" or "body"`),
    );
  });

  it('rejects a mode function returning an invalid mode at request time', async () => {
    const t = new AccessToken(mockClient(agent), 't', { mode: () => 'cookie' as never });
    await expect(t.get('/r')).rejects.toThrow(new TypeError(`"mode" resolved to an invalid mode for "get"`));
  });

  it('requests absolute URLs and parses with snaky: false', async () => {
    agent
      .get('https://api.other.test')
      .intercept({ path: '/v1/x', method: 'GET' })
      .reply(200, { someKey: 1 }, JSON_HEADERS);
    const r = await new AccessToken(mockClient(agent), 't').request('GET', 'https://api.other.test/v1/x', {
      snaky: false,
    });
    expect(r.parsed).toEqual({ someKey: 1 });
  });
});

describe('AccessToken#refresh()', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  it('sends grant_type=refresh_token and keeps the old refresh token when the response omits it', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen, { access_token: 'new', expires_in: 60 });
    const old = new AccessToken(mockClient(agent), 'old', {
      refresh_token: 'rt-1',
      mode: 'query',
      expires_latency: 5,
    });
    const fresh = await old.refresh({ scope: 'narrow' });
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt-1',
      scope: 'narrow',
    });
    expect(fresh.token).toBe('new');
    expect(fresh.refreshToken).toBe('rt-1');
    expect(fresh.options.mode).toBe('query');
    expect(fresh.expiresAt).toBe(NOW + 55);
    expect(old.token).toBe('old');
  });

  it('keeps the old refresh token when the response sends null', async () => {
    tokenEndpoint(pool, [], { access_token: 'new', refresh_token: null });
    const fresh = await new AccessToken(mockClient(agent), 'old', { refresh_token: 'rt-1' }).refresh();
    expect(fresh.refreshToken).toBe('rt-1');
  });

  it('takes a rotated refresh token, also in camelCase with snaky: false', async () => {
    tokenEndpoint(pool, [], { access_token: 'new', refreshToken: 'rt-2' });
    const old = new AccessToken(mockClient(agent), 'old', { refresh_token: 'rt-1' });
    const fresh = await old.refresh({ snaky: false });
    expect(fresh.refreshToken).toBe('rt-2');
  });

  it('throws TokenError without a refresh token', async () => {
    const error = await new AccessToken(client, 'x').refresh().catch((e: unknown) => e);
    expect((error as { code: string }).code).toBe('missing_refresh_token');
    expect((error as Error).message).toBe('no "refresh_token" is available to refresh with');
  });
});

describe('AccessToken revocation (RFC 7009)', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  function revokeEndpoint(seen: Captured[]): void {
    pool.intercept({ path: '/oauth/revoke', method: 'POST' }).reply((o) => {
      seen.push(capture(o));
      return { statusCode: 200, data: '' };
    });
  }

  it('posts the token and its type hint in the form body with client authentication', async () => {
    const seen: Captured[] = [];
    revokeEndpoint(seen);
    revokeEndpoint(seen);
    const t = new AccessToken(mockClient(agent), 'at-1', { refresh_token: 'rt-1' });
    await t.revoke();
    await t.revoke({ token_type_hint: 'refresh_token' });
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({ token: 'at-1', token_type_hint: 'access_token' });
    expect(parseQuery(seen[1]?.body ?? '')).toEqual({ token: 'rt-1', token_type_hint: 'refresh_token' });
    expect(seen[0]?.path).toBe('/oauth/revoke');
    expect(seen[0]?.headers.authorization).toMatch(/^Basic /);
  });

  it('revokes through the client with request_body auth', async () => {
    const seen: Captured[] = [];
    revokeEndpoint(seen);
    await mockClient(agent, { authScheme: 'request_body' }).revokeToken('tok', 'access_token');
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      token: 'tok',
      token_type_hint: 'access_token',
      client_id: 'client-id',
      client_secret: 'client-secret',
    });
  });

  it('rejects an unknown hint and a missing token', async () => {
    const t = new AccessToken(client, 'a');
    await expect(t.revoke({ token_type_hint: 'id_token' as never })).rejects.toThrow(
      `"token_type_hint" must be "access_token" or "refresh_token"`,
    );
    await expect(t.revoke({ token_type_hint: 'refresh_token' })).rejects.toThrow(
      'no "refresh_token" is available to revoke',
    );
  });
});

describe('AccessToken autoRefresh', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  it('refreshes an expired token once for concurrent callers, then sends the new token', async () => {
    const tokenRequests: string[] = [];
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(
        200,
        (o) => {
          tokenRequests.push(String(o.body));
          return { access_token: 'fresh', expires_in: 3600 };
        },
        JSON_HEADERS,
      )
      .delay(20);
    const auths: string[] = [];
    pool
      .intercept({ path: '/api', method: 'GET' })
      .reply((o) => {
        auths.push(normalizeHeaders(o.headers).authorization ?? '');
        return { statusCode: 200, data: 'ok' };
      })
      .times(5);
    const persisted: unknown[] = [];
    const t = new AccessToken(mockClient(agent), 'stale', {
      refresh_token: 'rt',
      expires_at: NOW - 1,
      autoRefresh: true,
      onRefresh: (tok) => {
        persisted.push(tok.toHash());
      },
    });
    await Promise.all(Array.from({ length: 5 }, () => t.get('/api')));
    expect(tokenRequests).toHaveLength(1);
    expect(auths).toEqual(Array(5).fill('Bearer fresh'));
    expect(t.token).toBe('fresh');
    expect(t.refreshToken).toBe('rt');
    expect(t.expired()).toBe(false);
    expect(persisted).toHaveLength(1);
  });

  it('uses a refresher function, for example a new client-credentials grant', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, { access_token: 'cc-2', expires_in: 60 }, JSON_HEADERS);
    pool.intercept({ path: '/api', method: 'GET' }).reply(200, 'ok');
    const c = mockClient(agent);
    const t = new AccessToken(c, 'cc-1', {
      expires_at: NOW - 5,
      autoRefresh: () => c.clientCredentials.getToken(),
    });
    await t.get('/api');
    expect(t.token).toBe('cc-2');
  });

  it('does not refresh a valid token, nor without autoRefresh', async () => {
    pool.intercept({ path: '/api', method: 'GET' }).reply(200, 'ok').times(2);
    const valid = new AccessToken(mockClient(agent), 'v', {
      refresh_token: 'r',
      expires_in: 60,
      autoRefresh: true,
    });
    await valid.get('/api');
    const off = new AccessToken(mockClient(agent), 'o', { refresh_token: 'r', expires_at: NOW - 1 });
    await off.get('/api');
    expect(valid.token).toBe('v');
    expect(off.token).toBe('o');
  });
});
