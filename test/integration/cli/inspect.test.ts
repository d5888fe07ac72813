// `forgebridge inspect --stage`: the inspector page served by the CLI in this process (`main`) against a
// "deployed stage" whose SDK calls go to DynamoDB Local (the delivery log, written through DeliveryLog.record),
// s3rver (the claim-check bucket) and a local PutEvents bus (test/helpers/fault-eventbridge.ts); its JSON API
// with fetch, and the page in Chromium (/usr/bin/chromium through playwright-core). The screenshot of the page
// goes to .tmp/inspector-stage.png (docs/inspector-stage.png, which docs/operations.md shows, with
// FORGEBRIDGE_SCREENSHOTS=docs).
import { createHash, randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { type LocalS3, startS3 } from '../../../local-stack/s3.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { launchChromium, screenshotPath } from '../../helpers/browser.js';
import { expectOneLineError } from '../../helpers/cli.js';
import { runMain, type StartedMain, startMain } from '../../helpers/cli-in-process.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../helpers/fault-eventbridge.js';
import { inspectorFetch } from '../../helpers/inspector.js';

const SCREENSHOT = screenshotPath('inspector-stage.png');
const BUCKET = 'claim-checks';
const MINUTE = 60_000;
const ddb = useDynamoDbLocal();

let tableName: string;
let log: DeliveryLog;
let s3: LocalS3;
let bus: FaultEventBridge;
let awsEnv: Record<string, string>;
const claimBody = Buffer.from('{"action":"opened","issue":{"number":9,"title":"Deploys fail on main"}}');
const ids = { claimed: randomUUID(), refused: randomUUID(), live: randomUUID() };

function entry(overrides: Partial<DeliveryLogEntry>): DeliveryLogEntry {
  return {
    event: 'issues',
    action: 'opened',
    forge: 'github',
    source: 'default',
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    headers: { 'x-github-event': 'issues', 'x-hub-signature-256': 'sha256=0123456789abcdef' },
    ...overrides,
  };
}

beforeAll(async () => {
  tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
  s3 = await startS3({ buckets: [BUCKET] });
  bus = await startFaultEventBridge();
  const client = new S3Client(s3.clientConfig);
  await client.send(
    new PutObjectCommand({ Bucket: BUCKET, Key: `deliveries/${ids.claimed}`, Body: claimBody }),
  );
  client.destroy();
  // A deployed stage keeps no payload in its log: the claim check holds the body.
  log = new DeliveryLog({ client: ddb.client(), tableName });
  const now = Date.now();
  for (const item of [
    entry({
      deliveryId: ids.claimed,
      receivedAt: now - 3 * MINUTE,
      eventId: 'event-claimed-1',
      bodyBytes: claimBody.byteLength,
      payloadRef: {
        bucket: BUCKET,
        key: `deliveries/${ids.claimed}`,
        bytes: claimBody.byteLength,
        sha256: createHash('sha256').update(claimBody).digest('hex'),
      },
    }),
    entry({
      deliveryId: ids.refused,
      receivedAt: now - 2 * MINUTE,
      event: 'push',
      action: undefined,
      verdict: 'bad_signature',
      reason: 'signature does not match',
      diagnosis: [{ code: 'wrong_secret', message: 'made with another secret than every configured one' }],
      httpStatus: 401,
      outcome: 'rejected',
    }),
  ]) {
    expect(await log.record(item)).toMatchObject({ ok: true });
  }
  await log.recordSubscriber(ids.claimed, {
    subscriber: 'forgebridge-dev-onIssuesOpened',
    outcome: 'ok',
    durationMs: 41,
  });
  awsEnv = {
    // s3rver's own credentials; DynamoDB Local (sharedDb) and the local bus take any.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_MAX_ATTEMPTS: '1',
    AWS_ENDPOINT_URL_DYNAMODB: ddb.endpoint,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
  };
});

afterAll(async () => {
  await bus?.close();
  await s3?.stop();
});

/** Starts `inspect` and waits for its URL; `stop()` calls the SIGINT handler it registered. */
async function startInspect(args: string[] = []): Promise<{
  started: StartedMain;
  url: string;
  stop(): Promise<string>;
}> {
  const before = new Set(process.listeners('SIGINT'));
  const beforeTerm = new Set(process.listeners('SIGTERM'));
  const started = startMain(['inspect', '--stage', 'dev', '--table', tableName, ...args], awsEnv);
  let url: string | undefined;
  for (let waited = 0; url === undefined; waited += 50) {
    if (waited > 15_000) throw new Error(`inspect did not start: ${started.stdout()} ${started.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    url = /^inspector (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}) {2}/m.exec(started.stdout())?.[1];
  }
  return {
    started,
    url,
    async stop() {
      const added = process.listeners('SIGINT').filter((listener) => !before.has(listener));
      expect(added).toHaveLength(1);
      (added[0] as (signal: string) => void)('SIGINT');
      const result = await started.done;
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(process.listeners('SIGTERM').filter((l) => !beforeTerm.has(l))).toHaveLength(0);
      return result.stdout;
    },
  };
}

async function api(base: string, path: string, init?: RequestInit) {
  const response = await inspectorFetch(base, path, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function replay(base: string, id: string, freshId = false) {
  return api(base, `/api/deliveries/${id}/replay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ freshId }),
  });
}

