// `mode: 'body'` against a real node:http server: the token travels in the form body for every verb, GET and
// DELETE included, framed by a Content-Length (as the Ruby gem's Net::HTTP sends it), so the server reads the
// body whole and the next request on the same keep-alive connection starts where it should.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccessToken, Client } from '../../../lib/oauth2/index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  socket: number;
}

const TOKEN = 'body-mode-token-7d1f';
const received: Received[] = [];
let server: Server;
let site: string;
const sockets = new WeakMap<object, number>();
let nextSocket = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, nextSocket++);
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: sockets.get(req.socket) as number,
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received.length = 0;
});

function token(): AccessToken {
  return new AccessToken(new Client('id', 'secret', { site }), TOKEN, { mode: 'body' });
}

describe("AccessToken with mode 'body' (Node's http)", () => {
  for (const verb of ['get', 'delete', 'post', 'put', 'patch'] as const) {
    it(`${verb.toUpperCase()} sends the token in a body the server reads, with its Content-Length`, async () => {
      const response = await token()[verb]('/api/things/1');
      expect(response.status).toBe(200);
      expect(received).toHaveLength(1);
      const [request] = received as [Received];
      expect(request.method).toBe(verb.toUpperCase());
      expect(request.url).toBe('/api/things/1');
      expect(request.body).toBe(`access_token=${TOKEN}`);
      expect(request.headers['content-length']).toBe(String(request.body.length));
      expect(request.headers['transfer-encoding']).toBeUndefined();
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(request.headers.authorization).toBeUndefined();
    });
  }

  it('keeps the caller’s body beside the token', async () => {
    await token().get('/search', { body: { q: 'café ☕' } });
    const [request] = received as [Received];
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      q: 'café ☕',
      access_token: TOKEN,
    });
    expect(request.headers['content-length']).toBe(String(request.body.length));
  });

  it('counts a string body’s bytes, not its characters', async () => {
    await token().delete('/notes', { body: 'note=café ☕' });
    const [request] = received as [Received];
    expect(request.body).toBe(`note=café ☕&access_token=${TOKEN}`);
    // é is two bytes in UTF-8 and ☕ three: three bytes more than characters.
    expect(request.headers['content-length']).toBe(String(request.body.length + 3));
  });

  it('reads two GETs in a row on one keep-alive connection as two requests', async () => {
    const client = new Client('id', 'secret', { site });
    const access = new AccessToken(client, TOKEN, { mode: 'body' });
    await access.get('/first');
    await access.delete('/second');
    await access.get('/third');
    expect(received.map(({ method, url, body }) => ({ method, url, body }))).toEqual([
      { method: 'GET', url: '/first', body: `access_token=${TOKEN}` },
      { method: 'DELETE', url: '/second', body: `access_token=${TOKEN}` },
      { method: 'GET', url: '/third', body: `access_token=${TOKEN}` },
    ]);
    expect(new Set(received.map((request) => request.socket)).size).toBe(1);
  });

  it('leaves a GET without a body as it was: no Content-Length, no body', async () => {
    const access = new AccessToken(new Client('id', 'secret', { site }), TOKEN, { mode: 'header' });
    await access.get('/plain');
    const [request] = received as [Received];
    expect(request.body).toBe('');
    expect(request.headers['content-length']).toBeUndefined();
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });
});

describe("AccessToken with mode 'body' (an undici dispatcher)", () => {
  it('GET and DELETE send the token in a framed body too', async () => {
    const dispatcher = new Agent();
    try {
      const client = new Client('id', 'secret', { site, connection: { dispatcher } });
      const access = new AccessToken(client, TOKEN, { mode: 'body' });
      await access.get('/first');
      await access.delete('/second');
      expect(received.map(({ method, body, headers }) => [method, body, headers['content-length']])).toEqual([
        ['GET', `access_token=${TOKEN}`, String(`access_token=${TOKEN}`.length)],
        ['DELETE', `access_token=${TOKEN}`, String(`access_token=${TOKEN}`.length)],
      ]);
    } finally {
      await dispatcher.close();
    }
  });
});
