// The local stack's delivery inspector: a small node:http server on 127.0.0.1 serving the page in ./public (no
// CDN, works offline) and a JSON API over the delivery log (lib/aws DeliveryLog), with server-sent events for
// new and updated records, replay of a logged delivery and signed catalogue samples. It never sends a secret or a
// signature value: the log keeps headers masked, and every header is masked once more on the way out.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DeliveryDetails,
  type DeliveryListQuery,
  type DeliveryLog,
  type DeliveryRecord,
  maskHeaders,
} from '../../lib/aws/index.js';
import type { Forge } from '../../lib/webhooks/index.js';
import { replayHeaders } from '../../lib/webhooks/index.js';
import { exampleDeliveries, forgeSample, signForgeDelivery } from '../sample-deliveries.js';
import { type InspectorRule, loadRules, matchedRules } from './rules.js';

/** A webhook source the inspector posts replays and samples to (the local stack's `sources`). */
export interface InspectorSource {
  readonly name: string;
  readonly forge: Forge;
  readonly url: string;
  /** Signs samples and replays; never leaves this process. */
  readonly secret: string;
}

/** Options of {@link startInspector}. */
export interface InspectorOptions {
  log: DeliveryLog;
  sources: readonly InspectorSource[];
  /** The subscriber rules records are matched against. Default: serverless.yml's ({@link loadRules}). */
  rules?: readonly InspectorRule[] | undefined;
  /** Port on 127.0.0.1. Default a free one. */
  port?: number | undefined;
  /** How often the log is read for the live view while a page is connected, in ms. Default 300. */
  pollMs?: number | undefined;
}

/** A running inspector. */
export interface Inspector {
  /** The page (`http://127.0.0.1:<port>/`). */
  readonly url: string;
  stop(): Promise<void>;
}

const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
/** The live view reads this far back: the poll stays one day's shards, whatever the TTL. */
const LIVE_WINDOW_MS = 15 * 60 * 1000;
const MAX_REQUEST_BYTES = 16 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The record as the page sees it: the rules it matched, headers masked again, the body as text or base64. */
function recordView(record: DeliveryRecord, rules: readonly InspectorRule[]): Record<string, unknown> {
  const { body, headers, ...rest } = record;
  const view: Record<string, unknown> = { ...rest, rules: matchedRules(rules, record) };
  if (headers !== undefined) view.headers = maskHeaders(headers);
  if (body !== undefined) {
    const bytes = Buffer.from(body);
    const text = bytes.toString('utf8');
    const exact = Buffer.from(text, 'utf8').equals(bytes);
    view.body = exact ? text : bytes.toString('base64');
    view.bodyEncoding = exact ? 'utf8' : 'base64';
  }
  return view;
}

function detailsView(details: DeliveryDetails, rules: readonly InspectorRule[]): Record<string, unknown> {
  return {
    deliveryId: details.deliveryId,
    source: details.source ?? 'default',
    subscribers: details.subscribers,
    records: details.records.map((record) => recordView(record, rules)),
  };
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', '"content-type" must be application/json');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) throw new HttpError(413, 'payload_too_large', 'request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // answered below
  }
  throw new HttpError(400, 'invalid_json', 'request body must be a json object');
}

/** Posts a delivery to the ingest and hands back its answer. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array | string,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
  } catch {
    throw new HttpError(502, 'ingest_unreachable', `the ingest at ${url} did not answer`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** Every catalogue name with a sample payload (`issues.opened`, `push`), sorted. */
function catalogueNames(): string[] {
  const names = exampleDeliveries().map((example) =>
    example.action === undefined ? example.name : `${example.name}.${example.action}`,
  );
  return [...new Set(names)].sort();
}