describe('forgebridge inspect --stage: the API', () => {
  it('lists the stage log, says what it can replay, re-publishes from the claim check, and sends no samples', async () => {
    const inspect = await startInspect();
    const { url } = inspect;
    expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(inspect.started.stdout()).toContain(`stage "dev", table ${tableName}; Ctrl-C stops it`);
    const list = await api(url, '/api/deliveries');
    expect(list.status).toBe(200);
    const records = list.body.records as { deliveryId: string; rules: string[] }[];
    expect(records.map((record) => record.deliveryId)).toEqual([ids.refused, ids.claimed]);
    expect(records[1]?.rules).toContain('onIssuesOpened');
    expect(await api(url, '/api/samples')).toEqual({
      status: 200,
      body: { target: 'stage "dev"', events: [], sources: [] },
    });
    const sample = await api(url, '/api/samples', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event":"push"}',
    });
    expect(sample).toMatchObject({
      status: 404,
      body: { message: 'no samples are sent from here (stage "dev")' },
    });

    const claimed = await api(url, `/api/deliveries/${ids.claimed}`);
    expect(claimed.body).toMatchObject({ deliveryId: ids.claimed, replayable: true });
    const refused = await api(url, `/api/deliveries/${ids.refused}`);
    expect(refused.body).toMatchObject({ replayable: false });
    const headers = (refused.body.records as { headers: Record<string, string> }[])[0]?.headers;
    expect(headers?.['x-hub-signature-256']).not.toContain('0123456789abcdef');

    const same = await replay(url, ids.claimed);
    expect(same).toMatchObject({
      status: 200,
      body: { mode: 'republish', deliveryId: ids.claimed, replayOf: ids.claimed },
    });
    expect(bus.received.get(ids.claimed)).toBe(1);
    const fresh = await replay(url, ids.claimed, true);
    expect(fresh.body.deliveryId).not.toBe(ids.claimed);
    expect(bus.received.get(fresh.body.deliveryId as string)).toBe(1);
    expect(await replay(url, ids.refused)).toMatchObject({ status: 409, body: { error: 'no_claim_check' } });
    expect((await replay(url, randomUUID())).status).toBe(404);
    expect(await inspect.stop()).toMatch(/SIGINT: stopped\n$/);
  });

  it('replays a delivery without a claim check from the archive, and says what the bus refuses', async () => {
    const archive = 'arn:aws:events:us-east-1:123456789012:archive/forgebridge-dev';
    const inspect = await startInspect(['--archive', archive]);
    expect((await api(inspect.url, `/api/deliveries/${ids.refused}`)).body.replayable).toBe(true);
    expect(await replay(inspect.url, ids.refused, true)).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^a fresh delivery id needs a claim-checked delivery/) },
    });
    // The local bus serves PutEvents only: StartReplay is refused, and the page is told so.
    expect(await replay(inspect.url, ids.refused)).toEqual({
      status: 502,
      body: {
        error: 'replay_failed',
        message: 'replay failed: UnknownOperationException: only PutEvents is served here',
      },
    });
    await inspect.stop();
  });

  it('has help, and the program help lists it', async () => {
    const help = await runMain(['inspect', '--help']);
    expect(help.code).toBe(0);
    for (const text of ['--stage <name>', '--port <port>', '--archive <arn>', 'nothing is exposed on AWS']) {
      expect(help.stdout).toContain(text);
    }
    expect((await runMain(['--help'])).stdout).toMatch(/^ {2}inspect \[options\] +serve the inspector/m);
  });

  it('needs a stage, credentials and a table, said in one line', async () => {
    expectOneLineError(
      await runMain(['inspect']),
      2,
      '"--stage" is required: the local stack serves its own',
    );
    expectOneLineError(
      await runMain(['inspect', '--stage', 'dev', '--table', tableName, '--region', 'us-east-1']),
      2,
      'AWS credentials not found for stage "dev"',
    );
    expectOneLineError(
      await runMain(['inspect', '--stage', 'dev', '--table', 'no-such-table'], awsEnv),
      3,
      'delivery log table "no-such-table" not found (stage "dev")',
    );
    expectOneLineError(
      await runMain(['inspect', '--stage', 'dev', '--table', tableName, '--port', '70000'], awsEnv),
      2,
      '"--port" must be a port number from 1 to 65535',
    );
  });
});

