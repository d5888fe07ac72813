// Issue 8 (items 1, 3, 5) without a network: redirects between two origins of an undici MockAgent, the
// response-size limit through a MockAgent and through custom fetches (web and Node streams), option
// validation, discovery's endpoints and the wording of transport failures.
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import type { MockAgent } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  AccessToken,
  Client,
  type ClientOptions,
  ConnectionError,
  DiscoveryError,
  type FetchLike,
  OAuth2Error,
  ResponseTooLargeError,
  TimeoutError,
} from '../../../lib/oauth2/index.js';
import { type Captured, capture, JSON_HEADERS, mockAgent } from './helpers.js';

const API = 'https://api.example.test';
const OTHER = 'https://other.example.test';
const SECRET = 'client-secret-3c2b1a0f';
const TOKEN = 'live-token-9f8e7d6c5b4a';

let agent: MockAgent;
let other: Captured[];

beforeEach(() => {
  agent = mockAgent();
  other = [];
  // Origin B answers anything, and records it: what it received is the witness.
  agent
    .get(OTHER)
    .intercept({ path: () => true, method: () => true })
    .reply((o) => {
      other.push(capture(o));
      return { statusCode: 200, data: 'landed' };
    })
    .persist();
});

function client(options: ClientOptions = {}): Client {
  return new Client('client-id', SECRET, {
    site: API,
    ...options,
    connection: { dispatcher: agent, ...options.connection },
  });
}

/** Origin A answers every request to `path` with `status` and `location`. */
function redirectFrom(path: string, status: number, location: string, method = 'GET'): void {
  agent
    .get(API)
    .intercept({ path: (p) => p.startsWith(path), method })
    .reply(status, '', {
      headers: { location },
    });
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('API redirects to another origin', () => {
  it('drop Cookie, Proxy-Authorization and any header carrying the token; keep the others', async () => {
    redirectFrom('/things', 302, `${OTHER}/landing`);
    const response = await client().request('GET', '/things', {
      headers: {
        cookie: 'session=abc',
        'proxy-authorization': 'Basic cHJveHk6cGFzcw==',
        'x-api-key': TOKEN,
        'x-trace': 'keep-me',
      },
      redact: [TOKEN],
    });
    expect(response.body).toBe('landed');
    expect(other).toHaveLength(1);
    expect(other[0]?.headers).not.toHaveProperty('cookie');
    expect(other[0]?.headers).not.toHaveProperty('proxy-authorization');
    expect(other[0]?.headers).not.toHaveProperty('x-api-key');
    expect(other[0]?.headers['x-trace']).toBe('keep-me');
  });

  it('are refused when the target URL still carries the token (in its path)', async () => {
    redirectFrom('/things', 302, `${OTHER}/t/${TOKEN}/things`);
    const token = new AccessToken(client(), TOKEN);
    const error = await caught(token.get('/things'));
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).response.status).toBe(302);
    expect((error as Error).message).toContain('target URL carries a token or secret');
    expect((error as Error).message).not.toContain(TOKEN);
    expect(other).toEqual([]);
  });

  it('drop the token under a custom param_name, percent-encoded in the Location, and keep other params', async () => {
    const odd = 'tok+en/with=odd&chars';
    agent
      .get(API)
      .intercept({ path: (p) => p.startsWith('/things'), method: 'GET' })
      .reply((o) => ({
        statusCode: 307,
        data: '',
        responseOptions: { headers: { location: `${OTHER}/landing${o.path.slice(o.path.indexOf('?'))}` } },
      }));
    const token = new AccessToken(client(), odd, { mode: 'query', paramName: 'api_key' });
    await token.get('/things', { params: { page: '3' } });
    expect(other).toHaveLength(1);
    expect(other[0]?.path).toBe('/landing?page=3');
  });

  it('refuse a 307 whose JSON body carries the client secret', async () => {
    redirectFrom('/register', 307, `${OTHER}/register`, 'POST');
    const error = await caught(
      client().request('POST', '/register', {
        headers: { 'content-type': 'application/json' },
        body: { client_secret: SECRET, name: 'x' },
      }),
    );
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as Error).message).toContain('the body carries a token or secret');
    expect((error as Error).message).not.toContain(SECRET);
    expect(other).toEqual([]);
  });

  it('follow a 307 whose body carries no secret, without Authorization', async () => {
    redirectFrom('/things', 307, `${OTHER}/things`, 'POST');
    const token = new AccessToken(client(), TOKEN);
    await token.post('/things', { body: { name: 'x' } });
    expect(other.map(({ method, body }) => ({ method, body }))).toEqual([{ method: 'POST', body: 'name=x' }]);
    expect(other[0]?.headers).not.toHaveProperty('authorization');
  });

  it('keep the refusal in response.error with raiseErrors: false', async () => {
    redirectFrom('/things', 308, `${OTHER}/things`, 'POST');
    const token = new AccessToken(client({ raiseErrors: false }), TOKEN, { mode: 'body' });
    const response = await token.post('/things', { body: { name: 'x' } });
    expect(response.status).toBe(308);
    expect(response.error).toBeInstanceOf(OAuth2Error);
    expect(other).toEqual([]);
  });

  for (const location of ['javascript:alert(1)', 'ftp://other.example.test/x', 'file:///etc/passwd']) {
    it(`are refused to a non-http(s) Location (${location.split(':')[0]})`, async () => {
      redirectFrom('/things', 302, location);
      const error = await caught(client().request('GET', '/things'));
      expect(error).toBeInstanceOf(OAuth2Error);
      expect((error as Error).message).toContain('only http and https URLs are');
    });
  }

  it('stop at maxRedirects: a loop returns the last redirect after maxRedirects + 1 requests', async () => {
    let hops = 0;
    agent
      .get(API)
      .intercept({ path: '/loop', method: 'GET' })
      .reply(() => {
        hops += 1;
        return { statusCode: 302, data: '', responseOptions: { headers: { location: '/loop' } } };
      })
      .persist();
    const response = await client({ connection: { maxRedirects: 3 } }).request('GET', '/loop');
    expect(response.status).toBe(302);
    expect(hops).toBe(4);
  });
});

