import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Client,
  ConnectionError,
  OAuth2Error,
  type Response,
  SnakyHash,
  TimeoutError,
} from '../../../lib/oauth2/index.js';
import type { FetchLike } from '../../../lib/oauth2/types.js';
import { type Captured, JSON_HEADERS, mockAgent, mockClient, normalizeHeaders, SITE } from './helpers.js';

function capture(into: Captured[]) {
  return (opts: { body?: unknown; headers?: unknown; path: string; method: string }) => {
    into.push({
      body: opts.body === undefined || opts.body === null ? '' : String(opts.body),
      headers: normalizeHeaders(opts.headers),
      path: opts.path,
      method: opts.method,
    });
  };
}

describe('new Client()', () => {
  it('applies the gem defaults', () => {
    const client = new Client('id', 'secret', { site: SITE });
    expect(client.id).toBe('id');
    expect(client.secret).toBe('secret');
    expect(client.site).toBe(`${SITE}/`);
    expect(client.options).toMatchObject({
      authorizeUrl: 'oauth/authorize',
      tokenUrl: 'oauth/token',
      revokeUrl: 'oauth/revoke',
      authScheme: 'basic_auth',
      raiseErrors: true,
      timeout: 10_000,
      maxRedirects: 5,
    });
  });

  it.each([
    [{ sight: 'x' }, `"sight" is not a known client option`],
    [
      { authScheme: 'digest' },
      `"authScheme" must be one of "basic_auth", "request_body", "tls_client_auth", "private_key_jwt"`,
    ],
    [{ raiseErrors: 'yes' }, `"raiseErrors" must be a boolean`],
    [{ connection: { timeOut: 1 } }, `"connection.timeOut" is not a known connection option`],
    [{ connection: { timeout: -1 } }, `"connection.timeout" must be a positive number of milliseconds`],
    [{ connection: { proxy: 'not a url' } }, `"connection.proxy" must be a URL`],
    [{ authScheme: 'private_key_jwt' }, `"privateKey" is required when "authScheme" is "private_key_jwt"`],
    [{ logger: {} }, `"logger" must have an info(message) method`],
    [{ basicAuthEncoding: 'base64' }, `"basicAuthEncoding" must be "form" or "none"`],
  ])('throws a TypeError naming the field for %j', (options, message) => {
    expect(() => new Client('id', 'secret', options as never)).toThrow(new TypeError(message));
  });

  it('requires a client id', () => {
    expect(() => new Client('', 'secret')).toThrow(new TypeError(`"clientId" must be a non-empty string`));
  });
});