describe('forgebridge inspect --stage: the page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the stage live, opens a delivery with its diagnosis, and replays from the claim check', async () => {
    const inspect = await startInspect();
    const page = await browser.newPage({ viewport: { width: 1400, height: 760 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const row = (id: string) => page.locator(`tr[data-delivery-id="${id}"]`);
    await page.goto(inspect.url);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    expect(await page.locator('#target').textContent()).toBe('stage "dev"');
    expect(await page.locator('#sample').isVisible()).toBe(false);
    await row(ids.claimed).first().waitFor({ timeout: 10_000 });

    // A delivery the stage's ingest logs now arrives through the live stream, without a reload.
    await page.evaluate(() => {
      (globalThis as unknown as { marker: number }).marker = 42;
    });
    expect(
      await log.record(entry({ deliveryId: ids.live, event: 'pull_request', action: 'closed' })),
    ).toMatchObject({ ok: true });
    await row(ids.live).waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
    expect(await row(ids.live).locator('td.event').textContent()).toBe('pull_request.closed');

    await row(ids.refused).click();
    await page.locator('#diagnosis li[data-code="wrong_secret"]').waitFor();
    expect(await page.locator('#replay').isDisabled()).toBe(true);

    await row(ids.claimed).first().click();
    await page.locator('#replay:not([disabled])').waitFor();
    expect(await page.locator('.subs .chip').allTextContents()).toEqual(['onIssuesOpened ✓']);
    await page.locator('#replay').click();
    await expect
      .poll(() => page.locator('#replay-result').textContent(), { timeout: 10_000 })
      .toMatch(/^published event \S+$/);
    await page.screenshot({ path: SCREENSHOT });
    expect(
      requests.every(
        (request) => request.startsWith(new URL('/', inspect.url).href) || request.startsWith('data:'),
      ),
    ).toBe(true);
    const html = await page.content();
    expect(html).not.toContain('0123456789abcdef');
    expect(html).not.toContain('S3RVER');
    await page.close();
    await inspect.stop();
  });
});
