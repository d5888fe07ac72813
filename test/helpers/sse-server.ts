// A local webhook proxy channel for tests: node:http on 127.0.0.1, port 0. It speaks the public proxy
// service's (smee.io) own wire format, as its server source writes it:
// - `GET /<channel>` with `Accept: text/event-stream` opens the stream; the server first writes
//   `id: 0\nevent: ready\ndata: {}\n\n`, then a keep-alive `event: ping` with `data: {}` every interval.
// - `POST /<channel>` (what the forge calls) is broadcast to every open stream as a default (unnamed) event:
//   `id: N\ndata: <JSON of { ...lowercased request headers, body, query, timestamp }>\n\n`.
//   smee.io parses a JSON body, so `body` is an object; `bodyAs: 'string'` keeps the raw text instead, like a
//   relay that preserves the signed bytes.
// There is no npm package that runs smee's channel server (its repository is private to npm), so this
// fixture speaks the format; it is not an imitation of a package we could run.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of {@link startSseServer}. */
export interface SseServerOptions {
  /** Channel name (the URL path). Default: 16 random url-safe characters, as smee.io makes them. */
  channel?: string;
  /** Keep-alive ping interval in milliseconds. Default: 30 000, smee.io's. */
  pingIntervalMs?: number;
  /** How a POSTed body is relayed: parsed (`'object'`, smee.io) or as the raw text. Default: `'object'`. */
  bodyAs?: 'object' | 'string';
  /**
   * When set, a `retry: <ms>` field opens each stream, so that a test's reconnect takes milliseconds instead
   * of the EventSource default of 3 s. smee.io sends none. Default: none.
   */
  retryMs?: number;
}

/** A running proxy channel server. */
export interface SseServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The channel URL that both the forge (POST) and the client (EventSource) use. */
  readonly url: string;
  /** Broadcasts one message in the service's format; `message` is JSON-encoded into `data:`. */
  publish(message: unknown, event?: string): void;
  /** Writes raw text to every open stream (for malformed frames); the caller writes the framing. */
  sendRaw(text: string): void;
  /** Writes a keep-alive ping to every open stream now. */
  ping(): void;
  /** Ends every open stream from the server side (the clients then reconnect). */
  dropClients(): void;
  /** Number of open streams. */
  clients(): number;
  /** Resolves once at least `count` streams are open. */
  waitForClients(count?: number): Promise<void>;
  /** Number of POSTed deliveries accepted so far. */
  deliveries(): number;
  /** Ends every stream and stops the server. */
  close(): Promise<void>;
}

interface Stream {
  response: ServerResponse;
  counter: number;
}

/**
 * Starts a proxy channel server on 127.0.0.1 with an ephemeral port.
 *
 * @example
 * const server = await startSseServer();
 * const channel = createProxyChannel({ url: server.url, webhooks });
 * await fetch(server.url, { method: 'POST', headers, body });
 */
export async function startSseServer(options: SseServerOptions = {}): Promise<SseServer> {
  const channel = options.channel ?? randomBytes(12).toString('base64url');
  const pingIntervalMs = options.pingIntervalMs ?? 30_000;
  const bodyAs = options.bodyAs ?? 'object';
  const streams = new Set<Stream>();
  const waiters = new Set<() => void>();
  let delivered = 0;

  const write = (stream: Stream, event: string | undefined, data: string): void => {
    const id = stream.counter++;
    stream.response.write(`id: ${id}\n${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`);
  };
  const broadcast = (event: string | undefined, data: string): void => {
    for (const stream of streams) write(stream, event, data);
  };
  const notify = (): void => {
    for (const waiter of waiters) waiter();
  };

  const openStream = (request: IncomingMessage, response: ServerResponse): void => {
    request.socket.setTimeout(0);
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const stream: Stream = { response, counter: 0 };
    streams.add(stream);
    response.on('close', () => {
      streams.delete(stream);
    });
    if (options.retryMs !== undefined) response.write(`retry: ${options.retryMs}\n\n`);
    write(stream, 'ready', '{}');
    notify();
  };

  const acceptDelivery = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    if (bodyAs === 'object') {
      try {
        body = JSON.parse(text);
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid json body"}');
        return;
      }
      if (body === null || typeof body !== 'object') {
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":"body must be object"}');
        return;
      }
    }
    delivered++;
    broadcast(
      undefined,
      JSON.stringify({
        ...request.headers,
        body,
        query: Object.fromEntries(url.searchParams),
        timestamp: Date.now(),
      }),
    );
    response.writeHead(200).end();
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== `/${channel}`) {
      response.writeHead(404).end();
      return;
    }
    if (request.method === 'GET' && request.headers.accept === 'text/event-stream') {
      openStream(request, response);
      return;
    }
    if (request.method === 'POST') {
      acceptDelivery(request, response, url).catch(() => response.destroy());
      return;
    }
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>channel</title>');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const timer = setInterval(() => broadcast('ping', '{}'), pingIntervalMs);
  timer.unref();

  return {
    origin,
    url: `${origin}/${channel}`,
    publish(message, event) {
      broadcast(event, JSON.stringify(message));
    },
    sendRaw(text) {
      for (const stream of streams) stream.response.write(text);
    },
    ping() {
      broadcast('ping', '{}');
    },
    dropClients() {
      for (const stream of streams) stream.response.end();
      streams.clear();
    },
    clients: () => streams.size,
    deliveries: () => delivered,
    waitForClients(count = 1) {
      if (streams.size >= count) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const check = () => {
          if (streams.size < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async close() {
      clearInterval(timer);
      for (const stream of streams) stream.response.end();
      streams.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
