// Requests the middleware answers before reading their body (404 without next, 415, 400 on headers, 413): every
// one must get its whole response, never a connection reset. A real node:http server on 127.0.0.1 (port 0); each
// request goes over its own raw TCP socket that writes the whole body (as a forge or a proxy does, without
// waiting for an answer) and then reads until the server closes, so a reset shows up as a socket error (EPIPE,
// ECONNRESET) or as a missing/partial response.
import { createServer, type RequestListener, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sign, Webhooks } from '../../../lib/webhooks/index.js';

const SECRET = 'early-answers-secret';
const KB = 1024;
const MB = 1024 * KB;
/** The drain bound is the body limit: small enough that some early-answered bodies are past it and some are not. */
const MAX_BODY_BYTES = 1 * MB;
const METHODS = ['PATCH', 'PUT', 'DELETE'];
const SIZES = [1 * KB, 64 * KB, 512 * KB, 2 * MB, 8 * MB];
const CONCURRENCY = 8;

interface Outcome {
  status?: number;
  headers: Record<string, string>;
  body?: string;
  error?: string;
}

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  bodyBytes: number;
  /** Send the body chunked instead of with a content-length. */
  chunked?: boolean;
  /** A second request on the same connection, after the first one. */
  followUp?: { method: string; path: string; headers: Record<string, string>; body: string };
}

const servers: { close(): Promise<void> }[] = [];
const byPort = new Map<number, Server>();

async function listen(listener: RequestListener): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  const { port } = server.address() as AddressInfo;
  byPort.set(port, server);
  return port;
}

function head(request: Sent, port: number): string {
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: 127.0.0.1:${port}`];
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`);
  if (request.chunked) lines.push('transfer-encoding: chunked');
  else if (request.bodyBytes > 0) lines.push(`content-length: ${request.bodyBytes}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Parses every complete HTTP/1.1 response (content-length framed) in `data`. */
function parseResponses(data: Buffer): Outcome[] {
  const responses: Outcome[] = [];
  let offset = 0;
  while (offset < data.length) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end === -1) break;
    const [statusLine, ...lines] = data.subarray(offset, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (data.length < end + 4 + length) break;
    responses.push({
      status: Number(statusLine?.split(' ')[1]),
      headers,
      body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
    });
    offset = end + 4 + length;
  }
  return responses;
}

/**
 * Sends one request (and its optional follow-up) on a fresh socket, writing the whole body, then ends the
 * socket and reads until the server closes it.
 */
function send(port: number, request: Sent): Promise<Outcome[]> {
  return new Promise((resolve) => {
    // allowHalfOpen: the server's FIN does not end the client's side (Node.js's default does), so the client goes on
    // writing as a forge's HTTP client does, and a stalled client stays stalled.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error ??= cause.code ?? cause.message;
    });
    socket.on('close', () => {
      const responses = parseResponses(Buffer.concat(received));
      if (error !== undefined) responses.push({ headers: {}, error });
      resolve(responses);
    });
    socket.setTimeout(10_000, () => {
      error ??= 'client timeout';
      socket.destroy();
    });
    socket.write(head(request, port));
    const body = Buffer.alloc(request.bodyBytes, 0x61);
    if (request.chunked) {
      // 256 KB chunks: a chunked body announces no length, so the bound is found only while reading.
      for (let at = 0; at < body.length; at += 256 * KB) {
        const piece = body.subarray(at, at + 256 * KB);
        socket.write(`${piece.length.toString(16)}\r\n`);
        socket.write(piece);
        socket.write('\r\n');
      }
      socket.write('0\r\n\r\n');
    } else {
      socket.write(body);
    }
    if (request.followUp) {
      const next = request.followUp;
      const headers = { ...next.headers, 'content-length': String(Buffer.byteLength(next.body)) };
      const lines = [`${next.method} ${next.path} HTTP/1.1`, `host: 127.0.0.1:${port}`];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n${next.body}`);
    }
    socket.end();
  });
}

/** Runs `tasks` at most `limit` at a time, keeping the order of the results. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

function deliveryHeaders(raw: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-forge-event': 'issues',
    'x-forge-delivery': 'early-1',
    'x-hub-signature-256': sign(SECRET, raw),
  };
}

let plainPort: number;
let nextPort: number;
const handled = vi.fn();

beforeAll(async () => {
  const webhooks = new Webhooks({
    secret: SECRET,
    path: '/webhooks',
    maxBodyBytes: MAX_BODY_BYTES,
    log: { warn: vi.fn(), error: vi.fn() },
  });
  webhooks.on('issues', handled);
  plainPort = await listen((request, response) => void webhooks.middleware(request, response));
  // An app behind the middleware: the requests handed to `next` are its own, body and all (it reads the body
  // and reports how many bytes reached it, so a body touched by the middleware shows).
  nextPort = await listen(
    (request, response) =>
      void webhooks.middleware(request, response, () => {
        let bytes = 0;
        request.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        request.on('end', () => {
          const status = request.url === '/webhooks' ? 405 : 404;
          const text = JSON.stringify({ bytes });
          response.writeHead(status, { 'content-type': 'application/json', 'content-length': text.length });
          response.end(text);
        });
      }),
  );
});

beforeEach(() => {
  handled.mockClear();
});

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface Case {
  label: string;
  port: () => number;
  request: Sent;
  status: number;
  code?: string;
  /** What the app behind the middleware read. */
  bytes?: number;
  /** Whether the answer must say `connection: close`. */
  close?: boolean;
}

