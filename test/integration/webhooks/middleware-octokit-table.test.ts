// docs/webhooks.md's table "With `forge: 'github'`, next to @octokit/webhooks", row by row: our middleware
// and @octokit/webhooks 14's (a dev dependency) each get the row's request through a real node:http server on
// 127.0.0.1, and must answer, and call the app's handlers, as the row says. The rows are parsed from the page,
// so that the page cannot drift from the code.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import {
  createNodeMiddleware as createOctokitMiddleware,
  Webhooks as OctokitWebhooks,
} from '@octokit/webhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sign, Webhooks } from '../../../lib/webhooks/index.js';
import { codeSpans, markdownTable } from '../../helpers/markdown-table.js';
import { registerSecret } from '../../helpers/secrets.js';

const SECRET = 'middleware-octokit-table-secret';
registerSecret(SECRET);
/** Low, so that the `pending` rows are quick; high enough that no other row meets it on a loaded machine. */
const TIMEOUT = 1_000;
const MAX_BODY_BYTES = 4_096;
const issues = JSON.stringify({ action: 'opened', issue: { number: 1 } });

interface Scenario {
  event?: string;
  body?: string;
  headers?: (body: string) => Record<string, string | undefined>;
  method?: 'GET';
  path?: string;
  /** `next`: mounted with a `next` that answers 204; `parsed`: a JSON body parser ran first. */
  mount?: 'next' | 'parsed';
  /** `throw`: the `issues` handler throws; `throw-status`: with `status: 404`; `block`: handlers wait. */
  handlers?: 'throw' | 'throw-status' | 'block';
  /** `upload`: the body comes after the answer; `abort`: the client leaves mid-body. */
  send?: 'upload' | 'abort';
}

const SCENARIOS: Record<string, Scenario> = {
  delivered: {},
  ping: { event: 'ping', body: JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 }) },
  'app-authorization': {
    event: 'github_app_authorization',
    body: JSON.stringify({ action: 'revoked', sender: { login: 'octocat' } }),
  },
  'sha1-only': {
    headers: (body) => ({
      'x-hub-signature-256': undefined,
      'x-hub-signature': sign(SECRET, body, { algorithm: 'sha1' }),
    }),
  },
  pending: { handlers: 'block' },
  'upload-pending': { send: 'upload' },
  'handler-failed': { handlers: 'throw' },
  'handler-failed-with-status': { handlers: 'throw-status' },
  'bad-signature': { headers: (body) => ({ 'x-hub-signature-256': sign('another-secret', body) }) },
  'missing-signature': { headers: () => ({ 'x-hub-signature-256': undefined }) },
  'missing-event': { headers: () => ({ 'x-github-event': undefined }) },
  'missing-delivery': { headers: () => ({ 'x-github-delivery': undefined }) },
  'form-encoded': { headers: () => ({ 'content-type': 'application/x-www-form-urlencoded' }) },
  'invalid-json': { body: 'not json' },
  'not-an-object': { body: '[1,2]' },
  'too-large': { body: JSON.stringify({ action: 'opened', padding: 'x'.repeat(MAX_BODY_BYTES) }) },
  'parsed-body': { mount: 'parsed' },
  'client-gone': { send: 'abort' },
  'get-on-path': { method: 'GET' },
  'get-on-path-next': { method: 'GET', mount: 'next' },
  'other-path': { path: '/elsewhere' },
  'other-path-next': { path: '/elsewhere', mount: 'next' },
};

interface Row {
  id: string;
  status: string;
  body: string;
  sees: string[];
  octokitStatus: string;
  octokitSees: string[];
}

const rows: Row[] = markdownTable(
  'docs/webhooks.md',
  "With `forge: 'github'`, next to @octokit/webhooks",
).map(([id = '', , status = '', body = '', sees = '', octokitStatus = '', octokitSees = '']) => ({
  id: codeSpans(id)[0] ?? id,
  status,
  body,
  sees: codeSpans(sees),
  octokitStatus,
  octokitSees: codeSpans(octokitSees),
}));

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

type Middleware = (request: IncomingMessage, response: ServerResponse, next?: () => void) => Promise<unknown>;

interface Running {
  port: number;
  seen: string[];
  nextCalled: () => boolean;
  arrived: () => number;
  settled: () => Promise<unknown>;
  release: () => void;
}

