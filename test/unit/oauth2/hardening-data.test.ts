import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AccessToken,
  Client,
  type Logger,
  OAuth2Error,
  Response,
  TokenError,
} from '../../../lib/oauth2/index.js';
import { formEncode, percentEncode } from '../../../lib/oauth2/url.js';
import { JSON_HEADERS, mockAgent, mockClient, SITE } from './helpers.js';

const agent = mockAgent();
const pool = agent.get(SITE);
afterEach(() => agent.assertNoPendingInterceptors());

/** A secret with characters that every encoding (JSON, percent, form, URI) writes differently. */
const SECRET = `cs(1)'x "q" y+z!`;

function debugClient(lines: string[], options: ConstructorParameters<typeof Client>[2] = {}): Client {
  const logger: Logger = { info: (m) => lines.push(m) };
  return new Client('client-id', SECRET, {
    site: SITE,
    debug: true,
    logger,
    ...options,
    connection: { dispatcher: agent },
  });
}

/** Every way a value can be written into a log line or a message. */
function spellings(value: string): string[] {
  return [
    value,
    encodeURIComponent(value),
    percentEncode(value),
    formEncode(value),
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(JSON.stringify(value)).slice(1, -1),
  ];
}

function leaks(texts: string[], values: string[]): string[] {
  const forms = values.flatMap(spellings);
  return texts.filter((text) => forms.some((form) => text.includes(form)));
}

describe('item 2: every token spelling is redacted in debug output', () => {
  it('redacts accessToken, refreshToken, idToken (and the other spellings fromHash reads) in a JSON token response', async () => {
    const lines: string[] = [];
    const values = ['at-camel-111111', 'rt-camel-222222', 'idt-camel-333333', 'at-pascal-444444'];
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
      200,
      {
        accessToken: values[0],
        refreshToken: values[1],
        idToken: values[2],
        nested: { AccessToken: values[3] },
        tokenType: 'Bearer',
      },
      JSON_HEADERS,
    );
    const token = await debugClient(lines).clientCredentials.getToken();
    expect(token.token).toBe(values[0]);
    expect(token.refreshToken).toBe(values[1]);
    expect(lines.some((l) => l.startsWith('response body: '))).toBe(true);
    expect(lines.join('\n')).toContain('Bearer');
    expect(leaks(lines, values)).toEqual([]);
  });

  it('redacts camelCase and dashed token keys in a form token response and in a caller query', async () => {
    const lines: string[] = [];
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, 'accessToken=at-form-555555&Refresh-Token=rt-form-666666&token_type=bearer', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const client = debugClient(lines);
    await client.clientCredentials.getToken();
    pool.intercept({ path: /^\/api\/echo/, method: 'GET' }).reply(200, 'ok');
    await client.request('GET', '/api/echo', { params: { clientSecret: 'cs-param-777777' } });
    expect(leaks(lines, ['at-form-555555', 'rt-form-666666', 'cs-param-777777'])).toEqual([]);
  });
});

