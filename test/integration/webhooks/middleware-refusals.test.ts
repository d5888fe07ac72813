// What an app's `error` handlers learn of the deliveries the middleware refuses, and when the early 202
// answer comes: through a real node:http server on 127.0.0.1 (port 0), driven with fetch and raw sockets.
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  sign,
  type WebhookEventError,
  WebhookPayloadError,
  Webhooks,
  WebhooksError,
  type WebhooksOptions,
  WebhookVerificationError,
} from '../../../lib/webhooks/index.js';
import { registerSecret } from '../../helpers/secrets.js';

const SECRET = 'middleware-refusals-secret';
registerSecret(SECRET);
const body = JSON.stringify({ action: 'opened', issue: { number: 12 } });

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(listener: RequestListener): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

interface Setup {
  webhooks: Webhooks;
  port: number;
  errors: WebhookEventError[];
  /** Resolves when the middleware's promise for the latest request has settled. */
  settled: () => Promise<void>;
  /** How many requests reached the server. */
  arrived: () => number;
}

async function start(
  options: Partial<WebhooksOptions> = {},
  before?: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<Setup> {
  const log = { warn: vi.fn(), error: vi.fn() };
  const webhooks = new Webhooks({ secret: SECRET, path: '/webhooks', log, ...options });
  const errors: WebhookEventError[] = [];
  webhooks.on('error', (error) => void errors.push(error));
  let done: Promise<void> = Promise.resolve();
  let arrived = 0;
  const port = await listen((request, response) => {
    arrived += 1;
    done = (async () => {
      if (before !== undefined) await before(request, response);
      await webhooks.middleware(request, response);
    })();
  });
  return { webhooks, port, errors, settled: () => done, arrived: () => arrived };
}

function headersFor(raw: string, overrides: Record<string, string | undefined> = {}) {
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-forge-event': 'issues',
    'x-forge-delivery': 'delivery-1',
    'x-hub-signature-256': sign(SECRET, raw),
    ...overrides,
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<
    string,
    string
  >;
}

async function post(setup: Setup, raw: string, overrides: Record<string, string | undefined> = {}) {
  const response = await fetch(`http://127.0.0.1:${setup.port}/webhooks`, {
    method: 'POST',
    headers: headersFor(raw, overrides),
    body: raw,
  });
  const text = await response.text();
  await setup.settled();
  return { status: response.status, code: (JSON.parse(text) as { error?: { code: string } }).error?.code };
}

/** A raw connection: writes the request head and part of the body, and collects what the server answers. */
async function openDelivery(port: number, raw: string, sent: string, headers = headersFor(raw)) {
  const socket: Socket = connect(port, '127.0.0.1');
  closers.push(async () => void socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  let answered: () => void = () => {};
  const answer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
    if (received.includes('\r\n\r\n')) answered();
  });
  const head = Object.entries(headers)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\r\n');
  socket.write(
    `POST /webhooks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(raw)}\r\n${head}\r\n\r\n${sent}`,
  );
  return { socket, answer, received: () => received };
}

/** Nothing in the error may hold the secret or the signature value, wherever an app might print it. */
function expectNoSecretIn(error: unknown, signature: string) {
  const texts = [String(error), inspect(error, { depth: 8, showHidden: true }), JSON.stringify(error) ?? ''];
  for (const text of texts) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(signature.slice('sha256='.length));
  }
}

