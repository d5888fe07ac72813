// The inspector's server on its own: DynamoDB Local holding the delivery log (records written with
// DeliveryLog.record, as the ingest writes them), a node:http receiver standing in the ingest's URL for replays
// and samples, and the inspector on 127.0.0.1. Its API, its live stream, replay (same and fresh id), samples, the
// page's files, and what it refuses; no response ever holds the secret or a signature value. Two hooks' records of
// one GitHub event (one GUID): their API and the page in Chromium (/usr/bin/chromium through playwright-core), where
// a replay is of the record picked; the screenshot goes to .tmp/inspector-hooks.png.
import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { type Inspector, startInspector } from '../../../local-stack/inspector/server.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { launchChromium, screenshotPath } from '../../helpers/browser.js';
import { inspectorFetch, inspectorToken } from '../../helpers/inspector.js';

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON answers, read field by field in the assertions
type Json = any;

const ddb = useDynamoDbLocal();
const SECRET = `inspector-secret-${randomUUID()}`;
const hmac = (body: string | Buffer) => createHmac('sha256', SECRET).update(body).digest('hex');

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl: string;
let log: DeliveryLog;
let inspector: Inspector;

function entry(overrides: Partial<DeliveryLogEntry> = {}): DeliveryLogEntry {
  const deliveryId = overrides.deliveryId ?? randomUUID();
  const body = '{"action":"opened","issue":{"number":7,"title":"caf\\u00e9 ☕"}}';
  return {
    deliveryId,
    event: 'issues',
    action: 'opened',
    forge: 'generic',
    source: 'default',
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      host: '127.0.0.1:3000',
      'user-agent': 'GitHub-Hookshot/abc',
      'x-forge-event': 'issues',
      'x-forge-delivery': deliveryId,
      'x-hub-signature-256': `sha256=${hmac(body)}`,
    },
    body,
    ...overrides,
  };
}

async function api(
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Json; text: string }> {
  const response = await inspectorFetch(inspector.url, path, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

const postJson = (path: string, value: unknown) =>
  api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });

beforeAll(async () => {
  const tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
  log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status":"duplicate"}');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/webhooks`;
  inspector = await startInspector({
    log,
    sources: [{ name: 'default', forge: 'generic', url: receiverUrl, secret: SECRET }],
    pollMs: 100,
  });
});

