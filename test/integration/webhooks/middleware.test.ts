// The middleware through a real node:http server on 127.0.0.1 (port 0), driven with fetch.
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createNodeMiddleware,
  sign,
  type WebhookEventError,
  Webhooks,
  type WebhooksOptions,
} from '../../../lib/webhooks/index.js';

const SECRET = 'middleware-integration-secret';
const payload = { action: 'opened', issue: { number: 12, title: 'café 🎉' } };
const body = JSON.stringify(payload);

interface Running {
  url: string;
  close(): Promise<void>;
}

const running: Running[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function listen(listener: RequestListener): Promise<Running> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: Running = {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  running.push(handle);
  return handle;
}

function quiet() {
  return { warn: vi.fn(), error: vi.fn() };
}

async function start(options: Partial<WebhooksOptions> = {}) {
  const webhooks = new Webhooks({ secret: SECRET, path: '/webhooks', log: quiet(), ...options });
  const server = await listen(webhooks.middleware);
  return { webhooks, url: `${server.url}/webhooks`, base: server.url };
}

function deliveryHeaders(raw: string | Buffer = body, overrides: Record<string, string | undefined> = {}) {
  const headers: Record<string, string> = {};
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-forge-event': 'issues',
    'x-forge-delivery': 'delivery-1',
    'x-hub-signature-256': sign(SECRET, raw),
    ...overrides,
  };
  for (const [key, value] of Object.entries(all)) if (value !== undefined) headers[key] = value;
  return headers;
}