interface Run {
  requests: number;
  resets: number;
  bytes: number;
  wrong: string[];
  elapsed: number;
}

/** Sends every case over its own socket, `CONCURRENCY` at a time, and checks each first response. */
async function run(list: Case[]): Promise<Run> {
  const started = performance.now();
  const outcomes = await pool(
    list.map((item) => () => send(item.port(), item.request)),
    CONCURRENCY,
  );
  const elapsed = Math.round(performance.now() - started);
  const wrong: string[] = [];
  let resets = 0;
  outcomes.forEach((responses, index) => {
    const item = list[index]!;
    const first = responses[0];
    const errors = responses.filter((response) => response.error !== undefined);
    resets += errors.length;
    const problems: string[] = errors.map((response) => response.error ?? '');
    if (first?.status !== item.status) problems.push(`status ${first?.status ?? 'none'}`);
    else {
      const body = JSON.parse(first.body ?? '');
      if (item.code !== undefined && body?.error?.code !== item.code) problems.push(`body ${first.body}`);
      if (item.bytes !== undefined && body?.bytes !== item.bytes) problems.push(`body ${first.body}`);
      if (item.close !== undefined && (first.headers.connection === 'close') !== item.close) {
        problems.push(`connection: ${first.headers.connection ?? 'keep-alive'}`);
      }
    }
    if (responses.length !== 1) problems.push(`${responses.length} responses`);
    if (problems.length > 0) wrong.push(`${item.label}: ${problems.join(', ')}`);
  });
  const bytes = list.reduce((sum, item) => sum + item.request.bodyBytes, 0);
  return { requests: list.length, resets, bytes, wrong, elapsed };
}

function figures(label: string, result: Run): string {
  return `${label}: ${result.requests} requests, ${Math.round(result.bytes / MB)} MB of body, ${result.resets} resets, ${result.wrong.length} wrong, ${result.elapsed} ms`;
}

/**
 * 200 PATCH, PUT and DELETE requests answered 404 by the middleware without `next`: every size with every
 * method, on the path (the client keeps the connection) and elsewhere (the client asks to close it), with a
 * content-length or chunked.
 */
function notFoundCases(): Case[] {
  return Array.from({ length: 200 }, (_, index) => {
    const method = METHODS[index % METHODS.length]!;
    const size = SIZES[Math.floor(index / METHODS.length) % SIZES.length]!;
    const keep = Math.floor(index / 15) % 2 === 0;
    const chunked = Math.floor(index / 30) % 2 === 1;
    const path = keep ? '/webhooks' : '/elsewhere';
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    // A client that asks to close after this request (HTTP/1.0 habits, `agent: false`) as well as one that
    // keeps the connection: the answer says close when the client asked or the body is past the bound.
    if (!keep) headers.connection = 'close';
    return {
      label: `${method} ${path} ${size} B${chunked ? ' chunked' : ''}`,
      port: () => plainPort,
      request: { method, path, headers, bodyBytes: size, chunked },
      status: 404,
      code: 'not_found',
      close: !keep || size > MAX_BODY_BYTES,
    };
  });
}

/** The middleware's own early answers (on both servers: `next` changes nothing for them), and `next`'s bodies. */
function otherCases(): Case[] {
  const all: Case[] = [];
  for (const [index, size] of SIZES.entries()) {
    const raw = 'x'.repeat(size);
    const signed = deliveryHeaders(raw);
    const port = index % 2 === 0 ? () => plainPort : () => nextPort;
    const close = size > MAX_BODY_BYTES;
    all.push({
      label: `POST ${size} B as text/plain`,
      port,
      request: {
        method: 'POST',
        path: '/webhooks',
        headers: { ...signed, 'content-type': 'text/plain' },
        bodyBytes: size,
      },
      status: 415,
      code: 'unsupported_media_type',
      close,
    });
    for (const header of ['x-forge-event', 'x-forge-delivery', 'x-hub-signature-256']) {
      const { [header]: _left, ...headers } = signed;
      all.push({
        label: `POST ${size} B without ${header}`,
        port,
        request: {
          method: 'POST',
          path: '/webhooks',
          headers,
          bodyBytes: size,
          chunked: header === 'x-forge-event',
        },
        status: 400,
        code: 'missing_header',
        close,
      });
    }
    for (const method of METHODS) {
      all.push({
        label: `${method} /webhooks ${size} B with next`,
        port: () => nextPort,
        request: {
          method,
          path: '/webhooks',
          headers: { 'content-type': 'application/json' },
          bodyBytes: size,
        },
        status: 405,
        bytes: size,
        close: false,
      });
    }
  }
  for (const size of [MAX_BODY_BYTES + 1, 2 * MB, 8 * MB]) {
    const headers = deliveryHeaders('x'.repeat(size));
    for (const chunked of [false, true]) {
      all.push({
        label: `POST ${size} B ${chunked ? 'chunked' : 'with content-length'} over the limit`,
        port: chunked ? () => nextPort : () => plainPort,
        request: { method: 'POST', path: '/webhooks', headers, bodyBytes: size, chunked },
        status: 413,
        code: 'payload_too_large',
        close: true,
      });
    }
  }
  return all;
}