describe('Client#request()', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  it('form-encodes an object body and merges connection and caller headers, caller last', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/api/v1/things?a=1&b=x%20y', method: 'POST' }).reply(201, (o) => {
      capture(seen)(o);
      return '';
    });
    const client = mockClient(agent, {
      site: `${SITE}/api/v1`,
      connection: { headers: { 'X-Default': 'd', 'X-Both': 'conn' } },
    });
    const r = await client.request('post', 'things', {
      params: { b: 'x y', a: 1 },
      body: { z: 'last', a: 'first' },
      headers: { 'x-both': 'caller' },
    });
    expect(r.status).toBe(201);
    expect(seen[0]?.body).toBe('a=first&z=last');
    expect(seen[0]?.headers).toMatchObject({
      'content-type': 'application/x-www-form-urlencoded',
      'x-default': 'd',
      'x-both': 'caller',
    });
  });

  it('sends a JSON body when the caller headers say application/json', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/json', method: 'PUT' }).reply(200, (o) => {
      capture(seen)(o);
      return {};
    });
    await mockClient(agent).request('PUT', '/json', {
      body: { a: 1, nested: { b: true } },
      headers: { 'Content-Type': 'application/json' },
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ a: 1, nested: { b: true } });
  });

  it('throws OAuth2Error for status >= 400 by default', async () => {
    pool
      .intercept({ path: '/fail', method: 'GET' })
      .reply(401, { error: 'invalid_client', error_description: 'nope' }, JSON_HEADERS);
    const error = await mockClient(agent)
      .request('GET', '/fail')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).code).toBe('invalid_client');
    expect((error as OAuth2Error).description).toBe('nope');
    expect((error as OAuth2Error).response.status).toBe(401);
  });

  it('returns the response holding the error with raiseErrors: false', async () => {
    pool.intercept({ path: '/fail', method: 'GET' }).reply(500, 'boom').times(2);
    const client = mockClient(agent, { raiseErrors: false });
    const r = await client.request('GET', '/fail');
    expect(r.status).toBe(500);
    expect(r.error).toBeInstanceOf(OAuth2Error);
    expect(r.error?.response).toBe(r);
    expect(r.error?.message).toBe('server error 500\nboom');
    const perRequest = await mockClient(agent).request('GET', '/fail', { raiseErrors: false });
    expect(perRequest.error?.response.status).toBe(500);
  });

  it('follows redirects, switching to GET on 303 and dropping Authorization across origins', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/start', method: 'POST' }).reply(307, '', { headers: { location: '/same' } });
    pool.intercept({ path: '/same', method: 'POST' }).reply((o) => {
      capture(seen)(o);
      return {
        statusCode: 303,
        data: '',
        responseOptions: { headers: { location: 'https://other.example.test/end' } },
      };
    });
    agent
      .get('https://other.example.test')
      .intercept({ path: '/end', method: 'GET' })
      .reply((o) => {
        capture(seen)(o);
        return { statusCode: 200, data: 'done' };
      });
    const r = await mockClient(agent).request('POST', '/start', {
      body: 'x=1',
      headers: { Authorization: 'Bearer secret-token-value' },
    });
    expect(r.body).toBe('done');
    expect(r.url).toBe('https://other.example.test/end');
    expect(seen[0]?.headers.authorization).toBe('Bearer secret-token-value');
    expect(seen[0]?.body).toBe('x=1');
    expect(seen[1]?.method).toBe('GET');
    expect(seen[1]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.body).toBe('');
  });

  it('stops after maxRedirects and returns the redirect response', async () => {
    pool
      .intercept({ path: '/loop', method: 'GET' })
      .reply(302, '', { headers: { location: '/loop' } })
      .times(3);
    const client = mockClient(agent, { connection: { maxRedirects: 2 } });
    const r = await client.request('GET', '/loop');
    expect(r.status).toBe(302);
  });

  it('throws when a redirect has no location', async () => {
    pool.intercept({ path: '/nowhere', method: 'GET' }).reply(302, '');
    await expect(mockClient(agent).request('GET', '/nowhere')).rejects.toThrow(
      'got 302 status code, but no location header was present',
    );
  });

  it('times out with TimeoutError', async () => {
    pool.intercept({ path: '/slow', method: 'GET' }).reply(200, 'late').delay(500);
    const client = mockClient(agent, { connection: { timeout: 30 } });
    const error = await client.request('GET', '/slow').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).code).toBe('timeout');
    expect((error as TimeoutError).message).toBe(`request GET "${SITE}/slow" timed out after 30 ms`);
  });

  it('wraps a refused connection in ConnectionError', async () => {
    const error = await mockClient(agent)
      .request('GET', 'https://not-mocked.example.test/x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).code).toBe('connection_failed');
  });

  it('runs onRequest and onResponse hooks on every hop', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/hooked', method: 'GET' }).reply((o) => {
      capture(seen)(o);
      return { statusCode: 200, data: 'ok' };
    });
    const statuses: number[] = [];
    const client = mockClient(agent, {
      connection: {
        onRequest: (req) => {
          req.headers['x-signed'] = 'yes';
        },
        onResponse: (res: Response) => {
          statuses.push(res.status);
        },
      },
    });
    await client.request('GET', '/hooked');
    expect(seen[0]?.headers['x-signed']).toBe('yes');
    expect(statuses).toEqual([200]);
  });

  it('works through a custom fetch', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/via-fetch', method: 'POST' }).reply(
      200,
      (o) => {
        capture(seen)(o);
        return { someValue: 1 };
      },
      JSON_HEADERS,
    );
    const customFetch: FetchLike = (url, init) => undiciFetch(url, { ...init, dispatcher: agent });
    const client = new Client('id', 'secret', { site: SITE, connection: { fetch: customFetch } });
    const r = await client.request('POST', 'via-fetch', { body: { q: 1 } });
    expect((r.parsed as Record<string, unknown>).some_value).toBe(1);
    expect(seen[0]?.body).toBe('q=1');
  });
});

describe('Client#getToken()', () => {
  const agent = mockAgent();
  const pool = agent.get(SITE);
  afterEach(() => agent.assertNoPendingInterceptors());

  it('parses with the given snakyHashClass and passes access token options', async () => {
    class MyHash extends SnakyHash {}
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(
        200,
        { accessToken: 'at', refreshToken: 'rt', expiresIn: 60, tokenType: 'bearer' },
        JSON_HEADERS,
      );
    const token = await mockClient(agent).getToken(
      { grant_type: 'client_credentials', snakyHashClass: MyHash },
      { mode: 'query' },
    );
    expect(token.response?.parsed).toBeInstanceOf(MyHash);
    expect(token.token).toBe('at');
    expect(token.refreshToken).toBe('rt');
    expect(token.params).toEqual({ token_type: 'bearer' });
    expect(token.options.mode).toBe('query');
  });

  it('merges caller headers last and sends JSON when they ask for it', async () => {
    const seen: Captured[] = [];
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
      200,
      (o) => {
        capture(seen)(o);
        return { access_token: 'at' };
      },
      JSON_HEADERS,
    );
    await mockClient(agent, { authScheme: 'request_body' }).getToken({
      grant_type: 'client_credentials',
      headers: { 'Content-Type': 'application/json', 'X-Extra': '1' },
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-id',
      client_secret: 'client-secret',
    });
    expect(seen[0]?.headers['x-extra']).toBe('1');
  });

  it('rejects with OAuth2Error when the response holds no token, even with raiseErrors: false', async () => {
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(200, '[]', JSON_HEADERS);
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(400, { error: 'invalid_grant', error_description: 'bad code' }, JSON_HEADERS);
    const client = mockClient(agent, { raiseErrors: false });
    await expect(client.getToken({ grant_type: 'x' })).rejects.toThrow('token response holds no token');
    const error = await client.getToken({ grant_type: 'x' }).catch((e: unknown) => e);
    expect((error as OAuth2Error).code).toBe('invalid_grant');
  });

  it('rejects with TokenError when a response has no token fields at all', async () => {
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(200, { scope: 'x' }, JSON_HEADERS);
    const error = await mockClient(agent)
      .getToken({ grant_type: 'x' })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('TokenError');
    expect((error as { code: string }).code).toBe('missing_token');
  });
});