describe('token and revocation requests never follow a redirect', () => {
  it('a token endpoint 307 to another origin: OAuth2Error carrying the 307, nothing sent there', async () => {
    redirectFrom('/oauth/token', 307, `${OTHER}/oauth/token`, 'POST');
    const error = await caught(
      client({ authScheme: 'request_body' }).password.getToken('alice', 'alice-password-1'),
    );
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).response.status).toBe(307);
    expect((error as Error).message.split('\n')[0]).toBe(
      `redirect 307 to "${OTHER}" not followed: a request carrying client credentials or a grant never follows a redirect`,
    );
    expect(other).toEqual([]);
  });

  it('a same-origin 302 is not followed either', async () => {
    redirectFrom('/oauth/token', 302, '/oauth/token2', 'POST');
    const error = await caught(client().clientCredentials.getToken());
    expect((error as OAuth2Error).response.status).toBe(302);
  });

  it('revocation with raiseErrors: false returns the 3xx with its error', async () => {
    redirectFrom('/oauth/revoke', 302, `${OTHER}/oauth/revoke`, 'POST');
    const response = await client({ raiseErrors: false }).revokeToken(TOKEN);
    expect(response.status).toBe(302);
    expect(response.error).toBeInstanceOf(OAuth2Error);
    expect(response.error?.message).not.toContain(TOKEN);
    expect(other).toEqual([]);
  });
});

/** A web stream of `total` bytes made on demand, 64 KiB a pull; `pulled` counts what was made. */
function lazyStream(total: number, pulled: { bytes: number }): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  return new ReadableStream({
    pull(controller) {
      if (pulled.bytes >= total) controller.close();
      else {
        pulled.bytes += chunk.length;
        controller.enqueue(chunk);
      }
    },
  });
}