describe('item 2: a known secret or live token is redacted wherever it appears', () => {
  it('in a header, a query under any name, a form body and a JSON body of the debug output', async () => {
    const lines: string[] = [];
    const client = debugClient(lines);
    const token = new AccessToken(client, `at live'(1) "x"`, { mode: 'query', param_name: 'k' });
    pool.intercept({ path: /^\/api\/a/, method: 'GET' }).reply(200, 'ok');
    await token.get('/api/a', { headers: { 'x-echo': SECRET }, params: { other: SECRET } });
    pool.intercept({ path: '/api/b', method: 'POST' }).reply(200, 'ok');
    await client.request('POST', '/api/b', { body: `note=${formEncode(SECRET)}` });
    pool.intercept({ path: '/api/c', method: 'POST' }).reply(200, { echoed: SECRET }, JSON_HEADERS);
    await client.request('POST', '/api/c', {
      body: { note: SECRET },
      headers: { 'content-type': 'application/json' },
    });
    expect(lines.filter((l) => l.startsWith('request')).length).toBeGreaterThanOrEqual(6);
    expect(leaks(lines, [SECRET, token.token])).toEqual([]);
  });

  it('in an error_description the server echoes into OAuth2Error.message, description and toJSON', async () => {
    const client = debugClient([]);
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(401, { error: 'invalid_client', error_description: `secret ${SECRET} is wrong` }, JSON_HEADERS);
    const error = (await client.clientCredentials.getToken().catch((e: unknown) => e)) as OAuth2Error;
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(error.code).toBe('invalid_client');
    expect(error.message).toContain('invalid_client: secret [FILTERED] is wrong');
    const live = new AccessToken(client, 'at-live-888888');
    pool
      .intercept({ path: '/api/me', method: 'GET' })
      .reply(401, `token at-live-888888 expired`, { headers: { 'content-type': 'text/plain' } });
    const apiError = (await live.get('/api/me').catch((e: unknown) => e)) as OAuth2Error;
    expect(apiError.response.status).toBe(401);
    const views = [error, apiError].flatMap((e) => [
      e.message,
      String(e.description),
      JSON.stringify(e),
      inspect(e, { depth: 5 }),
      String(e.stack),
      JSON.stringify(e.response),
      inspect(e.response),
    ]);
    expect(leaks(views, [SECRET, 'at-live-888888'])).toEqual([]);
  });
});

describe('item 3: a body in a message is a short, redacted excerpt', () => {
  const html = (size: number): string =>
    `<!DOCTYPE html><html><body><p>password: hunter22-secret</p>${'<div>Internal error</div>'.repeat(size / 25)}</body></html>`;

  it('a 30 MB HTML 500 page gives a message of a few hundred characters, ending with an ellipsis', () => {
    const body = html(30 * 1024 * 1024);
    const error = new OAuth2Error(
      new Response({ status: 500, headers: { 'content-type': 'text/html' }, body }),
    );
    expect(body.length).toBeGreaterThan(30_000_000);
    expect(error.message.length).toBeLessThanOrEqual(300);
    expect(error.message.endsWith('…')).toBe(true);
    expect(error.message).toContain('<!DOCTYPE html>');
    expect(error.message).not.toContain('hunter22-secret');
    expect(error.message).toContain('password: [FILTERED]');
  });

  it('through the client (with a raised maxResponseBytes) the rejection is short too', async () => {
    const body = html(30 * 1024 * 1024);
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(500, body, { headers: { 'content-type': 'text/html' } });
    const client = new Client('client-id', SECRET, {
      site: SITE,
      connection: { dispatcher: agent, maxResponseBytes: 64 * 1024 * 1024 },
    });
    const error = (await client.clientCredentials.getToken().catch((e: unknown) => e)) as OAuth2Error;
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(error.response.body.length).toBe(body.length);
    expect(error.message.length).toBeLessThanOrEqual(300);
    expect(error.message.endsWith('…')).toBe(true);
  });

  it('cuts a long JSON error body after redacting it, and keeps a short body whole', () => {
    const long = JSON.stringify({
      error: 'invalid_request',
      access_token: 'at-in-long-body-1',
      detail: 'x'.repeat(5000),
    });
    const error = new OAuth2Error(new Response({ status: 400, headers: JSON_HEADERS.headers, body: long }));
    const excerpt = error.message.split('\n')[1] ?? '';
    expect([...excerpt].length).toBe(201);
    expect(excerpt.endsWith('…')).toBe(true);
    expect(excerpt.startsWith('{"error":"invalid_request","access_token":"[FILTERED]"')).toBe(true);
    const short = '{"error":"invalid_grant"}';
    const whole = new OAuth2Error(new Response({ status: 400, headers: JSON_HEADERS.headers, body: short }));
    expect(whole.message).toBe(`invalid_grant: \n${short}`);
  });

  it('never splits a character: an excerpt of emoji is whole code points', () => {
    const body = '😀'.repeat(500);
    const error = new OAuth2Error(new Response({ status: 400, body }));
    expect(error.message).toBe(`${'😀'.repeat(200)}…`);
  });
});