describe('early answers of the webhook middleware', () => {
  it('answers 200 PATCH, PUT and DELETE requests with bodies of 1 KB to 8 MB in full, with 0 resets', async () => {
    const result = await run(notFoundCases());
    console.log(figures('early 404 answers', result));
    expect(result.requests).toBe(200);
    expect({ resets: result.resets, wrong: result.wrong }).toEqual({ resets: 0, wrong: [] });
    expect(handled).not.toHaveBeenCalled();
  }, 60_000);

  it('answers 415, 400 and 413 in full before reading the body, and hands `next` the body untouched', async () => {
    const result = await run(otherCases());
    console.log(figures('early 415/400/413 answers and next', result));
    expect({ resets: result.resets, wrong: result.wrong }).toEqual({ resets: 0, wrong: [] });
    expect(handled).not.toHaveBeenCalled();
  }, 60_000);

  it.each([
    ['GET without a body', { method: 'GET', bodyBytes: 0 }],
    ['PATCH with 64 KB', { method: 'PATCH', bodyBytes: 64 * KB }],
    ['DELETE with 512 KB chunked', { method: 'DELETE', bodyBytes: 512 * KB, chunked: true }],
    ['PUT with exactly the bound', { method: 'PUT', bodyBytes: MAX_BODY_BYTES }],
  ])('keeps the connection for the next request after a %s', async (_label, request) => {
    const raw = JSON.stringify({ action: 'opened' });
    const responses = await send(plainPort, {
      ...request,
      path: '/webhooks',
      headers: { 'content-type': 'application/json' },
      followUp: { method: 'POST', path: '/webhooks', headers: deliveryHeaders(raw), body: raw },
    });
    expect(responses.map((response) => response.status ?? response.error)).toEqual([404, 200]);
    expect(responses[0]?.headers.connection).not.toBe('close');
    expect(responses[1]?.body).toBe('{"ok":true}');
    expect(handled).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['PUT with 2 MB', { method: 'PUT', bodyBytes: 2 * MB }],
    ['PATCH with 2 MB chunked', { method: 'PATCH', bodyBytes: 2 * MB, chunked: true }],
    ['POST over the limit', { method: 'POST', bodyBytes: 8 * MB }],
  ])(
    'says "connection: close" after a %s and closes once the client is done, without a reset',
    async (_label, request) => {
      const raw = JSON.stringify({ action: 'opened' });
      const responses = await send(plainPort, {
        ...request,
        path: '/webhooks',
        headers:
          request.method === 'POST'
            ? deliveryHeaders('x'.repeat(request.bodyBytes))
            : { 'content-type': 'application/json' },
        followUp: { method: 'POST', path: '/webhooks', headers: deliveryHeaders(raw), body: raw },
      });
      // The request pipelined behind the answer is read and dropped, never handled: the server said it closes,
      // and it did, without a reset.
      expect(responses.map((response) => response.status ?? response.error)).toEqual([
        request.method === 'POST' ? 413 : 404,
      ]);
      expect(responses[0]?.headers.connection).toBe('close');
      expect(handled).not.toHaveBeenCalled();
    },
  );

  it('answers a client that stalls mid-body at once, and closes its connection after the pause bound', async () => {
    const server = byPort.get(plainPort)!;
    // A client that sends 64 KB of a declared 2 MB and then waits, without ever ending its side.
    const socket = connect({ port: plainPort, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    const errors: string[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => errors.push(cause.code ?? cause.message));
    const started = performance.now();
    socket.write(head({ method: 'PATCH', path: '/elsewhere', bodyBytes: 2 * MB }, plainPort));
    socket.write(Buffer.alloc(64 * KB, 0x61));
    await new Promise((resolve) => socket.once('end', resolve));
    const answered = performance.now() - started;
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    while ((await connections()) > 0 && performance.now() - started < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const closed = performance.now() - started;
    socket.destroy();
    const responses = parseResponses(Buffer.concat(received));
    expect(responses.map((response) => response.status)).toEqual([404]);
    expect(responses[0]?.headers.connection).toBe('close');
    expect(errors).toEqual([]);
    // The answer and the server's FIN come at once; the socket is let go after the 5 s pause bound.
    expect(answered).toBeLessThan(1_000);
    expect(closed).toBeGreaterThan(4_500);
    expect(closed).toBeLessThan(10_000);
  }, 20_000);
});
