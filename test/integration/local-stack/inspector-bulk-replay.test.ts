// The inspector's replay to one subscriber, on DynamoDB Local: a real delivery log (records written with
// DeliveryLog.record, subscribers' outcomes with recordSubscriber, as the ingest and the subscribers write them) and
// the local stack's inspector on 127.0.0.1. No Lambda runs here: its LambdaClient is stubbed with
// aws-sdk-client-mock, and the stub runs the real subscriber handler in-process, which reports into the same log
// (as the function does on the stack). The preview counts and samples, what it refuses (400), one run at a time
// (409), the run's progress and summary, the second preview's 0; an inspector without the action (a deployed
// stage's) previews but does not send, and its page shows the CLI command (Chromium).
import { randomUUID } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { createSubscriberHandler } from '../../../lib/aws/handlers/subscriber.js';
import { type Inspector, serveInspector } from '../../../lib/inspector/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { startInspector } from '../../../local-stack/inspector/server.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { launchChromium } from '../../helpers/browser.js';
import { inspectorFetch } from '../../helpers/inspector.js';
import { lambdaContext } from '../../helpers/lambda-context.js';

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON answers, read field by field in the assertions
type Json = any;

const ddb = useDynamoDbLocal();
const X = 'forgebridge-local-onEverything';
const OTHER = 'forgebridge-local-onPush';
/** The deliveries' window: an hour ago, one a minute. */
const START = Date.now() - 60 * 60_000;

let log: DeliveryLog;
let inspector: Inspector;
let lambda: LambdaClient;
const invoked: { functionName: string; event: Json }[] = [];
/** Delivery ids the subscriber still fails (the fix not yet everywhere). */
const stillFailing = new Set<string>();
/** While set, each invocation waits for it: a run stays under way for as long as the test needs. */
let gate: Promise<void> | undefined;

function entry(n: number): DeliveryLogEntry {
  const push = n % 2 === 1;
  const deliveryId = randomUUID();
  const payload = push ? { ref: 'refs/heads/main', n } : { action: 'opened', issue: { number: n } };
  return {
    receivedAt: START + n * 60_000,
    deliveryId,
    event: push ? 'push' : 'issues',
    ...(push ? {} : { action: 'opened' }),
    forge: 'generic',
    source: n < 8 ? 'default' : 'acme',
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    headers: { 'x-forge-event': push ? 'push' : 'issues', 'x-forge-delivery': deliveryId },
    body: JSON.stringify(payload),
  };
}

// 10 deliveries over issues.opened and push, sources default (0-7) and acme (8-9); X failed 0, 1, 2, 5 and 8.
const entries = Array.from({ length: 10 }, (_, n) => entry(n));
const FAILED = [0, 1, 2, 5, 8].map((n) => entries[n]?.deliveryId as string);

async function api(
  url: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Json }> {
  const response = await inspectorFetch(url, path, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}
const post = (path: string, value: unknown, url = inspector.url) =>
  api(url, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
  });
// To the second, as the page's time fields hold it.
const SINCE = Math.floor((START - 1000) / 1000) * 1000;
const inWindow = { since: new Date(SINCE).toISOString() };

beforeAll(async () => {
  const tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
  log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
  for (const [n, e] of entries.entries()) {
    expect((await log.record(e)).ok).toBe(true);
    const id = e.deliveryId as string;
    const failed = FAILED.includes(id);
    await log.recordSubscriber(id, {
      subscriber: X,
      outcome: failed ? 'error' : 'ok',
      durationMs: 4,
      source: e.source,
      ...(failed ? { error: { name: 'TypeError', message: `the bad deploy ${n}` } } : {}),
    });
    if (e.event === 'push') {
      await log.recordSubscriber(id, { subscriber: OTHER, outcome: 'ok', durationMs: 3, source: e.source });
    }
  }
  // The subscriber, fixed: the real handler, reporting into the log under X's name.
  const handler = createSubscriberHandler({
    name: X,
    env: {},
    deliveryLog: log,
    metrics: false,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    register: (events) =>
      events.onAny(({ id }) => {
        if (stillFailing.has(id)) throw new Error(`still broken for ${id}`);
      }),
  });
  lambda = new LambdaClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  // Stubs this client only (not LambdaClient's prototype, which other files of the worker share).
  mockClient(lambda)
    .on(InvokeCommand)
    .callsFake(async (input: { FunctionName?: string; Payload?: Uint8Array }) => {
      const functionName = input.FunctionName as string;
      const event = JSON.parse(Buffer.from(input.Payload as Uint8Array).toString('utf8'));
      invoked.push({ functionName, event });
      await gate;
      try {
        await handler(event, lambdaContext(functionName));
        return { StatusCode: 200 };
      } catch (error) {
        // What Lambda answers for a function's error.
        const errorMessage = (error as Error).message;
        return {
          StatusCode: 200,
          FunctionError: 'Unhandled',
          Payload: Buffer.from(JSON.stringify({ errorType: 'Error', errorMessage })),
        };
      }
    });
  inspector = await startInspector({
    log,
    sources: [{ name: 'default', forge: 'generic', url: 'http://127.0.0.1:9/unused', secret: 'unused' }],
    lambda,
    stage: 'local',
    eventSource: 'forge.test',
  });
});