afterAll(async () => {
  await inspector?.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

describe('inspector server', () => {
  it('listens on 127.0.0.1 and serves the page and its files with a strict content security policy', async () => {
    expect(new URL(inspector.url).hostname).toBe('127.0.0.1');
    const page = await inspectorFetch(inspector.url, '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('/app.js');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await inspectorFetch(inspector.url, '/app.js');
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await inspectorFetch(inspector.url, '/nothing.js')).status).toBe(404);
  });

  it('lists records newest first with the rules they matched and their subscribers', async () => {
    const first = entry({ receivedAt: Date.now() - 2_000 });
    const push = entry({ event: 'push', action: undefined, receivedAt: Date.now() - 1_000 });
    const rejected = entry({
      verdict: 'bad_signature',
      httpStatus: 401,
      outcome: 'rejected',
      reason: 'wrong secret',
    });
    for (const record of [first, push, rejected]) expect((await log.record(record)).ok).toBe(true);
    await log.recordSubscriber(first.deliveryId as string, {
      subscriber: 'onIssues',
      outcome: 'ok',
      durationMs: 12,
    });

    const { status, body } = await api('/api/deliveries?limit=10');
    expect(status).toBe(200);
    const ids = body.records.map((r: { deliveryId: string }) => r.deliveryId);
    expect(ids.slice(0, 3)).toEqual([rejected.deliveryId, push.deliveryId, first.deliveryId]);
    const byId = new Map(body.records.map((r: { deliveryId: string }) => [r.deliveryId, r]));
    expect((byId.get(first.deliveryId) as { rules: string[] }).rules).toEqual([
      'onIssuesOpened',
      'onIssues',
      'onIssuesPrefix',
      'onEverything',
    ]);
    expect((byId.get(push.deliveryId) as { rules: string[] }).rules).toEqual(['onPush', 'onEverything']);
    expect((byId.get(rejected.deliveryId) as { rules: string[] }).rules).toEqual([]);
    expect((byId.get(first.deliveryId) as { subscribers: object }).subscribers).toMatchObject({
      onIssues: { outcome: 'ok', durationMs: 12 },
    });
    expect((await api('/api/deliveries?status=nonsense')).status).toBe(400);
  });

  it('shows one delivery with masked headers and its exact body, never the signature value', async () => {
    const record = entry();
    await log.record(record);
    const { status, body, text } = await api(`/api/deliveries/${record.deliveryId}`);
    expect(status).toBe(200);
    const [latest] = body.records;
    expect(latest.headers['x-hub-signature-256']).toBe('sha256=[masked]');
    expect(latest.body).toBe(record.body);
    expect(latest.bodyEncoding).toBe('utf8');
    expect(text).not.toContain(hmac(record.body as string));
    expect(text).not.toContain(SECRET);
    expect((await api(`/api/deliveries/${randomUUID()}`)).status).toBe(404);
  });

  it('pushes a new record and a subscriber update over server-sent events', async () => {
    const controller = new AbortController();
    const response = await inspectorFetch(inspector.url, '/api/events', { signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const next = async (check: (record: Json) => boolean): Promise<Json> => {
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const frames = buffer.split('\n\n');
        buffer = frames.pop() ?? '';
        for (const frame of frames) {
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (/^event: record$/m.test(frame) && data !== undefined && check(JSON.parse(data)))
            return JSON.parse(data);
        }
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
      }
      throw new Error('no matching event');
    };
    try {
      const record = entry();
      const sent = Date.now();
      await log.record(record);
      const pushed = await next((r) => r.deliveryId === record.deliveryId);
      expect(Date.now() - sent).toBeLessThan(1_000);
      expect(pushed.rules).toContain('onIssuesOpened');
      expect(pushed.headers).toBeUndefined();
      await log.recordSubscriber(record.deliveryId as string, {
        subscriber: 'onPush',
        outcome: 'error',
        durationMs: 3,
        error: { name: 'TypeError', message: 'boom' },
      });
      const updated = await next(
        (r) => r.deliveryId === record.deliveryId && r.subscribers?.onPush !== undefined,
      );
      expect(updated.subscribers.onPush).toMatchObject({ outcome: 'error', error: { name: 'TypeError' } });
    } finally {
      controller.abort();
    }
  });

  it('replays the exact body and headers, signed again, with the same delivery id or a fresh one', async () => {
    const record = entry();
    await log.record(record);
    received.length = 0;
    const same = await postJson(`/api/deliveries/${record.deliveryId}/replay`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual({
      deliveryId: record.deliveryId,
      source: 'default',
      status: 200,
      body: { status: 'duplicate' },
    });
    const fresh = await postJson(`/api/deliveries/${record.deliveryId}/replay`, { freshId: true });
    expect(fresh.body.deliveryId).not.toBe(record.deliveryId);
    expect(received).toHaveLength(2);
    const [first, second] = received as [Received, Received];
    for (const copy of [first, second]) {
      expect(copy.body.toString('utf8')).toBe(record.body);
      expect(copy.headers['x-hub-signature-256']).toBe(`sha256=${hmac(copy.body)}`);
      expect(copy.headers['user-agent']).toBe('GitHub-Hookshot/abc');
      expect(copy.headers['x-forge-event']).toBe('issues');
      expect(copy.headers.host).not.toBe('127.0.0.1:3000');
    }
    expect(first.headers['x-forge-delivery']).toBe(record.deliveryId);
    expect(second.headers['x-forge-delivery']).toBe(fresh.body.deliveryId);
    expect(JSON.stringify(same.body) + JSON.stringify(fresh.body)).not.toContain(SECRET);
  });

  it('refuses a replay without a stored payload, and of an unknown delivery', async () => {
    const record = entry({ body: undefined, bodyBytes: 1234 });
    await log.record(record);
    expect(await postJson(`/api/deliveries/${record.deliveryId}/replay`, {})).toMatchObject({
      status: 409,
      body: { error: 'payload_not_stored' },
    });
    expect((await postJson(`/api/deliveries/${randomUUID()}/replay`, {})).status).toBe(404);
  });

  it('signs and posts a catalogue sample, and lists the catalogue', async () => {
    const catalogue = await api('/api/samples');
    expect(catalogue.body.events).toContain('issues.opened');
    expect(catalogue.body.sources).toEqual(['default']);
    received.length = 0;
    const sent = await postJson('/api/samples', { event: 'issues.opened' });
    expect(sent.status).toBe(200);
    expect(received).toHaveLength(1);
    const [copy] = received as [Received];
    expect(JSON.parse(copy.body.toString('utf8')).action).toBe('opened');
    expect(copy.headers['x-forge-event']).toBe('issues');
    expect(copy.headers['x-forge-delivery']).toBe(sent.body.deliveryId);
    expect(copy.headers['x-hub-signature-256']).toBe(`sha256=${hmac(copy.body)}`);
    expect(sent.text).not.toContain(SECRET);
    expect(await postJson('/api/samples', { event: 'no_such.event' })).toMatchObject({
      status: 400,
      body: { error: 'unknown_event' },
    });
    expect(await postJson('/api/samples', { event: 'push', source: 'nope' })).toMatchObject({
      status: 400,
      body: { error: 'unknown_source' },
    });
  });

  it('refuses a foreign host or origin, a body that is not json, and an unknown route', async () => {
    const port = new URL(inspector.url).port;
    // fetch sets Host from the URL: a rebinding name is what a browser would send.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      request(
        { host: '127.0.0.1', port, path: '/api/deliveries', headers: { host: `evil.example:${port}` } },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
    const crossSite = await api('/api/samples', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: '{"event":"push"}',
    });
    expect(crossSite.status).toBe(403);
    const form = await api('/api/samples', { method: 'POST', body: 'event=push' });
    expect(form.status).toBe(415);
    const broken = await api('/api/samples', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(broken).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    expect((await api('/api/nothing')).status).toBe(404);
    expect((await api('/api/samples', { method: 'DELETE' })).status).toBe(404);
  });
});

describe("the inspector's token: nothing without the one its URL carries", () => {
  const origin = () => new URL('/', inspector.url).href;
  const cookie = () => `forgebridge_inspector_${new URL(inspector.url).port}`;
  const raw = (path: string, init: RequestInit = {}) =>
    fetch(new URL(path, origin()), { redirect: 'manual', ...init });
  const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });
  const refused = async (response: Response) => {
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: 'unauthorized' });
    expect(text.length).toBeLessThan(200);
    return text;
  };

  it('is fresh for each start: 256 random bits, base64url, in the printed URL only', async () => {
    const token = inspectorToken(inspector.url);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(inspector.url).toBe(`${origin()}?token=${token}`);
    const other = await startInspector({ log, sources: [], rules: [] });
    try {
      expect(inspectorToken(other.url)).not.toBe(token);
      // One run's token opens nothing of another's.
      const port = new URL(other.url).port;
      await refused(await raw(`http://127.0.0.1:${port}/api/deliveries`, bearer(token)));
      await refused(await raw(`http://127.0.0.1:${port}/?token=${token}`));
    } finally {
      await other.stop();
    }
  });

  it('refuses the list, a delivery, the event stream, replays, samples and the page without it: 401, no data', async () => {
    const record = entry();
    await log.record(record);
    received.length = 0;
    const json = { 'content-type': 'application/json' };
    const answers = [
      await raw('/api/deliveries?limit=10'),
      await raw(`/api/deliveries/${record.deliveryId}`),
      await raw('/api/events'),
      await raw(`/api/deliveries/${record.deliveryId}/replay`, { method: 'POST', headers: json, body: '{}' }),
      await raw('/api/samples'),
      await raw('/api/samples', { method: 'POST', headers: json, body: '{"event":"issues.opened"}' }),
      await raw('/'),
      await raw('/app.js'),
    ];
    for (const answer of answers) {
      const text = await refused(answer);
      expect(text).not.toContain(record.deliveryId);
      expect(text).not.toContain('opened');
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    }
    // Nothing was replayed or sent.
    expect(received).toHaveLength(0);
  });

  it('trades the token of the printed URL for an HttpOnly, SameSite=Strict cookie, and redirects to the page without it', async () => {
    const opened = await fetch(inspector.url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/');
    expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const set = opened.headers.get('set-cookie') ?? '';
    const token = inspectorToken(inspector.url);
    expect(set.split('; ').sort()).toEqual(
      [`${cookie()}=${token}`, 'HttpOnly', 'Path=/', 'SameSite=Strict'].sort(),
    );
    // Other parameters stay; a path stays on this origin.
    const deep = await raw(`/app.js?token=${token}&x=1`);
    expect([deep.status, deep.headers.get('location')]).toEqual([303, '/app.js?x=1']);
    // `/.//evil.example` is the path `//evil.example` once parsed: a Location of it would be another host.
    const { request } = await import('node:http');
    for (const path of [`/.//evil.example/?token=${token}`, `//evil.example/?token=${token}`]) {
      const location = await new Promise<[number, string | undefined]>((resolve, reject) => {
        request({ host: '127.0.0.1', port: new URL(inspector.url).port, path }, (r) => {
          r.resume();
          resolve([r.statusCode ?? 0, r.headers.location]);
        })
          .on('error', reject)
          .end();
      });
      expect(location).toEqual([303, '/']);
    }

    const withCookie = { headers: { cookie: `other=1; ${cookie()}=${token}` } };
    const page = await raw('/', withCookie);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/app.js');
    const list = await raw('/api/deliveries?limit=1', withCookie);
    expect(list.status).toBe(200);
    expect(((await list.json()) as Json).records).toHaveLength(1);
    const controller = new AbortController();
    try {
      const stream = await raw('/api/events', { ...withCookie, signal: controller.signal });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    } finally {
      controller.abort();
    }
  });

  it('refuses a wrong token, a wrong cookie, a wrong bearer, and the token on anything but a GET', async () => {
    const token = inspectorToken(inspector.url);
    // Same length, one bit off.
    const bytes = Buffer.from(token, 'base64url');
    bytes[0] = (bytes[0] as number) ^ 1;
    const wrong = bytes.toString('base64url');
    await refused(await raw(`/?token=${wrong}`));
    await refused(await raw('/?token='));
    await refused(await raw(`/?token=${token}x`));
    await refused(await raw(`/?token=${token}&token=${token}`));
    await refused(await raw('/api/deliveries', { headers: { cookie: `${cookie()}=${wrong}` } }));
    // The cookie of another port's inspector is not this one's.
    await refused(await raw('/api/deliveries', { headers: { cookie: `forgebridge_inspector_1=${token}` } }));
    await refused(await raw('/api/deliveries', bearer(wrong)));
    await refused(await raw('/api/deliveries', { headers: { authorization: `Basic ${token}` } }));
    await refused(await raw('/api/deliveries', { headers: { 'x-token': token } }));
    received.length = 0;
    await refused(
      await raw(`/api/samples?token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"event":"push"}',
      }),
    );
    expect(received).toHaveLength(0);
    expect((await raw('/api/deliveries?limit=1', bearer(token))).status).toBe(200);
  });

  it('still answers a foreign host 403 before it looks at the token', async () => {
    const { request } = await import('node:http');
    const port = new URL(inspector.url).port;
    const token = inspectorToken(inspector.url);
    const status = await new Promise<number>((resolve, reject) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/api/deliveries',
          headers: { host: `evil.example:${port}`, authorization: `Bearer ${token}` },
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
  });
});

describe('two hooks, one event: each record names its hook, and a replay is of the record picked', () => {
  // Two GitHub Apps on one URL: one event, one GUID, each App's own payload (installation) and X-GitHub-Hook-ID.
  const shared = randomUUID();
  const bodyOf = (installation: number) =>
    `{"action":"opened","issue":{"number":27},"installation":{"id":${installation}}}`;
  let github: Inspector;
  let browser: Browser;

  const githubEntry = (hook: string, installation: number, receivedAt: number): DeliveryLogEntry => {
    const body = bodyOf(installation);
    return entry({
      deliveryId: shared,
      forge: 'github',
      source: 'github',
      hook,
      receivedAt,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issues',
        'x-github-delivery': shared,
        'x-github-hook-id': hook,
        'x-hub-signature-256': `sha256=${hmac(body)}`,
      },
      body,
    });
  };
  const githubApi = async (path: string, init: RequestInit = {}) => {
    const response = await inspectorFetch(github.url, path, init);
    return { status: response.status, body: (await response.json()) as Json };
  };
  const replay = (value: unknown) =>
    githubApi(`/api/deliveries/${shared}/replay?source=github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(value),
    });

  beforeAll(async () => {
    const now = Date.now();
    for (const record of [githubEntry('1101', 501, now - 2_000), githubEntry('2202', 502, now - 1_000)]) {
      expect((await log.record(record)).ok).toBe(true);
    }
    await log.recordSubscriber(shared, {
      subscriber: 'forgebridge-local-onIssuesOpened',
      outcome: 'ok',
      durationMs: 9,
      source: 'github',
      hook: '1101',
    });
    await log.recordSubscriber(shared, {
      subscriber: 'forgebridge-local-auditTrail',
      outcome: 'error',
      durationMs: 4,
      error: { name: 'TypeError', message: 'second app' },
      source: 'github',
      hook: '2202',
    });
    github = await startInspector({
      log,
      sources: [{ name: 'github', forge: 'github', url: receiverUrl, secret: SECRET }],
      pollMs: 100,
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await github?.stop();
  });

  it('lists and shows each record with its hook, and replays only the hook asked for', async () => {
    const list = await githubApi('/api/deliveries?source=github&limit=10');
    const ofShared = list.body.records.filter((r: { deliveryId: string }) => r.deliveryId === shared);
    expect(ofShared.map((r: { hook: string }) => r.hook)).toEqual(['2202', '1101']);
    const { status, body } = await githubApi(`/api/deliveries/${shared}?source=github`);
    expect(status).toBe(200);
    expect(body.hooks).toEqual(['1101', '2202']);
    expect(body.records.map((r: Json) => [r.hook, r.replayable, Object.keys(r.subscribers)])).toEqual([
      ['2202', true, ['forgebridge-local-auditTrail']],
      ['1101', true, ['forgebridge-local-onIssuesOpened']],
    ]);

    received.length = 0;
    expect(await replay({})).toEqual({
      status: 409,
      body: {
        error: 'hook_required',
        message: `delivery ${shared} came from 2 hooks (1101, 2202): pick the record of one`,
      },
    });
    expect(await replay({ hook: '9999' })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await replay({ hook: 1101 })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(received).toHaveLength(0);
    const picked = await replay({ hook: '1101' });
    expect(picked).toMatchObject({
      status: 200,
      body: { deliveryId: shared, hook: '1101', source: 'github' },
    });
    expect(received).toHaveLength(1);
    const [copy] = received as [Received];
    expect(copy.headers['x-github-hook-id']).toBe('1101');
    expect(copy.headers['x-github-delivery']).toBe(shared);
    expect(copy.body.toString('utf8')).toBe(bodyOf(501));
    expect(copy.headers['x-hub-signature-256']).toBe(`sha256=${hmac(copy.body)}`);
  });

  it('shows Chromium nothing at the address without the token', async () => {
    const page = await browser.newPage();
    try {
      const answer = await page.goto(new URL('/', github.url).href);
      expect(answer?.status()).toBe(401);
      expect(await page.content()).not.toContain('/app.js');
      expect(await page.locator('#live').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("shows the hook column and the picked record's hook in Chromium, and replays that record", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    try {
      const row = (hook: string) => page.locator(`tr[data-delivery-id="${shared}"][data-hook="${hook}"]`);
      await page.goto(github.url);
      // The printed URL's token became an HttpOnly, SameSite=Strict cookie of this port; the page is at the root.
      expect(page.url()).toBe(new URL('/', github.url).href);
      expect(await page.context().cookies()).toContainEqual(
        expect.objectContaining({
          name: `forgebridge_inspector_${new URL(github.url).port}`,
          value: inspectorToken(github.url),
          httpOnly: true,
          sameSite: 'Strict',
          path: '/',
        }),
      );
      await page.locator('#live.on').waitFor({ timeout: 10_000 });
      await row('1101').waitFor({ timeout: 10_000 });
      expect(await page.locator('thead th.hook').isVisible()).toBe(true);
      expect(await row('1101').locator('td.hook').textContent()).toBe('1101');
      expect(await row('2202').locator('td.hook').textContent()).toBe('2202');

      // The older record, hook 1101's: the detail is of it, and says the id came from two hooks.
      await row('1101').click();
      await page.locator('#hook').waitFor();
      expect(await page.locator('#hook').textContent()).toBe('1101');
      expect(await page.locator('#hooks-note').textContent()).toMatch(
        /^2 hooks: 1101, 2202 .*hook 1101's\.$/,
      );
      expect(await page.locator('.subs .chip').allTextContents()).toEqual(['onIssuesOpened ✓']);
      expect(await page.locator('.requests li').allTextContents()).toEqual([
        expect.stringMatching(/ · hook 2202 · 202 published$/),
        expect.stringMatching(/ · hook 1101 · 202 published$/),
      ]);
      received.length = 0;
      expect(await page.locator('#replay').textContent()).toBe('Replay hook 1101');
      await page.locator('#replay').click();
      await expect
        .poll(() => page.locator('#replay-result').textContent(), { timeout: 10_000 })
        .toBe('200 accepted');
      expect(received).toHaveLength(1);
      expect(received[0]?.headers['x-github-hook-id']).toBe('1101');
      expect(received[0]?.body.toString('utf8')).toBe(bodyOf(501));

      // The other hook's request, picked in the detail's list: its own subscribers, and its own replay.
      await page.locator('.requests li[data-hook="2202"]').click();
      await expect.poll(() => page.locator('#hook').textContent()).toBe('2202');
      expect(await page.locator('.subs .chip').allTextContents()).toEqual(['auditTrail ✗']);
      expect(await page.locator('#replay-result').textContent()).toBe('');
      await page.locator('#replay').click();
      await expect
        .poll(() => page.locator('#replay-result').textContent(), { timeout: 10_000 })
        .toBe('200 accepted');
      expect(received).toHaveLength(2);
      expect(received[1]?.headers['x-github-hook-id']).toBe('2202');
      expect(received[1]?.body.toString('utf8')).toBe(bodyOf(502));
      await page.screenshot({ path: screenshotPath('inspector-hooks.png') });
      expect(await page.content()).not.toContain(hmac(bodyOf(501)));
    } finally {
      await page.close();
    }
  });
});