describe('the middleware tells the error handlers of every delivery it refuses', () => {
  const signature = sign(SECRET, body);

  it.each([
    [
      'a content type other than JSON',
      { 'content-type': 'application/x-www-form-urlencoded' },
      415,
      'unsupported_media_type',
    ],
    ['no event header', { 'x-forge-event': undefined }, 400, 'missing_header'],
    ['no delivery header', { 'x-forge-delivery': undefined }, 400, 'missing_header'],
    ['no signature header', { 'x-hub-signature-256': undefined }, 400, 'missing_header'],
    [
      'a signature made with another secret',
      { 'x-hub-signature-256': sign('another-secret', body) },
      401,
      'invalid_signature',
    ],
    ['a malformed signature', { 'x-hub-signature-256': 'sha256=xyz' }, 401, 'invalid_signature'],
  ] as const)('%s: answers as before and emits the reason', async (_label, overrides, status, code) => {
    const setup = await start();
    expect(await post(setup, body, overrides)).toEqual({ status, code });
    expect(setup.errors).toHaveLength(1);
    const [error] = setup.errors;
    expect(error).toBeInstanceOf(WebhooksError);
    expect(error).toMatchObject({ code, status });
    expect(error?.message).toMatch(/^webhook delivery refused: /);
    expectNoSecretIn(error, signature);
  });

  it('a bad signature is a WebhookVerificationError, as from verifyAndReceive, with the delivery in .event', async () => {
    const setup = await start();
    const forged = sign('another-secret', body);
    expect(await post(setup, body, { 'x-hub-signature-256': forged })).toEqual({
      status: 401,
      code: 'invalid_signature',
    });
    const [error] = setup.errors;
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error?.message).toBe('webhook delivery refused: signature does not match the body');
    expect(error?.event).toEqual({ id: 'delivery-1', name: 'issues', payload: body });
    expectNoSecretIn(error, forged);
  });

  it.each([
    ['a body that is not JSON', 'not json', 'body is not valid JSON'],
    ['a JSON array', '[1,2]', 'body must be a JSON object'],
  ])('%s: a WebhookPayloadError (400 invalid_json)', async (_label, raw, reason) => {
    const setup = await start();
    expect(await post(setup, raw)).toEqual({ status: 400, code: 'invalid_json' });
    const [error] = setup.errors;
    expect(error).toBeInstanceOf(WebhookPayloadError);
    expect(error?.message).toBe(`webhook delivery refused: ${reason}`);
    expect(error?.event).toEqual({ id: 'delivery-1', name: 'issues', payload: raw });
  });

  it('a sole sha1 signature with allowSha1 off: 400 missing_header', async () => {
    const setup = await start({ allowSha1: false });
    const overrides = {
      'x-hub-signature-256': undefined,
      'x-hub-signature': sign(SECRET, body, { algorithm: 'sha1' }),
    };
    expect(await post(setup, body, overrides)).toEqual({ status: 400, code: 'missing_header' });
    expect(setup.errors.map((error) => error.code)).toEqual(['missing_header']);
    expectNoSecretIn(setup.errors[0], overrides['x-hub-signature']);
  });

  it('a body over maxBodyBytes, declared or streamed: 413 payload_too_large', async () => {
    const setup = await start({ maxBodyBytes: 64 });
    const large = JSON.stringify({ action: 'opened', padding: 'x'.repeat(200) });
    expect(await post(setup, large)).toEqual({ status: 413, code: 'payload_too_large' });
    const streamed = await fetch(`http://127.0.0.1:${setup.port}/webhooks`, {
      method: 'POST',
      headers: headersFor(large),
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(large));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    await streamed.text();
    await setup.settled();
    expect(setup.errors.map((error) => [error.code, error.event?.id])).toEqual([
      ['payload_too_large', 'delivery-1'],
      ['payload_too_large', 'delivery-1'],
    ]);
  });

  it('a body a framework parsed first: 500 body_consumed', async () => {
    const setup = await start({}, async (request) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      (request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    });
    expect(await post(setup, body)).toEqual({ status: 500, code: 'body_consumed' });
    expect(setup.errors.map((error) => error.code)).toEqual(['body_consumed']);
  });

  it('a client that goes away mid-body: body_read_failed', async () => {
    const setup = await start();
    const delivery = await openDelivery(setup.port, body, body.slice(0, 10));
    await vi.waitFor(() => expect(setup.arrived()).toBe(1), { timeout: 10_000 });
    delivery.socket.destroy();
    await vi.waitFor(() => expect(setup.errors.map((error) => error.code)).toEqual(['body_read_failed']), {
      timeout: 10_000,
    });
  });

  it('not a refusal: a verified delivery, and a request that is no delivery (404)', async () => {
    const setup = await start();
    expect(await post(setup, body)).toEqual({ status: 200, code: undefined });
    const response = await fetch(`http://127.0.0.1:${setup.port}/webhooks`);
    expect(response.status).toBe(404);
    await response.text();
    await setup.settled();
    expect(setup.errors).toEqual([]);
  });

  it('a delivery refused with no error handler still gets its answer', async () => {
    const webhooks = new Webhooks({ secret: SECRET, path: '/webhooks' });
    const port = await listen(webhooks.middleware);
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
      method: 'POST',
      headers: headersFor(body, { 'x-hub-signature-256': sign('another-secret', body) }),
      body,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { code: 'invalid_signature', message: 'signature does not match the body' },
    });
  });
});

// On a middleware whose clock started late, these would wait for an answer that never comes: bounded here.
describe('the early 202 answer', { timeout: 20_000 }, () => {
  it('counts from the request’s arrival: a body still arriving after `timeout` gets the 202', async () => {
    const setup = await start({ timeout: 200 });
    const handler = vi.fn();
    setup.webhooks.on('issues.opened', handler);
    const delivery = await openDelivery(setup.port, body, body.slice(0, 10));
    await delivery.answer; // before the body is complete: the clock started on arrival
    expect(delivery.received()).toMatch(/^HTTP\/1\.1 202 /);
    expect(delivery.received()).toContain('{"ok":true,"pending":true}');
    expect(handler).not.toHaveBeenCalled();
    delivery.socket.write(body.slice(10));
    // the delivery goes on after the 202: verified, then handled
    await vi.waitFor(() => expect(handler).toHaveBeenCalledTimes(1), { timeout: 10_000 });
    expect(setup.errors).toEqual([]);
  });

  it('a delivery refused after its 202 still reaches the error handlers', async () => {
    const forged = sign('another-secret', body);
    const setup = await start({ timeout: 200 });
    const handler = vi.fn();
    setup.webhooks.on('issues', handler);
    const delivery = await openDelivery(
      setup.port,
      body,
      '',
      headersFor(body, { 'x-hub-signature-256': forged }),
    );
    await delivery.answer;
    expect(delivery.received()).toMatch(/^HTTP\/1\.1 202 /);
    delivery.socket.write(body);
    await vi.waitFor(() => expect(setup.errors.map((error) => error.code)).toEqual(['invalid_signature']), {
      timeout: 10_000,
    });
    expect(handler).not.toHaveBeenCalled();
  });

  it('slow handlers after a slow upload: one 202, and their later failure is logged and emitted', async () => {
    const log = { warn: vi.fn(), error: vi.fn() };
    const setup = await start({ timeout: 200, log });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    setup.webhooks.on('issues', async () => {
      await released;
      throw new Error('handler failed late');
    });
    const delivery = await openDelivery(setup.port, body, body.slice(0, 5));
    await delivery.answer;
    delivery.socket.write(body.slice(5));
    release();
    await vi.waitFor(() => expect(setup.errors.map((error) => error.code)).toEqual(['handler_failed']), {
      timeout: 10_000,
    });
    expect(delivery.received().match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(log.error).toHaveBeenCalledWith('1 webhook handler(s) failed for "issues" delivery "delivery-1"');
  });
});