afterAll(async () => {
  await inspector?.stop();
  lambda?.destroy();
});

describe('inspector: replay to a subscriber', () => {
  it('says it can send from here', async () => {
    expect(await api(inspector.url, '/api/bulk-replay')).toEqual({
      status: 200,
      body: { available: true, target: 'local stack' },
    });
  });

  it('previews: the subscribers of the window, then the count and a sample, oldest first, nothing sent', async () => {
    const listed = await post('/api/bulk-replay/preview', inWindow);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ subscribers: [X, OTHER], subscriber: null, count: null, sample: [] });

    const counted = await post('/api/bulk-replay/preview', { ...inWindow, subscriber: X, outcome: 'error' });
    expect(counted.status).toBe(200);
    expect(counted.body).toMatchObject({ subscriber: X, outcome: 'error', count: 5, since: inWindow.since });
    expect(counted.body.sample.map((d: Json) => d.deliveryId)).toEqual(FAILED);
    expect(counted.body.sample[0]).toEqual({
      deliveryId: FAILED[0],
      source: 'default',
      event: 'issues.opened',
      receivedAt: START,
      outcome: 'error',
      error: 'TypeError: the bad deploy 0',
    });
    // By its function key; the outcome defaults to error.
    expect(
      (await post('/api/bulk-replay/preview', { ...inWindow, subscriber: 'onEverything' })).body,
    ).toMatchObject({ subscriber: X, count: 5 });
    const count = async (extra: Record<string, unknown>) =>
      (await post('/api/bulk-replay/preview', { ...inWindow, subscriber: X, ...extra })).body.count;
    expect(await count({ outcome: 'any' })).toBe(10);
    expect(await count({ event: 'push' })).toBe(2);
    expect(await count({ event: 'issues.opened' })).toBe(3);
    expect(await count({ event: 'issues' })).toBe(3);
    expect(await count({ source: 'acme' })).toBe(1);
    // Until excludes: the first three minutes hold 0, 1 and 2.
    expect(await count({ until: START + 3 * 60_000 })).toBe(3);
    expect(await count({ since: START + 3 * 60_000, outcome: 'any' })).toBe(7);
    expect(invoked).toEqual([]);
  });

  it('refuses bad input with a 400 and a clear JSON error, and stays up', async () => {
    const refused = async (value: unknown, code: string, message: RegExp) => {
      for (const path of ['/api/bulk-replay/preview', '/api/bulk-replay']) {
        const answer = await post(path, value);
        expect(answer, `${path} ${JSON.stringify(value)}`).toMatchObject({
          status: 400,
          body: { error: code },
        });
        expect(answer.body.message).toMatch(message);
      }
    };
    await refused({}, 'invalid_request', /^"since" is required$/);
    await refused({ since: 'yesterday' }, 'invalid_request', /^"since" must be a date and time/);
    await refused({ since: { $gt: 1 } }, 'invalid_request', /^"since" must be a date and time/);
    await refused(
      { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
      'invalid_request',
      /^"until" \(2026-01-01T00:00:00.000Z\) must be after "since" \(2026-01-02T00:00:00.000Z\)$/,
    );
    await refused({ since: Date.now() + 3_600_000 }, 'invalid_request', /is in the future$/);
    await refused(
      { ...inWindow, subscriber: 'onNobody' },
      'unknown_subscriber',
      new RegExp(`subscriber "onNobody" \\(subscribers that did: ${X}, ${OTHER}\\)$`),
    );
    await refused({ ...inWindow, subscriber: 'a b' }, 'invalid_request', /^"subscriber" must be/);
    await refused(
      { ...inWindow, subscriber: X, event: 'issues.flew' },
      'unknown_event',
      /not in the catalogue$/,
    );
    await refused({ ...inWindow, subscriber: X, event: 7 }, 'unknown_event', /not in the catalogue$/);
    await refused(
      { ...inWindow, subscriber: X, outcome: 'ok' },
      'invalid_request',
      /^"outcome" must be one of "error", "any"$/,
    );
    await refused(
      { ...inWindow, subscriber: X, source: 'Not A Source' },
      'invalid_request',
      /^"source" must be/,
    );
    expect(await post('/api/bulk-replay', { ...inWindow, subscriber: X, rate: 0 })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', message: expect.stringMatching(/^"rate" must be/) },
    });
    const broken = await api(inspector.url, '/api/bulk-replay/preview', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"since":',
    });
    expect(broken).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    expect((await api(inspector.url, '/api/bulk-replay/nothing-here')).status).toBe(404);
    expect((await api(inspector.url, '/api/bulk-replay/preview')).status).toBe(404);
    expect(invoked).toEqual([]);
    expect((await post('/api/bulk-replay/preview', inWindow)).status).toBe(200);
  });

  it('is refused without the token or from a foreign origin, like the other POSTs', async () => {
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ ...inWindow, subscriber: X });
    for (const path of ['/api/bulk-replay', '/api/bulk-replay/preview']) {
      const bare = await fetch(new URL(path, inspector.url), { method: 'POST', headers: json, body });
      expect(bare.status).toBe(401);
      const foreign = await inspectorFetch(inspector.url, path, {
        method: 'POST',
        headers: { ...json, origin: 'http://evil.example' },
        body,
      });
      expect(foreign.status).toBe(403);
    }
    expect((await fetch(new URL('/api/bulk-replay', inspector.url))).status).toBe(401);
    expect(invoked).toEqual([]);
  });

  it('sends the selection to the subscriber alone, one run at a time, with its progress; then 0 are left', async () => {
    stillFailing.add(FAILED[4] as string);
    let open: () => void = () => undefined;
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const started = await post('/api/bulk-replay', { ...inWindow, subscriber: 'onEverything', rate: 100 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ subscriber: X, state: 'running', total: 5, done: 0, failed: 0 });
    const id = started.body.id as string;
    // A second start while it runs: 409, whatever it selects.
    const second = await post('/api/bulk-replay', { ...inWindow, subscriber: OTHER, outcome: 'any' });
    expect(second).toMatchObject({ status: 409, body: { error: 'run_in_progress' } });
    expect(second.body.message).toMatch(/of 5 to forgebridge-local-onEverything/);
    expect((await api(inspector.url, '/api/bulk-replay')).body.run).toMatchObject({ id, state: 'running' });
    open();
    gate = undefined;

    const deadline = Date.now() + 20_000;
    let run = (await api(inspector.url, `/api/bulk-replay/${id}`)).body;
    const seen = new Set<number>([run.done]);
    while (run.state === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      run = (await api(inspector.url, `/api/bulk-replay/${id}`)).body;
      seen.add(run.done);
    }
    expect(run).toMatchObject({ id, state: 'done', total: 5, done: 5, sent: 4, failed: 1 });
    expect(run.failures).toEqual([
      {
        deliveryId: FAILED[4],
        error: `the function failed: 1 handler of event "issues" failed: still broken for ${FAILED[4]}`,
      },
    ]);
    expect(run.durationMs).toBeGreaterThanOrEqual(0);
    expect([...seen].every((done) => done >= 0 && done <= 5)).toBe(true);

    // X alone, once each, with the EventBridge event its rule would hand it.
    expect(invoked.map((call) => call.functionName)).toEqual(Array(5).fill(X));
    expect(invoked.map((call) => call.event.detail.delivery).sort()).toEqual([...FAILED].sort());
    const push = invoked.find((call) => call.event.detail.delivery === FAILED[1])?.event;
    expect(push).toMatchObject({
      source: 'forge.test',
      'detail-type': 'push',
      detail: { delivery: FAILED[1], event: 'push', payload: { ref: 'refs/heads/main', n: 1 } },
    });

    // The subscriber reported ok for the four it took: a second preview holds only the one still failing.
    const again = await post('/api/bulk-replay/preview', { ...inWindow, subscriber: X });
    expect(again.body.count).toBe(1);
    expect(again.body.sample[0]).toMatchObject({
      deliveryId: FAILED[4],
      error: expect.stringMatching(/still broken/),
    });
    for (const deliveryId of FAILED.slice(0, 4)) {
      const details = await log.get(deliveryId, { source: 'default' });
      expect(details?.subscribers[X]?.outcome, deliveryId).toBe('ok');
    }
    // The other subscriber's outcomes are untouched.
    expect((await log.get(FAILED[1] as string, { source: 'default' }))?.subscribers[OTHER]?.durationMs).toBe(
      3,
    );

    // Fixed everywhere: the rest goes, and nothing is left.
    stillFailing.clear();
    invoked.length = 0;
    const last = await post('/api/bulk-replay', { ...inWindow, subscriber: X });
    expect(last).toMatchObject({ status: 202, body: { total: 1 } });
    await expect
      .poll(async () => (await api(inspector.url, `/api/bulk-replay/${last.body.id}`)).body.state)
      .toBe('done');
    expect(invoked.map((call) => call.event.detail.delivery)).toEqual([FAILED[4]]);
    expect((await post('/api/bulk-replay/preview', { ...inWindow, subscriber: X })).body.count).toBe(0);
    // Nothing selected: a run of 0, done at once.
    const none = await post('/api/bulk-replay', { ...inWindow, subscriber: X });
    expect(none).toMatchObject({ status: 202, body: { total: 0 } });
    await expect
      .poll(async () => (await api(inspector.url, `/api/bulk-replay/${none.body.id}`)).body)
      .toMatchObject({ state: 'done', done: 0, failed: 0 });
    expect(invoked).toHaveLength(1);
  });
});