describe('item 4: errors carry their response, and TokenError is an OAuth2Error', () => {
  it('a 200 token response without a token rejects with a TokenError (an OAuth2Error) holding that response', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, { scope: 'read', token_type: 'Bearer' }, JSON_HEADERS);
    const error = (await mockClient(agent)
      .getToken({ grant_type: 'client_credentials' })
      .catch((e: unknown) => e)) as TokenError;
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(error).toBeInstanceOf(TokenError);
    expect(error.name).toBe('TokenError');
    expect(error.code).toBe('missing_token');
    expect(error.response?.status).toBe(200);
    expect(error.response?.parsed).toMatchObject({ scope: 'read' });
    expect(error.message.startsWith('token response holds no token\n{"scope":"read"')).toBe(true);
  });

  it('a non-numeric expires_in from the server is an OAuth2Error with the response, not a bare TypeError', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, { access_token: 'at-1', expires_in: 'soon' }, JSON_HEADERS);
    const error = (await mockClient(agent)
      .getToken({ grant_type: 'client_credentials' })
      .catch((e: unknown) => e)) as OAuth2Error;
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(error.response.status).toBe(200);
    expect(error.message).toContain('"expires_in" must be a number of seconds');
    expect(error.message).not.toContain('at-1');
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("a bad field among the caller's own accessTokenOptions stays the caller's TypeError", async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, { access_token: 'at-1' }, JSON_HEADERS);
    const error = await mockClient(agent)
      .getToken({ grant_type: 'client_credentials' }, { expires_in: 'later' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('"expires_in" must be a number of seconds');
  });

  it('with raiseErrors: false a 200 without a token gives the gem’s token with an empty string', async () => {
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(200, { scope: 'read' }, JSON_HEADERS);
    const token = await mockClient(agent, { raiseErrors: false }).getToken({ grant_type: 'x' });
    expect(token.token).toBe('');
    expect(token.params).toMatchObject({ scope: 'read' });
    expect(token.response?.status).toBe(200);
  });

  it('a TokenError raised before any request has no response, and still is an OAuth2Error', async () => {
    const client = mockClient(agent);
    const refresh = await new AccessToken(client, 'at-1').refresh().catch((e: unknown) => e);
    const revoke = await new AccessToken(client, '', { refresh_token: 'rt-1' })
      .revoke({ token_type_hint: 'access_token' })
      .catch((e: unknown) => e);
    const hint = await new AccessToken(client, 'at-1')
      .revoke({ token_type_hint: 'id_token' as 'access_token' })
      .catch((e: unknown) => e);
    const built = (() => {
      try {
        return new AccessToken(client, '');
      } catch (e) {
        return e;
      }
    })();
    const errors = [refresh, revoke, hint, built] as TokenError[];
    expect(errors.map((e) => e.code)).toEqual([
      'missing_refresh_token',
      'missing_token',
      'invalid_token_type_hint',
      'missing_token',
    ]);
    for (const error of errors) {
      expect(error).toBeInstanceOf(OAuth2Error);
      expect(error.name).toBe('TokenError');
      expect(error.response).toBeUndefined();
      expect(error.toJSON()).toMatchObject({ name: 'TokenError', status: undefined });
    }
    expect((refresh as Error).message).toBe('no "refresh_token" is available to refresh with');
  });
});