/**
 * Starts the inspector on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * ```ts
 * const inspector = await startInspector({ log, sources: stack.sources });
 * console.log(inspector.url);
 * ```
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const { log } = options;
  const rules = options.rules ?? loadRules();
  const pollMs = options.pollMs ?? 300;
  const sources = new Map(options.sources.map((source) => [source.name, source]));
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(PUBLIC_DIR)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type !== undefined) files.set(`/${name}`, { body: readFileSync(join(PUBLIC_DIR, name)), type });
  }
  const index = files.get('/index.html');
  if (index !== undefined) files.set('/', index);
  let catalogue: string[] | undefined;

  const clients = new Set<ServerResponse>();
  /** What each live record looked like when last pushed, by record id. */
  const seen = new Map<string, string>();
  let pollTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let polling = false;
  let stopped = false;

  const broadcast = (event: string, data: unknown) => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of clients) client.write(frame);
  };

  // Polling: the log is DynamoDB (no change feed offline), so while a page is connected the server reads the
  // recent window every `pollMs` (one Query per index shard and one BatchGetItem for the subscribers) and pushes
  // only the records that are new or changed; no page means no reads.
  const poll = async () => {
    polling = true;
    try {
      const { records } = await log.list({
        since: Date.now() - LIVE_WINDOW_MS,
        limit: 200,
        subscribers: true,
      });
      for (const record of records.reverse()) {
        const view = recordView(record, rules);
        const key = JSON.stringify(view);
        if (seen.get(record.recordId) === key) continue;
        seen.set(record.recordId, key);
        broadcast('record', view);
      }
    } catch {
      // DynamoDB Local busy or stopping: the next poll tries again.
    } finally {
      polling = false;
      if (!stopped && clients.size > 0) pollTimer = setTimeout(() => void poll(), pollMs);
    }
  };

  const startPolling = () => {
    if (pollTimer === undefined && !polling) pollTimer = setTimeout(() => void poll(), 0);
    heartbeat ??= setInterval(() => {
      for (const client of clients) client.write(': keep-alive\n\n');
    }, 15_000);
  };
  const stopPolling = () => {
    clearTimeout(pollTimer);
    pollTimer = undefined;
    clearInterval(heartbeat);
    heartbeat = undefined;
  };

  const sourceOf = (name: unknown): InspectorSource => {
    const source = sources.get(typeof name === 'string' && name !== '' ? name : 'default');
    if (source === undefined) throw new HttpError(400, 'unknown_source', `unknown "source" ${String(name)}`);
    return source;
  };

  const replay = async (deliveryId: string, sourceName: string | null, freshId: boolean) => {
    const source = sourceOf(sourceName);
    const details = await log.get(deliveryId, { source: source.name });
    if (details === undefined)
      throw new HttpError(404, 'not_found', `no delivery "${deliveryId}" in the log`);
    const original = details.records.find((record) => record.body !== undefined);
    if (original?.body === undefined) {
      throw new HttpError(409, 'payload_not_stored', 'the log holds no payload of this delivery');
    }
    // The log keeps the exact body and headers but never a signature value: the masked signature headers are
    // signed again with the source's secret, as the forge would for a redelivery; the signature covers the body
    // only, so a fresh delivery id needs nothing else changed.
    const id = freshId ? randomUUID() : deliveryId;
    const headers = replayHeaders(original.headers ?? {}, original.body, {
      secret: source.secret,
      forge: source.forge,
      id,
      signMissing: false,
    });
    const answer = await post(source.url, headers, original.body);
    return { deliveryId: id, source: source.name, ...answer };
  };

  const sample = async (body: Record<string, unknown>) => {
    const source = sourceOf(body.source);
    if (typeof body.event !== 'string' || body.event === '') {
      throw new HttpError(400, 'invalid_request', '"event" is required');
    }
    let found: ReturnType<typeof forgeSample>;
    try {
      found = forgeSample(source.forge, body.event);
    } catch {
      throw new HttpError(
        400,
        'unknown_event',
        `no ${source.forge} sample for "${body.event.slice(0, 100)}"`,
      );
    }
    const delivery = signForgeDelivery(source.secret, source.forge, found.nativeName, found.payload);
    const answer = await post(source.url, delivery.headers, delivery.body);
    return { deliveryId: delivery.id, source: source.name, ...answer };
  };

  const route = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const method = request.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && files.has(path)) {
      const file = files.get(path) as { body: Buffer; type: string };
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': file.type,
        'content-length': file.body.length,
      });
      response.end(file.body);
      return;
    }
    if (method === 'GET' && path === '/api/deliveries') {
      const query: DeliveryListQuery = { subscribers: true };
      const params = url.searchParams;
      if (params.has('event')) query.event = params.get('event') ?? undefined;
      if (params.has('status')) query.status = params.get('status') as DeliveryListQuery['status'];
      if (params.has('verdict')) query.verdict = params.get('verdict') as DeliveryListQuery['verdict'];
      if (params.has('source')) query.source = params.get('source') ?? undefined;
      if (params.has('cursor')) query.cursor = params.get('cursor') ?? undefined;
      query.limit = params.has('limit') ? Number(params.get('limit')) : 50;
      let page: Awaited<ReturnType<DeliveryLog['list']>>;
      try {
        page = await log.list(query);
      } catch (error) {
        if (error instanceof TypeError) throw new HttpError(400, 'invalid_request', error.message);
        throw error;
      }
      sendJson(response, 200, {
        records: page.records.map((record) => recordView(record, rules)),
        ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
      });
      return;
    }
    if (method === 'GET' && path === '/api/events') {
      response.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': 'text/event-stream; charset=utf-8',
        connection: 'keep-alive',
      });
      response.write('retry: 1000\n\n');
      clients.add(response);
      startPolling();
      request.on('close', () => {
        clients.delete(response);
        if (clients.size === 0) stopPolling();
      });
      return;
    }
    if (method === 'GET' && path === '/api/samples') {
      catalogue ??= catalogueNames();
      sendJson(response, 200, { events: catalogue, sources: [...sources.keys()] });
      return;
    }
    if (method === 'POST' && path === '/api/samples') {
      sendJson(response, 200, await sample(await readJson(request)));
      return;
    }
    const match = /^\/api\/deliveries\/([^/]+)(\/replay)?$/.exec(path);
    if (match !== null) {
      let id: string;
      try {
        id = decodeURIComponent(match[1] as string);
      } catch {
        throw new HttpError(400, 'invalid_request', 'malformed delivery id');
      }
      if (method === 'GET' && match[2] === undefined) {
        const source = sourceOf(url.searchParams.get('source'));
        let details: DeliveryDetails | undefined;
        try {
          details = await log.get(id, { source: source.name });
        } catch (error) {
          if (error instanceof TypeError) throw new HttpError(400, 'invalid_request', error.message);
          throw error;
        }
        if (details === undefined) throw new HttpError(404, 'not_found', `no delivery "${id}" in the log`);
        sendJson(response, 200, detailsView(details, rules));
        return;
      }
      if (method === 'POST' && match[2] !== undefined) {
        const body = await readJson(request);
        sendJson(response, 200, await replay(id, url.searchParams.get('source'), body.freshId === true));
        return;
      }
    }
    throw new HttpError(404, 'not_found', `no route ${method} ${path.slice(0, 200)}`);
  };

  const server = createServer((request, response) => {
    const host = request.headers.host ?? '';
    const origins = [`127.0.0.1:${port}`, `localhost:${port}`];
    // Bound to loopback, but a page elsewhere could still reach it through DNS rebinding (a foreign Host) or a
    // cross-site form post (a foreign Origin): both are refused.
    const origin = request.headers.origin;
    if (!origins.includes(host) || (origin !== undefined && !origins.some((o) => origin === `http://${o}`))) {
      sendJson(response, 403, { error: 'forbidden', message: 'the inspector answers only its own origin' });
      return;
    }
    const url = new URL(request.url ?? '/', `http://${host}`);
    route(request, response, url).catch((error: unknown) => {
      if (response.headersSent) {
        response.end();
        return;
      }
      if (error instanceof HttpError)
        sendJson(response, error.status, { error: error.code, message: error.message });
      else
        sendJson(response, 500, { error: 'internal_error', message: 'the delivery log could not be read' });
    });
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}/`,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopPolling();
      for (const client of clients) client.end();
      clients.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