describe("inspector without the action (a deployed stage's): it previews, and the page shows the CLI command", () => {
  let stage: Inspector;
  let browser: Browser;

  beforeAll(async () => {
    stage = await serveInspector({
      log,
      rules: [],
      actions: {
        label: 'stage "prod"',
        canReplay: () => false,
        replay: () => Promise.reject(new Error('not here')),
      },
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stage?.stop();
  });

  it('counts, but a start is 404 and sends nothing', async () => {
    expect((await api(stage.url, '/api/bulk-replay')).body).toEqual({
      available: false,
      target: 'stage "prod"',
    });
    expect(
      (await post('/api/bulk-replay/preview', { ...inWindow, subscriber: X, outcome: 'any' }, stage.url))
        .body,
    ).toMatchObject({ count: 10 });
    const start = await post('/api/bulk-replay', { ...inWindow, subscriber: X }, stage.url);
    expect(start).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(start.body.message).toMatch(/done with the CLI/);
  });

  it('shows the command of the selection instead of the button', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 700 }, timezoneId: 'UTC' });
    try {
      await page.goto(stage.url);
      await page.locator('#bulk summary').click();
      await page.locator('#bulk-since').fill(new Date(SINCE).toISOString().slice(0, 19));
      await expect.poll(() => page.locator('#bulk-subscriber option').count()).toBe(2);
      await page.locator('#bulk-subscriber').selectOption(X);
      await page.locator('#bulk-outcome').selectOption('any');
      await page.locator('#bulk-preview').click();
      await expect.poll(() => page.locator('#bulk-count').textContent()).toBe('10');
      expect(await page.locator('#bulk-start').isVisible()).toBe(false);
      expect(await page.locator('#bulk-cli').isVisible()).toBe(true);
      expect(await page.locator('#bulk-command').textContent()).toBe(
        `npx forgebridge replay --stage prod --since ${new Date(SINCE).toISOString()} --subscriber onEverything --outcome any`,
      );
    } finally {
      await page.close();
    }
  });
});