describe('maxResponseBytes', () => {
  const MB = 1024 * 1024;

  it('a 30 MB MockAgent answer with a content-length: ResponseTooLargeError, short and without body', async () => {
    const body = Buffer.alloc(30 * MB, 'secret-in-body ');
    agent
      .get(API)
      .intercept({ path: '/big', method: 'GET' })
      .reply(200, body, { headers: { 'content-length': String(body.length), 'content-type': 'text/html' } });
    const error = await caught(client().request('GET', '/big'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    const tooLarge = error as ResponseTooLargeError;
    expect(tooLarge.message).toBe(
      `response 200 to GET "${API}/big" is larger than "maxResponseBytes" (1048576 bytes): not read`,
    );
    expect(tooLarge.response.status).toBe(200);
    expect(tooLarge.response.headers.get('content-type')).toBe('text/html');
    expect(tooLarge.response.body).toBe('');
  });

  it('a 30 MB MockAgent answer without a content-length stops too', async () => {
    agent
      .get(API)
      .intercept({ path: '/big', method: 'GET' })
      .reply(200, Buffer.alloc(30 * MB, 'x'));
    const error = await caught(client().request('GET', '/big'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message.length).toBeLessThan(300);
  });

  it('a custom fetch streaming 30 MB: reading stops just past the limit and the stream is cancelled', async () => {
    const pulled = { bytes: 0 };
    const fetch: FetchLike = async () => new Response(lazyStream(30 * MB, pulled));
    const token = new AccessToken(client({ connection: { fetch } }), TOKEN, {
      mode: 'query',
      paramName: 'api_key',
    });
    const error = await caught(token.get('/big'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as Error).message).toContain('api_key=[FILTERED]');
    expect((error as Error).message).not.toContain(TOKEN);
    expect(pulled.bytes).toBeLessThan(2 * MB);
  });

  it('a custom fetch announcing 30 MB is refused before its body is read', async () => {
    const pulled = { bytes: 0 };
    const fetch: FetchLike = async () =>
      new Response(lazyStream(30 * MB, pulled), { headers: { 'content-length': String(30 * MB) } });
    expect(await caught(client({ connection: { fetch } }).request('GET', '/big'))).toBeInstanceOf(
      ResponseTooLargeError,
    );
    expect(pulled.bytes).toBeLessThanOrEqual(64 * 1024);
  });

  it('a custom fetch whose body is a Node stream (node-fetch style) stops past the limit too', async () => {
    let made = 0;
    const chunk = Buffer.alloc(64 * 1024, 'n');
    const body = new Readable({
      read() {
        made += chunk.length;
        this.push(made > 30 * MB ? null : chunk);
      },
    });
    const fetch = (async () => ({
      status: 200,
      headers: new Headers(),
      body,
      text: async () => {
        throw new Error('text() reads everything');
      },
    })) as unknown as FetchLike;
    const error = await caught(client({ connection: { fetch } }).request('GET', '/big'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(made).toBeLessThan(3 * MB);
    expect(body.destroyed).toBe(true);
  });

  it('is the limit exactly: limit bytes are read, one more is refused', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/exact', method: 'GET' }).reply(200, 'x'.repeat(100));
    pool.intercept({ path: '/over', method: 'GET' }).reply(200, 'x'.repeat(101));
    const small = client({ connection: { maxResponseBytes: 100 } });
    expect((await small.request('GET', '/exact')).body).toHaveLength(100);
    const error = await caught(small.request('GET', '/over'));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).limit).toBe(100);
    expect(small.options.maxResponseBytes).toBe(100);
    expect(client().options.maxResponseBytes).toBe(1_048_576);
  });

  it('a per-request maxResponseBytes overrides the connection limit, both ways', async () => {
    const pool = agent.get(API);
    pool.intercept({ path: '/k', method: 'GET' }).reply(200, 'x'.repeat(1000)).times(2);
    expect(
      (
        await client({ connection: { maxResponseBytes: 10 } }).request('GET', '/k', {
          maxResponseBytes: 1000,
        })
      ).body,
    ).toHaveLength(1000);
    const error = await caught(client().request('GET', '/k', { maxResponseBytes: 999 }));
    expect((error as ResponseTooLargeError).limit).toBe(999);
  });

  it('a content-length on a HEAD, 204 or 304 answer is not a body size', async () => {
    const pool = agent.get(API);
    const big = { headers: { 'content-length': String(30 * MB) } };
    pool.intercept({ path: '/file', method: 'HEAD' }).reply(200, '', big);
    pool.intercept({ path: '/cached', method: 'GET' }).reply(304, '', big);
    const c = client();
    expect((await c.request('HEAD', '/file')).status).toBe(200);
    expect((await c.request('GET', '/cached')).status).toBe(304);
    const fetch: FetchLike = async () => new Response(null, { status: 204, headers: big.headers });
    expect((await client({ connection: { fetch } }).request('DELETE', '/x')).status).toBe(204);
  });

  for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1000', null]) {
    it(`refuses ${String(bad)} as a limit with a TypeError naming the option`, async () => {
      expect(() => client({ connection: { maxResponseBytes: bad as number } })).toThrow(
        new TypeError('"connection.maxResponseBytes" must be a positive integer number of bytes'),
      );
      await expect(client().request('GET', '/k', { maxResponseBytes: bad as number })).rejects.toThrow(
        new TypeError('"maxResponseBytes" must be a positive integer number of bytes'),
      );
    });
  }
});

describe('site and endpoints are http or https only', () => {
  for (const site of ['javascript:alert(1)', 'ftp://x', 'localhost:8080', 'file:///etc/passwd', 'data:,x']) {
    it(`site ${JSON.stringify(site)} is a TypeError naming "site"`, () => {
      expect(() => new Client('id', 'secret', { site })).toThrow(
        new TypeError('"site" must be an http or https URL'),
      );
    });
  }

  it('an unparseable site keeps its own message; http and https pass', () => {
    expect(() => new Client('id', 'secret', { site: 'not a url' })).toThrow(/"site"/);
    expect(new Client('id', 'secret', { site: 'HTTPS://id.example.test' }).site).toBe(
      'https://id.example.test/',
    );
    expect(new Client('id', 'secret', { site: 'http://127.0.0.1:8080' }).site).toBe('http://127.0.0.1:8080/');
  });

  for (const field of ['authorizeUrl', 'tokenUrl', 'revokeUrl'] as const) {
    it(`"${field}" as javascript: or ftp: is a TypeError naming it; a relative path is fine`, () => {
      for (const value of ['javascript:alert(1)', 'ftp://x/token']) {
        expect(() => new Client('id', 'secret', { site: API, [field]: value })).toThrow(
          new TypeError(`"${field}" must be an http or https URL`),
        );
      }
      expect(new Client('id', 'secret', { site: API, [field]: 'realms/x/token' }).options[field]).toBe(
        'realms/x/token',
      );
    });
  }

  it('discovery refuses a document whose endpoint is not http(s) with DiscoveryError invalid_metadata', async () => {
    agent
      .get(API)
      .intercept({ path: '/.well-known/openid-configuration' })
      .reply(
        200,
        { issuer: API, token_endpoint: `${API}/token`, authorization_endpoint: 'javascript:alert(1)' },
        JSON_HEADERS,
      );
    const error = await caught(Client.discover(API, 'id', SECRET, { connection: { dispatcher: agent } }));
    expect(error).toBeInstanceOf(DiscoveryError);
    expect((error as DiscoveryError).code).toBe('invalid_metadata');
    expect((error as Error).message).toContain('"authorization_endpoint" that is not an http or https URL');
  });
});

describe('transport failures', () => {
  /** A fetch that fails like Node's fetch does: a TypeError whose cause has the code. */
  function failing(code: string, causeMessage: string): FetchLike {
    return async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error(causeMessage), { code }) });
    };
  }

  const cases = [
    ['ECONNREFUSED', 'connection refused (ECONNREFUSED)'],
    ['ENOTFOUND', 'DNS lookup failed (ENOTFOUND)'],
    ['EAI_AGAIN', 'DNS lookup failed (EAI_AGAIN)'],
    ['CERT_HAS_EXPIRED', 'TLS error (CERT_HAS_EXPIRED)'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS error (ERR_TLS_CERT_ALTNAME_INVALID)'],
    ['ECONNRESET', 'connection reset (ECONNRESET)'],
  ] as const;

  for (const [code, cause] of cases) {
    it(`${code}: a ConnectionError naming "${cause}", never the query token`, async () => {
      // The cause's own message quotes the URL, token included: it is not copied into the message.
      const fetch = failing(code, `request to ${API}/things?api_key=${TOKEN} failed`);
      const token = new AccessToken(client({ connection: { fetch } }), TOKEN, {
        mode: 'query',
        paramName: 'api_key',
      });
      const error = await caught(token.get('/things'));
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toBe(
        `request GET "${API}/things?api_key=[FILTERED]" failed: ${cause}`,
      );
    });
  }

  it('a code that is not an identifier is not quoted into the message', async () => {
    const fetch = failing(`x ${TOKEN}`, 'nope');
    const error = await caught(client({ connection: { fetch } }).request('GET', '/things'));
    expect((error as Error).message).toBe(`request GET "${API}/things" failed`);
  });

  it('a MockAgent reply slower than the timeout: TimeoutError without the query token', async () => {
    agent
      .get(API)
      .intercept({ path: (p) => p.startsWith('/slow'), method: 'GET' })
      .reply(200, 'late')
      .delay(500);
    const c = client({ connection: { timeout: 50 } });
    const token = new AccessToken(c, TOKEN, { mode: 'query', param_name: 'api_key' });
    const error = await caught(token.get('/slow'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe(
      `request GET "${API}/slow?api_key=[FILTERED]" timed out after 50 ms`,
    );
    expect(inspect(error)).not.toContain(TOKEN);
  });
});
