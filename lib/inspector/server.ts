// The delivery inspector: a small node:http server on 127.0.0.1 serving the page in ./public and a JSON API over
// a delivery log (lib/aws DeliveryLog), with server-sent events for new and updated records (live.ts). What a
// replay does and whether samples can be sent is the caller's: the local stack posts to its own ingest, the CLI
// re-publishes on a deployed stage (`forgebridge inspect --stage`). It never sends a secret or a signature
// value: the log keeps headers masked, and every header is masked once more on the way out. Two hooks' deliveries
// of one event share a delivery id (GitHub's GUID): a replay is of the hook of the record the page picked.
// Each run has a secret of its own (./auth.ts): a random token in the URL it hands out, which the first page load
// trades for a cookie; every request without it is refused, so no other local process reads the log or replays.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DEFAULT_SOURCE } from '../aws/core/index.js';
import {
  type DeliveryDetails,
  type DeliveryListQuery,
  type DeliveryLog,
  detailsOfHook,
  hooksOf,
} from '../aws/index.js';
import { createInspectorAuth } from './auth.js';
import { type BulkReplayAction, BulkReplays } from './bulk-replay.js';
import { loadPageFiles, serveFile } from './files.js';
import { HttpError, readJson, sendJson } from './http.js';
import { LiveFeed } from './live.js';
import { type InspectorRule, loadRules } from './rules.js';
import { detailsView, recordView } from './views.js';

/** What a replay or a sample did, as the page shows it. */
export type ActionAnswer = Record<string, unknown> & { deliveryId: string };

/** What the inspector can do besides reading the log. */
export interface InspectorActions {
  /** Where the log is, for the page's header (`local stack`, `stage "prod"`). */
  readonly label: string;
  /** Whether {@link InspectorActions.replay} can send this delivery again. */
  canReplay(details: DeliveryDetails): boolean;
  /**
   * Sends a logged delivery again; throws an {@link HttpError} for a 4xx. `details` is one hook's delivery (the
   * hook of the record the page picked): its records and subscribers only, when the id came from two hooks.
   */
  replay(details: DeliveryDetails, freshId: boolean): Promise<ActionAnswer>;
  /** Signed catalogue samples, when the inspector may send them (the local stack only). */
  readonly samples?:
    | {
        list(): { events: string[]; sources: string[] };
        send(body: Record<string, unknown>): Promise<ActionAnswer>;
      }
    | undefined;
  /**
   * Replay to one subscriber: the selected deliveries sent to its function alone (the local stack only, through
   * serverless-offline's Lambda API). Without it the page counts a selection and shows the CLI command.
   */
  readonly bulkReplay?: BulkReplayAction | undefined;
}

/** Options of {@link serveInspector}. */
export interface ServeInspectorOptions {
  log: DeliveryLog;
  actions: InspectorActions;
  /** The subscriber rules records are matched against. Default: serverless.yml's ({@link loadRules}). */
  rules?: readonly InspectorRule[] | undefined;
  /** Port on 127.0.0.1. Default a free one. */
  port?: number | undefined;
  /** How often the log is read for the live view while a page is connected, in ms. Default 300. */
  pollMs?: number | undefined;
}

/** A running inspector. */
export interface Inspector {
  /**
   * The page with this run's token (`http://127.0.0.1:<port>/?token=<token>`): the one URL to print. Opening it
   * sets the session cookie and redirects to the page without the token; a client other than a browser sends the
   * token as `Authorization: Bearer <token>`.
   */
  readonly url: string;
  stop(): Promise<void>;
}

/** The list query of `GET /api/deliveries`. */
function listQuery(params: URLSearchParams): DeliveryListQuery {
  const query: DeliveryListQuery = { subscribers: true };
  if (params.has('event')) query.event = params.get('event') ?? undefined;
  if (params.has('status')) query.status = params.get('status') as DeliveryListQuery['status'];
  if (params.has('verdict')) query.verdict = params.get('verdict') as DeliveryListQuery['verdict'];
  if (params.has('source')) query.source = params.get('source') ?? undefined;
  if (params.has('cursor')) query.cursor = params.get('cursor') ?? undefined;
  query.limit = params.has('limit') ? Number(params.get('limit')) : 50;
  return query;
}

/** A log read whose bad input (`TypeError`) is a 400. */
async function read<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TypeError) throw new HttpError(400, 'invalid_request', error.message);
    throw error;
  }
}

function sourceName(value: string | null): string {
  return value === null || value === '' ? DEFAULT_SOURCE : value;
}

/**
 * The delivery a replay sends again: the hook's the page picked (`hook`, the record's), or the delivery's only
 * hook's. Two hooks' deliveries of one event are two deliveries: without a hook, such an id is refused (409).
 */