async function post(
  url: string,
  raw: string | Buffer = body,
  overrides: Record<string, string | undefined> = {},
) {
  const response = await fetch(url, { method: 'POST', headers: deliveryHeaders(raw, overrides), body: raw });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

function errorBody(code: string, message: string) {
  return JSON.stringify({ error: { code, message } });
}

describe('webhooks.middleware over node:http', () => {
  it('answers 200 {"ok":true} after the handlers ran, with the event they saw', async () => {
    const { webhooks, url } = await start();
    const seen: unknown[] = [];
    webhooks.on('issues.opened', (event) => {
      seen.push(event);
    });
    const response = await post(url);
    expect(response).toEqual({ status: 200, type: 'application/json; charset=utf-8', text: '{"ok":true}' });
    expect(seen).toEqual([{ id: 'delivery-1', name: 'issues', payload }]);
  });

  it('matches the path with a query string', async () => {
    const { url } = await start();
    expect((await post(`${url}?source=forge`)).status).toBe(200);
  });

  it.each([
    [
      'form-encoded',
      'application/x-www-form-urlencoded',
      'content type "application/x-www-form-urlencoded" is not supported, use "application/json" in the webhook settings',
    ],
    ['text/plain', 'text/plain', 'content type "text/plain" is not supported, use "application/json"'],
  ])('answers 415 for a %s delivery', async (_label, contentType, message) => {
    const { webhooks, url } = await start();
    const handler = vi.fn();
    webhooks.on('issues', handler);
    const response = await post(url, body, { 'content-type': contentType });
    expect(response.status).toBe(415);
    expect(response.text).toBe(errorBody('unsupported_media_type', message));
    expect(handler).not.toHaveBeenCalled();
  });

  it('accepts application/json with a charset parameter', async () => {
    const { url } = await start();
    expect((await post(url, body, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  it.each([['x-forge-event'], ['x-forge-delivery'], ['x-hub-signature-256']])(
    'answers 400 when the %s header is missing',
    async (header) => {
      const { url } = await start();
      const response = await post(url, body, { [header]: undefined });
      expect(response.status).toBe(400);
      expect(response.text).toBe(errorBody('missing_header', `missing "${header}" header`));
    },
  );

  it('answers 401 for a bad signature, without the secret or the signature in the body', async () => {
    const { webhooks, url } = await start();
    const handler = vi.fn();
    webhooks.on('issues', handler);
    const forged = sign('not-the-secret', body);
    const response = await post(url, body, { 'x-hub-signature-256': forged });
    expect(response.status).toBe(401);
    expect(response.text).toBe(errorBody('invalid_signature', 'signature does not match the body'));
    expect(response.text).not.toContain(SECRET);
    expect(response.text).not.toContain(forged.slice(7));
    expect(handler).not.toHaveBeenCalled();
  });

  it('answers 401 for a body changed in transit', async () => {
    const { url } = await start();
    const response = await fetch(url, {
      method: 'POST',
      headers: deliveryHeaders(body),
      body: body.replace('12', '13'),
    });
    expect(response.status).toBe(401);
  });

  it('checks only sha256 when both signature headers are present', async () => {
    const { url } = await start();
    const response = await post(url, body, {
      'x-hub-signature-256': sign('wrong', body),
      'x-hub-signature': sign(SECRET, body, { algorithm: 'sha1' }),
    });
    expect(response.status).toBe(401);
  });

  it('accepts a sole sha1 signature, unless allowSha1 is off', async () => {
    const sha1 = {
      'x-hub-signature-256': undefined,
      'x-hub-signature': sign(SECRET, body, { algorithm: 'sha1' }),
    };
    const lenient = await start();
    expect((await post(lenient.url, body, sha1)).status).toBe(200);
    const strict = await start({ allowSha1: false });
    const response = await post(strict.url, body, sha1);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toMatchObject({ error: { code: 'missing_header' } });
  });

  it('accepts a signature made with any configured secret', async () => {
    const { url } = await start({ secret: ['next-secret', SECRET] });
    expect((await post(url)).status).toBe(200);
  });

  it('answers 400 for a correctly signed body that is not JSON', async () => {
    const { url } = await start();
    const raw = '{"action":"opened",';
    const response = await post(url, raw);
    expect(response.status).toBe(400);
    expect(response.text).toBe(errorBody('invalid_json', 'body is not valid JSON'));
  });

  it('answers 413 for a declared content-length over the limit', async () => {
    const { webhooks, url } = await start({ maxBodyBytes: 1024 });
    const handler = vi.fn();
    webhooks.on('issues', handler);
    const big = JSON.stringify({ action: 'opened', filler: 'x'.repeat(4096) });
    const response = await post(url, big);
    expect(response.status).toBe(413);
    expect(response.text).toBe(errorBody('payload_too_large', 'body is larger than the limit of 1024 bytes'));
    expect(handler).not.toHaveBeenCalled();
  });

  it('answers 413 as soon as a streamed body passes the limit, without waiting for the rest', async () => {
    const { url } = await start({ maxBodyBytes: 64 * 1024 });
    let pulls = 0;
    // A chunked body that passes the limit and then never ends: only an early answer can settle the fetch.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        if (pulls <= 5) controller.enqueue(new Uint8Array(32 * 1024).fill(0x20));
        else return new Promise(() => {});
        return undefined;
      },
    });
    const response = await fetch(url, {
      method: 'POST',
      headers: deliveryHeaders(body),
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.text()).toBe(
      errorBody('payload_too_large', `body is larger than the limit of ${64 * 1024} bytes`),
    );
  });

  it('answers 500 when a handler fails, without exposing the error, and emits error', async () => {
    const { webhooks, url } = await start();
    const errors: WebhookEventError[] = [];
    webhooks.on('issues', () => {
      throw new Error(`database password is ${SECRET}`);
    });
    webhooks.on('error', (error) => {
      errors.push(error);
    });
    const response = await post(url);
    expect(response.status).toBe(500);
    expect(response.text).toBe(errorBody('handler_failed', 'a webhook handler failed'));
    expect(response.text).not.toContain(SECRET);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.event).toEqual({ id: 'delivery-1', name: 'issues', payload });
  });

  it('logs a handler failure by delivery only, never the error text', async () => {
    const log = quiet();
    const { webhooks, url } = await start({ log });
    webhooks.on('issues', () => {
      throw new Error(`token ${SECRET}`);
    });
    expect((await post(url)).status).toBe(500);
    expect(log.error.mock.calls).toEqual([
      ['1 webhook handler(s) failed for "issues" delivery "delivery-1"'],
    ]);
  });

  it('answers 202 when handlers outlast the timeout, and lets them finish', async () => {
    const { webhooks, url } = await start({ timeout: 100 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finished = false;
    const done = new Promise<void>((resolve) => {
      webhooks.on('issues', async () => {
        await gate; // held until the test has its answer: the 202 cannot wait for the handler
        finished = true;
        resolve();
      });
    });
    const response = await post(url);
    expect(response.status).toBe(202);
    expect(response.text).toBe('{"ok":true,"pending":true}');
    expect(finished).toBe(false);
    release();
    await done;
    expect(finished).toBe(true);
  });

  it('reports a handler that fails after the timeout to the error handlers', async () => {
    const { webhooks, url } = await start({ timeout: 50 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const failed = new Promise<WebhookEventError>((resolve) => {
      webhooks.on('error', resolve);
    });
    webhooks.on('issues', async () => {
      await gate;
      throw new Error('late failure');
    });
    expect((await post(url)).status).toBe(202);
    release();
    const error = await failed;
    expect(error.errors).toEqual([new Error('late failure')]);
  });

  it.each([
    ['GET on the path', 'GET', '/webhooks'],
    ['POST on another path', 'POST', '/other'],
    ['PUT on the path', 'PUT', '/webhooks'],
  ])('answers 404 for %s when there is no next()', async (_label, method, path) => {
    const { base } = await start();
    const response = await fetch(`${base}${path}`, {
      method,
      headers: deliveryHeaders(),
      ...(method === 'GET' ? {} : { body }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { code: 'not_found', message: `no webhook route for ${method} "${path}"` },
    });
  });

  it('hands other paths and methods to next() in an Express-style chain', async () => {
    const webhooks = new Webhooks({ secret: SECRET, path: '/webhooks', log: quiet() });
    const server = await listen((request: IncomingMessage, response: ServerResponse) => {
      void webhooks.middleware(request, response, () => {
        response.statusCode = 299;
        response.end(`next: ${request.method} ${request.url}`);
      });
    });
    const other = await fetch(`${server.url}/health`);
    expect([other.status, await other.text()]).toEqual([299, 'next: GET /health']);
    const get = await fetch(`${server.url}/webhooks`);
    expect([get.status, await get.text()]).toEqual([299, 'next: GET /webhooks']);
    expect((await post(`${server.url}/webhooks`)).status).toBe(200);
  });

  it('answers 500 internal_error, and never rejects, when something in the chain throws', async () => {
    const log = quiet();
    const webhooks = new Webhooks({ secret: SECRET, path: '/webhooks', log });
    const failure = new Error('next() blew up');
    let settled: Promise<void> | undefined;
    const server = await listen((request: IncomingMessage, response: ServerResponse) => {
      settled = webhooks.middleware(request, response, () => {
        throw failure;
      });
    });
    const response = await fetch(`${server.url}/health`);
    expect([response.status, await response.text()]).toEqual([
      500,
      errorBody('internal_error', 'internal error'),
    ]);
    await expect(settled).resolves.toBeUndefined();
    expect(log.error).toHaveBeenCalledWith('webhook middleware failed', failure);
  });

  it('reads configurable header names, so a real forge can deliver', async () => {
    const { webhooks, url } = await start({
      headers: { event: 'X-GitHub-Event', delivery: 'X-GitHub-Delivery' },
    });
    const names: string[] = [];
    webhooks.on('forge_app_authorization.revoked', (event) => {
      names.push(`${event.id} ${event.name}`);
    });
    const raw = '{"action":"revoked"}';
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'github_app_authorization',
        'X-GitHub-Delivery': 'gh-77',
        'X-Hub-Signature-256': sign(SECRET, raw),
      },
      body: raw,
    });
    expect(response.status).toBe(200);
    expect(names).toEqual(['gh-77 forge_app_authorization']);
  });

  it('uses a raw body that a framework parser already read (express.raw style)', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const handler = vi.fn();
    webhooks.on('issues', handler);
    const server = await listen(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      Object.assign(request, { body: Buffer.concat(chunks) });
      await webhooks.middleware(request, response);
    });
    expect((await post(server.url)).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers 500 body_consumed when a JSON parser already consumed the body', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const server = await listen(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      Object.assign(request, { body: JSON.parse(Buffer.concat(chunks).toString()) });
      await webhooks.middleware(request, response);
    });
    const response = await post(server.url);
    expect(response.status).toBe(500);
    expect(JSON.parse(response.text)).toEqual({
      error: {
        code: 'body_consumed',
        message: 'the request body was parsed before the webhook middleware, mount it before body parsers',
      },
    });
  });

  it('answers 500 body_consumed, instead of waiting forever, when the stream was read without a body', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const server = await listen(async (request, response) => {
      for await (const _chunk of request) {
        // drained by an earlier layer that kept nothing
      }
      await webhooks.middleware(request, response);
    });
    const response = await post(server.url);
    expect(response.status).toBe(500);
    expect(JSON.parse(response.text)).toMatchObject({ error: { code: 'body_consumed' } });
  });

  it('settles, without a crash, when the client disconnects in the middle of the body', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const handler = vi.fn();
    webhooks.on('issues', handler);
    let settled: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      settled = resolve;
    });
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await listen((request, response) => {
      arrived();
      void webhooks.middleware(request, response).then(settled);
    });
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const headers = deliveryHeaders(body);
    const head = Object.entries(headers)
      .map(([key, value]) => `${key}: ${value}`)
      .join('\r\n');
    socket.write(
      `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100000\r\n${head}\r\n\r\n{"partial":`,
    );
    await requestArrived;
    socket.destroy();
    await done;
    expect(handler).not.toHaveBeenCalled();
  });

  it('serves createNodeMiddleware() with its own path', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const server = await listen(createNodeMiddleware(webhooks, { path: '/api/forge' }));
    expect((await post(`${server.url}/api/forge`)).status).toBe(200);
    expect((await post(`${server.url}/`)).status).toBe(404);
  });

  it('createNodeMiddleware() refuses what is not a Webhooks instance and unknown options', () => {
    expect(() => createNodeMiddleware({} as never)).toThrow(
      new TypeError('"webhooks" must be a Webhooks instance'),
    );
    const webhooks = new Webhooks({ secret: SECRET });
    expect(() => createNodeMiddleware(webhooks, { port: 1 } as never)).toThrow(
      new TypeError('unknown option "port"'),
    );
    expect(() => createNodeMiddleware(webhooks, { path: 'x' })).toThrow(
      new TypeError('"path" must start with "/"'),
    );
  });

  it('handles concurrent deliveries independently', async () => {
    const { webhooks, url } = await start();
    const ids: string[] = [];
    webhooks.on('issues', async (event) => {
      await new Promise((wait) => setTimeout(wait, 10));
      ids.push(event.id);
    });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => post(url, body, { 'x-forge-delivery': `d-${index}` })),
    );
    expect(statuses.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(ids.sort()).toEqual(Array.from({ length: 20 }, (_, index) => `d-${index}`).sort());
  });
});
