// One transport path: every request of a client goes out the same way with the same headers, the first one
// of the process included (no switch to another HTTP stack once something has loaded in the background).
import { describe, expect, it, vi } from 'vitest';
import { Client, ConnectionError } from '../../../lib/oauth2/index.js';
import type { FetchInit } from '../../../lib/oauth2/types.js';
import { type Captured, capture, mockAgent, mockClient, SITE, tokenEndpoint } from './helpers.js';

const FORM = 'application/x-www-form-urlencoded';

/** A custom fetch that records what it was handed and answers a token response. */
function recordingFetch(calls: Array<{ url: string; init: FetchInit }>) {
  return vi.fn(async (url: string, init: FetchInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify({ access_token: `at-${calls.length}`, expires_in: 60 }), {
      headers: { 'content-type': 'application/json' },
    });
  });
}

describe('Transport', () => {
  it('sends the first and every later token request with identical headers', async () => {
    const agent = mockAgent();
    const pool = agent.get(SITE);
    const seen: Captured[] = [];
    for (let i = 0; i < 3; i += 1) tokenEndpoint(pool, seen);
    const client = mockClient(agent);
    await client.clientCredentials.getToken({ scope: 'read' });
    await client.clientCredentials.getToken({ scope: 'read' });
    // Whatever a first request might have set going in the background has settled by now.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await client.clientCredentials.getToken({ scope: 'read' });

    expect(seen).toHaveLength(3);
    const [first, ...later] = seen.map((request) => request.headers);
    expect(first).toMatchObject({ accept: '*/*', 'content-type': FORM, 'user-agent': 'forgebridge-oauth2' });
    expect(first?.authorization).toMatch(/^Basic /);
    for (const headers of later) expect(headers).toEqual(first);
  });

  it('hands a custom fetch the same headers on every request, and the dispatcher when one is set', async () => {
    const calls: Array<{ url: string; init: FetchInit }> = [];
    const dispatcher = mockAgent();
    const client = new Client('id', 'secret', {
      site: SITE,
      connection: { fetch: recordingFetch(calls), dispatcher },
    });
    await client.clientCredentials.getToken({});
    await client.clientCredentials.getToken({});
    expect(calls).toHaveLength(2);
    expect(calls[0]?.init).toMatchObject({ method: 'POST', redirect: 'manual', dispatcher });
    expect(calls[0]?.init.headers).toMatchObject({ accept: '*/*', 'content-type': FORM });
    expect(calls[1]?.init.headers).toEqual(calls[0]?.init.headers);
  });
});

describe('Client#request() bodies', () => {
  async function sent(options: Parameters<Client['request']>[2]): Promise<Captured> {
    const agent = mockAgent();
    const seen: Captured[] = [];
    agent
      .get(SITE)
      .intercept({ path: '/api/things', method: 'POST' })
      .reply(200, (o) => {
        seen.push(capture(o));
        return 'ok';
      });
    await mockClient(agent).request('POST', 'api/things', options);
    return seen[0] as Captured;
  }

  it('labels a string body given without a content type as a form, as the gem does', async () => {
    const request = await sent({ body: 'a=1&b=2' });
    expect(request.headers['content-type']).toBe(FORM);
    expect(request.body).toBe('a=1&b=2');
  });

  it('labels a byte body given without a content type as a form, as the gem does', async () => {
    expect((await sent({ body: new TextEncoder().encode('a=1') })).headers['content-type']).toBe(FORM);
  });

  it("keeps the caller's content type and accept", async () => {
    const { headers } = await sent({
      body: '{"a":1}',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    });
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('application/json');
  });

  it('sends no content type without a body', async () => {
    const { headers } = await sent({});
    expect(headers['content-type']).toBeUndefined();
    expect(headers.accept).toBe('*/*');
  });
});

describe('connection.proxy', () => {
  it('rejects a proxy token: credentials go in the proxy URL', () => {
    expect(
      () =>
        new Client('id', 'secret', {
          site: SITE,
          connection: { proxy: { uri: 'http://proxy.test:3128', token: 'Basic abc' } as { uri: string } },
        }),
    ).toThrow(
      new TypeError('"connection.proxy.token" is not supported: put the credentials in the proxy URL'),
    );
  });
});

describe('Transport failures', () => {
  it('wraps a rejected fetch in ConnectionError with a redacted URL', async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError('fetch failed');
    });
    const client = new Client('id', 'secret', { site: SITE, connection: { fetch } });
    const error = await client.request('GET', 'api?access_token=abcdef').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).message).toBe(
      `request GET "${SITE}/api?access_token=[FILTERED]" failed`,
    );
  });

  it('rejects a URL that is neither http nor https', async () => {
    const client = new Client('id', 'secret');
    const error = await client.request('GET', 'ftp://files.test/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(((error as ConnectionError).cause as Error).message).toBe('unsupported protocol "ftp:"');
  });
});