describe('item 5: loose input is a TypeError naming the field', () => {
  const client = (): Client => mockClient(agent);

  it.each([
    ['an object', { nested: 'x' }],
    ['a number', 12345],
    ['an array', ['a', 'b']],
    ['a boolean', true],
  ])('fromHash refuses %s as access_token', (_label, value) => {
    expect(() => AccessToken.fromHash(client(), { access_token: value })).toThrow(
      new TypeError('"access_token" must be a string'),
    );
  });

  it('fromHash names the field it read the token from (idToken, a token_name)', () => {
    expect(() => AccessToken.fromHash(client(), { idToken: { a: 1 } })).toThrow('"idToken" must be a string');
    expect(() => AccessToken.fromHash(client(), { token_name: 'jwt', jwt: 7 })).toThrow(
      '"jwt" must be a string',
    );
  });

  it('fromKvform refuses a repeated token or expiry key instead of joining it to "a,b"', () => {
    expect(() => AccessToken.fromKvform(client(), 'access_token=a&access_token=b')).toThrow(
      new TypeError('"access_token" is repeated'),
    );
    expect(() => AccessToken.fromKvform(client(), 'access_token=a&expires_in=1&expires_in=2')).toThrow(
      '"expires_in" is repeated',
    );
    const token = AccessToken.fromKvform(client(), 'access_token=a&scope=read&scope=write');
    expect(token.token).toBe('a');
    expect(token.params.scope).toEqual(['read', 'write']);
  });

  it('a form token response with a repeated access_token is an OAuth2Error with the response', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, 'access_token=at-a1&access_token=at-b2', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const error = (await client()
      .getToken({ grant_type: 'client_credentials' })
      .catch((e: unknown) => e)) as OAuth2Error;
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(error.response.status).toBe(200);
    expect(error.message).toContain('"access_token" must be a string');
    expect(error.message).not.toMatch(/at-a1|at-b2/);
  });

  it('a 5xx OAuth2Error message states the status', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(503, '<html>maintenance</html>', { headers: { 'content-type': 'text/html' } });
    const error = (await client()
      .getToken({ grant_type: 'client_credentials' })
      .catch((e: unknown) => e)) as OAuth2Error;
    expect(error.message).toBe('server error 503\n<html>maintenance</html>');
    const json = new OAuth2Error(
      new Response({ status: 500, headers: JSON_HEADERS.headers, body: '{"error":"server_error"}' }),
    );
    expect(json.message).toBe('server error 500\nserver_error: \n{"error":"server_error"}');
    expect(json.code).toBe('server_error');
  });
});

describe('item 6: gem 2.0.25 interop details', () => {
  it('writes state: null as a bare "state" in an authorize URL (Faraday writes a nil value as its bare key)', () => {
    const client = mockClient(agent);
    const url = client.authCode.authorizeUrl({ redirect_uri: 'https://app.test/cb', state: null });
    expect(url).toBe(
      `${SITE}/oauth/authorize?client_id=client-id&redirect_uri=https%3A%2F%2Fapp.test%2Fcb&response_type=code&state`,
    );
    expect(client.authorizeUrl({ state: undefined })).toBe(`${SITE}/oauth/authorize`);
  });

  it.each([
    ['first name', 'first_name'],
    ['foo__bar', 'foo_bar'],
    ['  padded key  ', 'padded_key'],
    ['a::b', 'a/b'],
    ['Some::ClassName', 'some/class_name'],
    ['a - b', 'a_b'],
    ['accessToken', 'access_token'],
  ])('snake-cases %j as the gem’s SnakyHash does: %j', (input, output) => {
    const parsed = new Response({
      status: 200,
      headers: JSON_HEADERS.headers,
      body: JSON.stringify({ [input]: 1 }),
    }).parsed as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([output]);
    expect(parsed[input]).toBe(1);
  });

  it('parses a form key without "=" to null, and an empty value to ""', () => {
    const parsed = new Response({
      status: 200,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'flag&empty=&x=1',
    }).parsed as Record<string, unknown>;
    expect({ ...parsed }).toEqual({ flag: null, empty: '', x: '1' });
  });
});