/** Starts one implementation for a row: its handlers for `names` record what they see. */
async function start(impl: 'ours' | 'octokit', scenario: Scenario, names: string[]): Promise<Running> {
  const seen: string[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler = (name: string) => async () => {
    seen.push(name);
    if (scenario.handlers === 'block') await gate;
    if (name !== 'issues') return;
    if (scenario.handlers === 'throw') throw new Error('handler broke');
    if (scenario.handlers === 'throw-status') throw Object.assign(new Error('Not Found'), { status: 404 });
  };
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  let middleware: Middleware;
  const plain = names.filter((name) => name !== '*' && !name.startsWith('error'));
  if (impl === 'ours') {
    const webhooks = new Webhooks({
      secret: SECRET,
      forge: 'github',
      path: '/webhooks',
      timeout: TIMEOUT,
      maxBodyBytes: MAX_BODY_BYTES,
      log: silent,
    });
    for (const name of plain) webhooks.on(name as 'issues', handler(name));
    // on('*') and on('error') (not their aliases), so that each row checks the middleware alone
    webhooks.on('*', handler('*'));
    webhooks.on('error', (error) => void seen.push(`error:${error.code}`));
    middleware = webhooks.middleware;
  } else {
    const webhooks = new OctokitWebhooks({ secret: SECRET, log: silent });
    for (const name of plain) webhooks.on(name as 'issues', handler(name));
    webhooks.onAny(handler('*'));
    webhooks.onError(() => void seen.push('error'));
    middleware = createOctokitMiddleware(webhooks, { path: '/webhooks', timeout: TIMEOUT, log: silent });
  }
  let nextCalled = false;
  let arrived = 0;
  let done: Promise<unknown> = Promise.resolve();
  const server = createServer((request, response) => {
    arrived += 1;
    done = (async () => {
      if (scenario.mount === 'parsed') {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        (request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      }
      const next =
        scenario.mount === 'next'
          ? () => {
              nextCalled = true;
              response.statusCode = 204;
              response.end();
            }
          : undefined;
      await middleware(request, response, next);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    release();
    server.closeAllConnections();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    nextCalled: () => nextCalled,
    arrived: () => arrived,
    settled: () => done,
    release,
  };
}

function requestHeaders(scenario: Scenario, body: string): Record<string, string> {
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-github-event': scenario.event ?? 'issues',
    'x-github-delivery': 'delivery-1',
    'x-hub-signature-256': sign(SECRET, body),
    ...scenario.headers?.(body),
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<
    string,
    string
  >;
}

/** Sends the row's request; `undefined` when the client left before any answer. */
async function exchange(
  running: Running,
  scenario: Scenario,
): Promise<{ status: number; text: string } | undefined> {
  const body = scenario.body ?? issues;
  const headers = requestHeaders(scenario, body);
  const path = scenario.path ?? '/webhooks';
  if (scenario.send === undefined) {
    const response = await fetch(`http://127.0.0.1:${running.port}${path}`, {
      method: scenario.method ?? 'POST',
      headers: scenario.method === 'GET' ? {} : headers,
      ...(scenario.method === 'GET' ? {} : { body }),
    });
    const result = { status: response.status, text: await response.text() };
    running.release();
    await running.settled();
    return result;
  }
  const socket = connect(running.port, '127.0.0.1');
  closers.push(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n\r\n')) resolve();
    });
  });
  const head = Object.entries(headers)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\r\n');
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${head}\r\n\r\n${body.slice(0, 10)}`,
  );
  if (scenario.send === 'abort') {
    await vi.waitFor(() => expect(running.arrived()).toBe(1), { timeout: 10_000 });
    socket.destroy();
    return undefined;
  }
  await answered; // before the rest of the body: the clock counts from the request's arrival
  socket.write(body.slice(10));
  const status = Number(received.slice(9, 12));
  return { status, text: received.slice(received.indexOf('\r\n\r\n') + 4) };
}

async function check(impl: 'ours' | 'octokit', row: Row) {
  const scenario = SCENARIOS[row.id] as Scenario;
  const status = impl === 'ours' ? row.status : row.octokitStatus;
  const sees = impl === 'ours' ? row.sees : row.octokitSees;
  const running = await start(impl, scenario, sees);
  const result = await exchange(running, scenario);
  if (status === '`next()`') {
    expect(result?.status).toBe(204);
    expect(running.nextCalled()).toBe(true);
  } else if (/^\d{3}$/.test(status)) {
    expect(result?.status).toBe(Number(status));
    expect(running.nextCalled()).toBe(false);
  } else {
    expect(status).toBe('no answer');
    expect(result).toBeUndefined();
  }
  if (impl === 'ours' && result !== undefined && /^\d{3}$/.test(status)) {
    const [expected] = codeSpans(row.body);
    if (expected?.startsWith('{')) expect(result.text).toBe(expected);
    else expect((JSON.parse(result.text) as { error: { code: string } }).error.code).toBe(expected);
  }
  await vi.waitFor(() => expect([...running.seen].sort()).toEqual([...sees].sort()), { timeout: 10_000 });
}

describe("docs/webhooks.md: createNodeMiddleware with forge: 'github', next to @octokit/webhooks 14", () => {
  it('has one row per scenario of this test, and a scenario for every row', () => {
    expect(rows.map((row) => row.id).sort()).toEqual(Object.keys(SCENARIOS).sort());
  });

  it.each(rows.map((row) => [row.id, row] as const))(
    '%s: ours as the row says',
    { timeout: 20_000 },
    async (_id, row) => {
      await check('ours', row);
    },
  );

  it.each(rows.filter((row) => row.octokitStatus !== 'no answer').map((row) => [row.id, row] as const))(
    '%s: octokit 14 as the row says',
    { timeout: 20_000 },
    async (_id, row) => {
      await check('octokit', row);
    },
  );
});