function ofHook(details: DeliveryDetails, hook: unknown): DeliveryDetails {
  const hooks = hooksOf(details);
  if (hook === undefined || hook === null) {
    if (hooks.length <= 1) return details;
    throw new HttpError(
      409,
      'hook_required',
      `delivery ${details.deliveryId} came from ${hooks.length} hooks (${hooks.join(', ')}): pick the record of one`,
    );
  }
  if (typeof hook !== 'string' || hook === '') {
    throw new HttpError(400, 'invalid_request', '"hook" must be a non-empty string');
  }
  const picked = detailsOfHook(details, hook);
  if (picked === undefined) {
    throw new HttpError(
      404,
      'not_found',
      `delivery ${details.deliveryId} has no record from hook ${hook.slice(0, 100)}${hooks.length > 0 ? ` (hooks: ${hooks.join(', ')})` : ''}`,
    );
  }
  return picked;
}

/**
 * Starts the inspector on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * ```ts
 * const inspector = await serveInspector({ log, actions });
 * console.log(inspector.url);
 * ```
 */
export async function serveInspector(options: ServeInspectorOptions): Promise<Inspector> {
  const { log, actions } = options;
  const rules = options.rules ?? loadRules();
  const files = loadPageFiles();
  const live = new LiveFeed(log, rules, options.pollMs ?? 300);
  const auth = createInspectorAuth();
  const bulk = new BulkReplays(log, actions.bulkReplay);

  const delivery = async (id: string, source: string): Promise<DeliveryDetails> => {
    const details = await read(() => log.get(id, { source }));
    if (details === undefined) throw new HttpError(404, 'not_found', `no delivery "${id}" in the log`);
    return details;
  };

  const route = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const method = request.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && serveFile(files, path, response)) return;
    if (method === 'GET' && path === '/api/deliveries') {
      const page = await read(() => log.list(listQuery(url.searchParams)));
      sendJson(response, 200, {
        records: page.records.map((record) => recordView(record, rules)),
        ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
      });
      return;
    }
    if (method === 'GET' && path === '/api/events') {
      live.connect(request, response);
      return;
    }
    if (method === 'GET' && path === '/api/samples') {
      sendJson(response, 200, {
        target: actions.label,
        ...(actions.samples?.list() ?? { events: [], sources: [] }),
      });
      return;
    }
    if (method === 'POST' && path === '/api/samples') {
      if (actions.samples === undefined) {
        throw new HttpError(404, 'not_found', `no samples are sent from here (${actions.label})`);
      }
      sendJson(response, 200, await actions.samples.send(await readJson(request)));
      return;
    }
    if (path === '/api/bulk-replay' || path.startsWith('/api/bulk-replay/')) {
      await bulkRoute(method, path.slice('/api/bulk-replay'.length), request, response);
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
      const source = sourceName(url.searchParams.get('source'));
      if (method === 'GET' && match[2] === undefined) {
        const details = await delivery(id, source);
        sendJson(
          response,
          200,
          detailsView(details, rules, (of) => actions.canReplay(of)),
        );
        return;
      }
      if (method === 'POST' && match[2] !== undefined) {
        const body = await readJson(request);
        const details = ofHook(await delivery(id, source), body.hook);
        sendJson(response, 200, await actions.replay(details, body.freshId === true));
        return;
      }
    }
    throw new HttpError(404, 'not_found', `no route ${method} ${path.slice(0, 200)}`);
  };

  // Replay to one subscriber: `GET` what the page offers (and the latest run), `POST /preview` the count and a
  // sample, `POST` starts a run (202, one at a time: 409 while one runs), `GET /<id>` its progress.
  const bulkRoute = async (
    method: string,
    rest: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> => {
    if (method === 'GET' && rest === '') {
      const latest = bulk.latest();
      sendJson(response, 200, {
        available: bulk.available,
        target: actions.label,
        ...(latest === undefined ? {} : { run: latest }),
      });
      return;
    }
    if (method === 'POST' && rest === '/preview') {
      sendJson(response, 200, await bulk.preview(await readJson(request)));
      return;
    }
    if (method === 'POST' && rest === '') {
      sendJson(response, 202, await bulk.start(await readJson(request)));
      return;
    }
    if (method === 'GET' && /^\/[\w-]{1,64}$/.test(rest)) {
      const run = bulk.get(rest.slice(1));
      if (run === undefined) throw new HttpError(404, 'not_found', 'no such replay run');
      sendJson(response, 200, run);
      return;
    }
    throw new HttpError(404, 'not_found', `no route ${method} /api/bulk-replay${rest.slice(0, 100)}`);
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
    if (!auth.admit(request, response, url, port)) return;
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

  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}/?token=${auth.token}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      live.close();
      await bulk.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
