// The delivery path under injected faults (items 11-13 of issue 8): deliveries at concurrency 16 through the REAL
// ingest handler (createIngestHandler, its Middy chain and SDK clients as deployed, configured from the
// environment), against DynamoDB Local behind a fault-injecting proxy (test/helpers/fault-dynamodb.ts) and a
// fault-injecting PutEvents endpoint of ours that records what it accepts (test/helpers/fault-eventbridge.ts).
// Deliveries are API Gateway v2 events signed with our own `sign()`; where a scenario says so they are redelivered
// as a forge does (on a 5xx or a 409, after a short backoff). What the ingest queued is published by the real
// retrier handler once the bus is back. Every scenario prints its figures; the table at the end is the one
// docs/reliability.md quotes.
//
// `npm test` runs 300 deliveries per scenario: every injected fault rate shows well above its floor at that size,
// and the draws are seeded, so a run is repeatable. FORGEBRIDGE_FAULTS_DELIVERIES=1000 reproduces the docs' figures:
//   FORGEBRIDGE_FAULTS_DELIVERIES=1000 npm test -- test/integration/aws/ingest/faults.test.ts
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signedDelivery, TEST_SECRET } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { type FaultDynamoDb, startFaultDynamoDb, type TableFaults } from '../../../helpers/fault-dynamodb.js';
import {
  type BusFaults,
  type FaultEventBridge,
  startFaultEventBridge,
} from '../../../helpers/fault-eventbridge.js';
import { registerSecret } from '../../../helpers/secrets.js';

const DELIVERIES = Number(process.env.FORGEBRIDGE_FAULTS_DELIVERIES ?? 300);
const CONCURRENCY = 16;
const SEED = 20_240_611;
/** The ingest's Lambda timeout (serverless.yml): the dedupe lock lasts the invocation's remaining time. */
const INGEST_TIMEOUT_MS = 10_000;
/** The publish budget the handler runs with (the default, written out so that the outage can outlast it). */
const PUBLISH_BUDGET_MS = 3_000;
/** The SDK request timeout the handler's clients get (`FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS`, its default). */
const REQUEST_TIMEOUT_MS = 2_000;

registerSecret(TEST_SECRET);

const ddb = useDynamoDbLocal();
let bus: FaultEventBridge;
let table: FaultDynamoDb;
/** Anything else the functions call (S3, SSM, CloudWatch, ...) lands here and is counted: item 12 wants none. */
let elsewhere: Server;
let elsewhereUrl = '';
const elsewhereRequests: string[] = [];

beforeAll(async () => {
  bus = await startFaultEventBridge({ seed: SEED });
  table = await startFaultDynamoDb({ target: ddb.endpoint, seed: SEED });
  elsewhere = createServer((req, res) => {
    elsewhereRequests.push(`${req.method} ${req.headers.host}${req.url}`);
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"message":"no other aws service in this test"}');
  });
  elsewhere.listen(0, '127.0.0.1');
  await once(elsewhere, 'listening');
  const address = elsewhere.address();
  elsewhereUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await bus?.close();
  await table?.close();
  elsewhere?.closeAllConnections();
  await new Promise((resolve) => elsewhere?.close(resolve));
  console.log(
    `\nfault-injection figures (${DELIVERIES} deliveries per scenario, concurrency ${CONCURRENCY})\n`,
  );
  console.log(figuresTable(rows));
});

type Answer = { statusCode: number; body: string };
type Handler = (event: unknown, context: Context) => Promise<Answer>;
interface RedriveReport {
  due: number;
  published: number;
  retried: number;
  dead: number;
  skipped: number;
}

function lambdaContext(name: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'faults',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/**
 * The ingest and retrier handlers as Lambda loads them: fresh modules (a cold start, new SDK clients) reading
 * the environment set here, on a fresh dedupe table.
 */
async function coldStart(): Promise<{ ingest: Handler; redrive: Handler; tableName: string }> {
  const { dedupe: tableName } = await ddb.tables();
  vi.resetModules();
  const env = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL: elsewhereUrl,
    AWS_ENDPOINT_URL_S3: elsewhereUrl,
    AWS_ENDPOINT_URL_SSM: elsewhereUrl,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
    AWS_ENDPOINT_URL_DYNAMODB: table.url,
    FORGEBRIDGE_BUS_NAME: 'forgebridge-faults',
    FORGEBRIDGE_DEDUPE_TABLE: tableName,
    FORGEBRIDGE_BUCKET: 'forgebridge-faults-claims',
    FORGEBRIDGE_PUBLISH_BUDGET_MS: String(PUBLISH_BUDGET_MS),
    FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    // The offline secret source (no SSM): the secret the deliveries are signed with.
    IS_OFFLINE: 'true',
    FORGEBRIDGE_WEBHOOK_SECRET: TEST_SECRET,
    // Error lines only (the log guard reads them): thousands of info lines would bury the figures.
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    // Nor two metric lines per delivery (the metrics have their own test).
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const ingest = (await import('../../../../functions/ingest/handler.js')) as unknown as { handler: Handler };
  const redrive = (await import('../../../../functions/redrive/handler.js')) as unknown as {
    handler: Handler;
  };
  return { ingest: ingest.handler, redrive: redrive.handler, tableName };
}

function apiEvent(id: string, index: number): APIGatewayProxyEventV2 {
  const payload = { action: 'opened', issue: { number: index }, repository: { full_name: 'octo/faults' } };
  const { headers, body } = signedDelivery(payload, { event: 'issues', id });
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers,
    requestContext: {
      http: { method: 'POST', path: '/webhooks' },
    } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded: false,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Redelivery {
  /** Redeliveries after the first attempt. */
  max: number;
  /** First delay; doubled per redelivery. */
  baseDelayMs: number;
}

/** What happened to one delivery at the forge's end. */
interface Sent {
  id: string;
  /** Status of every attempt, in order (0: the handler threw). */
  statuses: number[];
  /** Whether a 2xx answer said `queued`. */
  queued: boolean;
  /** When each answer came (`performance.now()`), parallel to `statuses`. */
  answeredAt: number[];
}

interface Scenario {
  key: string;
  title: string;
  bus?: BusFaults;
  table?: TableFaults;
  redelivery?: Redelivery;
  /** Runs before delivery `index` is first sent (an outage switch). */
  before?: (index: number) => void;
}

interface Figures {
  scenario: string;
  deliveries: number;
  requests: number;
  redeliveries: number;
  status409: number;
  status503: number;
  otherFailures: number;
  queued: number;
  putEvents: number;
  /** PutEvents `send()` calls over the ingest run (one SDK invocation id each). */
  sends: number;
  writes: number;
  /** 2xx answers for a delivery that was neither on the bus nor queued when the ingest run ended. */
  unkept: number;
  retrierRuns: number;
  retrierPublished: number;
  doubled: number;
  lost: number;
  wallMs: number;
  injected: string;
}

const rows: Figures[] = [];

function figuresTable(list: Figures[]): string {
  const header = [
    'scenario',
    'requests',
    'redeliveries',
    '409',
    '503',
    'queued (202)',
    'PutEvents / delivery',
    'DynamoDB writes / delivery',
    'retrier published',
    'doubled',
    'lost',
    'wall time',
    'faults injected',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of list) {
    lines.push(
      `| ${[
        row.scenario,
        row.requests,
        row.redeliveries,
        row.status409,
        row.status503,
        row.queued,
        (row.putEvents / row.deliveries).toFixed(3),
        (row.writes / row.deliveries).toFixed(3),
        row.retrierRuns === 0 ? '-' : `${row.retrierPublished} (${row.retrierRuns} runs)`,
        row.doubled,
        row.lost,
        `${(row.wallMs / 1000).toFixed(1)} s`,
        row.injected,
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

async function queueRecords(tableName: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.documentClient().send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :queue)',
        ExpressionAttributeValues: { ':queue': 'queue#' },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    for (const item of page.Items ?? []) ids.add(String(item.delivery));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return ids;
}

/**
 * Sends every delivery through the ingest at the given concurrency, redelivering as the scenario says, then lets
 * the retrier publish whatever was queued (the bus is fault-free by then), and counts.
 */
async function run(scenario: Scenario, deliveries = DELIVERIES): Promise<{ figures: Figures; sent: Sent[] }> {
  bus.setFaults(scenario.bus ?? {});
  bus.setOutage(false);
  bus.setSlow(undefined);
  table.setFaults(scenario.table ?? {});
  const { ingest, redrive, tableName } = await coldStart();
  bus.reset();
  table.reset();
  elsewhereRequests.length = 0;
  const sent: Sent[] = Array.from({ length: deliveries }, (_, index) => ({
    id: `${scenario.key}-${String(index).padStart(4, '0')}`,
    statuses: [],
    queued: false,
    answeredAt: [],
  }));

  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < sent.length) {
      const index = next++;
      const delivery = sent[index] as Sent;
      scenario.before?.(index);
      for (let attempt = 0; ; attempt += 1) {
        let answer: Answer | undefined;
        try {
          answer = await ingest(
            apiEvent(delivery.id, index),
            lambdaContext('forgebridge-ingest', INGEST_TIMEOUT_MS),
          );
        } catch {
          answer = undefined;
        }
        const status = answer?.statusCode ?? 0;
        delivery.statuses.push(status);
        delivery.answeredAt.push(performance.now());
        if (status >= 200 && status < 300) {
          if ((JSON.parse(answer?.body ?? '{}') as { queued?: unknown }).queued === true)
            delivery.queued = true;
          break;
        }
        const redeliver = status === 0 || status >= 500 || status === 409;
        if (!redeliver || scenario.redelivery === undefined || attempt >= scenario.redelivery.max) break;
        await sleep(scenario.redelivery.baseDelayMs * 2 ** attempt);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ingestMs = performance.now() - started;

  // Whatever got a 2xx must be on the bus or in the queue at this point: the forge will not send it again.
  bus.setOutage(false);
  // A slow bus's replies still due are written (or found abandoned) before anything is counted.
  bus.setSlow(undefined);
  await bus.idle();
  const queuedNow = await queueRecords(tableName);
  const unkept = sent.filter(
    (delivery) =>
      delivery.statuses.some((status) => status >= 200 && status < 300) &&
      !bus.received.has(delivery.id) &&
      !queuedNow.has(delivery.id),
  ).length;
  const putEvents = bus.stats.requests;
  const sends = bus.stats.sends;
  const writes = table.writes();

  // The scheduled retrier, run until nothing is due (each run ends early if the bus still fails).
  let retrierRuns = 0;
  let retrierPublished = 0;
  if (queuedNow.size > 0) {
    bus.setFaults({});
    table.setFaults({});
    for (; retrierRuns < 20; ) {
      retrierRuns += 1;
      const report = (await redrive(
        {},
        lambdaContext('forgebridge-redrive', 60_000),
      )) as unknown as RedriveReport;
      retrierPublished += report.published;
      if (report.due === 0) break;
    }
  }

  const statuses = sent.flatMap((delivery) => delivery.statuses);
  const figures: Figures = {
    scenario: scenario.title,
    deliveries,
    requests: statuses.length,
    redeliveries: statuses.length - deliveries,
    status409: statuses.filter((status) => status === 409).length,
    status503: statuses.filter((status) => status === 503).length,
    otherFailures: statuses.filter(
      (status) => !(status >= 200 && status < 300) && status !== 409 && status !== 503,
    ).length,
    queued: sent.filter((delivery) => delivery.queued).length,
    putEvents,
    sends,
    writes,
    unkept,
    retrierRuns,
    retrierPublished,
    doubled: sent.filter((delivery) => (bus.received.get(delivery.id) ?? 0) > 1).length,
    lost: sent.filter((delivery) => !bus.received.has(delivery.id)).length,
    wallMs: ingestMs,
    injected: injected(),
  };
  rows.push(figures);
  console.log(`${scenario.title}\n${figuresTable([figures])}`);
  return { figures, sent };
}

/**
 * The deliveries on the bus more than once WITHOUT an ambiguous publish before them: an accepted entry whose reply
 * the ingest never read, either one the bus knows of (a reply lost on purpose, a slow reply the client gave up on)
 * or one the bus cannot see (a prompt reply the client's request timeout beat on a busy machine), which shows as
 * the ingest answering 503 or "queued" after the bus had accepted the delivery; or an ambiguous queue write (a
 * 503 for a delivery whose queue record was written). A redelivery, a retry or the retrier then sends it again:
 * that double is the ambiguous case, measured. Any other double (a dedupe that let a
 * redelivery through, a retrier publishing what the ingest had published and said so) is a bug, and shows here.
 */
function doublesWithoutAmbiguousPublish(sent: readonly Sent[]): string[] {
  return sent
    .filter((delivery) => {
      if ((bus.received.get(delivery.id) ?? 0) < 2 || bus.unread.has(delivery.id)) return false;
      // A queue write whose reply was lost: answered 503 though the record exists, so the retrier publishes it too
      // unless the redelivery's dedupe record says completed (its own write can fail under these faults).
      if (delivery.statuses.includes(503) && table.stats.writesByKey.has(`queue#${delivery.id}`))
        return false;
      const acceptedAt = bus.firstAccepted.get(delivery.id) ?? Number.POSITIVE_INFINITY;
      return !delivery.statuses.some(
        (status, index) =>
          (status === 503 || (status === 202 && delivery.queued)) &&
          (delivery.answeredAt[index] ?? 0) > acceptedAt,
      );
    })
    .map((delivery) => delivery.id);
}

function injected(): string {
  const parts: string[] = [];
  const { stats } = bus;
  if (stats.entryFailures > 0) parts.push(`${stats.entryFailures} failed entries`);
  if (stats.http500 > 0) parts.push(`${stats.http500} bus 500s`);
  if (stats.throttled > 0) parts.push(`${stats.throttled} bus throttles`);
  if (stats.lostReplies > 0) parts.push(`${stats.lostReplies} lost PutEvents replies`);
  if (stats.refused > 0) {
    parts.push(`${stats.refused} refused ${stats.slowed > 0 ? 'while slow' : 'in the outage'}`);
  }
  if (stats.slowed > 0) parts.push(`${stats.slowed} PutEvents answered late`);
  if (stats.lateReplies > 0) parts.push(`${stats.lateReplies} of them after the client gave up`);
  if (table.stats.throttled > 0) parts.push(`${table.stats.throttled} DynamoDB throttles`);
  if (table.stats.http500 > 0) parts.push(`${table.stats.http500} DynamoDB 500s`);
  if (table.stats.lostReplies > 0) parts.push(`${table.stats.lostReplies} lost DynamoDB replies`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

const FORGE_REDELIVERY: Redelivery = { max: 6, baseDelayMs: 200 };
/** Twice the publish budget: every delivery that starts in the first half of it runs out of budget. */
const OUTAGE_MS = 2 * PUBLISH_BUDGET_MS;

/**
 * Slow-bus replies: some within the request timeout, most past it, some past the whole publish budget; a third of
 * the requests are refused at once instead, so that retries start late in the budget and some are still in flight
 * when it runs out.
 */
const SLOW_BUS = { minDelayMs: 1_000, maxDelayMs: 5_000, refuseRate: 0.3 };

/** The bus accepts everything at once but answers late for `ms`. */
function slowBus(ms: number): void {
  bus.setSlow(SLOW_BUS);
  setTimeout(() => bus.setSlow(undefined), ms);
}

/** The bus refuses everything for `ms`. */
function outage(ms: number): void {
  bus.setOutage(true);
  setTimeout(() => bus.setOutage(false), ms);
}

// 1000 deliveries take 10-40 s a scenario on 2 busy cores; the project's 60 s test timeout is too tight for that.
describe(`the ingest under injected faults (${DELIVERIES} deliveries, concurrency ${CONCURRENCY}, real handler)`, {
  timeout: 180_000,
}, () => {
  it('happy path: exactly 1 PutEvents and at most 2 DynamoDB writes per delivery, no S3 or other AWS call (item 12)', async () => {
    const { figures, sent } = await run({ key: 'happy', title: 'happy path (no faults)' });
    expect(sent.every((delivery) => delivery.statuses.join() === '202')).toBe(true);
    expect(figures.queued).toBe(0);
    expect(figures.putEvents).toBe(DELIVERIES);
    expect([...bus.received.values()].every((count) => count === 1)).toBe(true);
    expect(bus.received.size).toBe(DELIVERIES);
    // One dedupe record per delivery, written at most twice (in progress, completed).
    expect(table.stats.writesByKey.size).toBe(DELIVERIES);
    expect(Math.max(...table.stats.writesByKey.values())).toBeLessThanOrEqual(2);
    expect(figures.writes).toBeLessThanOrEqual(2 * DELIVERIES);
    expect(elsewhereRequests).toEqual([]);
    expect(bus.stats.unexpected).toBe(0);
  });

  it('(a) bus entry failures 30%, HTTP 500 5%, throttling 2%, forge redelivery: 0 lost, 0 doubled', async () => {
    const { figures } = await run({
      key: 'a',
      title: '(a) bus: 30% entry failures, 5% HTTP 500, 2% throttling; redelivery',
      bus: { entryFailureRate: 0.3, http500Rate: 0.05, throttleRate: 0.02 },
      redelivery: FORGE_REDELIVERY,
    });
    // The faults were there, and the publisher's retries absorbed them.
    expect(bus.stats.entryFailures).toBeGreaterThan(DELIVERIES * 0.2);
    expect(bus.stats.http500 + bus.stats.throttled).toBeGreaterThan(DELIVERIES * 0.03);
    expect(figures.putEvents).toBeGreaterThan(DELIVERIES);
    expect(figures).toMatchObject({ lost: 0, doubled: 0, unkept: 0, otherFailures: 0 });
  });

  it('(b) 5% of DynamoDB write replies lost: 0 lost, 0 doubled, no self-inflicted 409', async () => {
    const { figures } = await run({
      key: 'b',
      title: '(b) DynamoDB: 5% of write replies lost; redelivery',
      table: { lostReplyRate: 0.05 },
      redelivery: FORGE_REDELIVERY,
    });
    expect(table.stats.lostReplies).toBeGreaterThan(DELIVERIES * 0.05);
    // Only one invocation per delivery at a time here: any 409 would be a lock the delivery's own attempt holds.
    expect(figures.status409).toBe(0);
    expect(figures).toMatchObject({ lost: 0, doubled: 0, unkept: 0, otherFailures: 0 });
  });

  it('(d) DynamoDB throttling 20% and 500s 10% on every write, and a bus outage: never a 2xx for a delivery neither on the bus nor queued', async () => {
    const outageAt = Math.floor(DELIVERIES / 3);
    const { figures, sent } = await run({
      key: 'd',
      title: `(d) DynamoDB: 20% throttling, 10% 500s on writes (queue writes 50%, 30%); bus outage ${OUTAGE_MS / 1000} s; redelivery`,
      // The queue writes fail more often, so that some deliveries are neither published nor queued.
      table: {
        throttleRate: 0.2,
        http500Rate: 0.1,
        byKeyPrefix: { 'queue#': { throttleRate: 0.5, http500Rate: 0.3 } },
      },
      redelivery: FORGE_REDELIVERY,
      before: (index) => {
        if (index === outageAt) outage(OUTAGE_MS);
      },
    });
    // Answered 503 after the ingest tried to queue them: neither the bus nor the queue took them.
    const queueFailures = sent.filter(
      (delivery) => delivery.statuses.includes(503) && table.stats.writesByKey.has(`queue#${delivery.id}`),
    ).length;
    console.log(`(d) 503 after a failed queue write: ${queueFailures} deliveries`);
    expect(table.stats.throttled).toBeGreaterThan(DELIVERIES * 0.2);
    expect(table.stats.http500).toBeGreaterThan(DELIVERIES * 0.1);
    // The outage made the ingest queue deliveries, so the queue writes met the DynamoDB faults too.
    expect(bus.stats.refused).toBeGreaterThan(0);
    expect(figures.queued).toBeGreaterThan(0);
    expect(queueFailures).toBeGreaterThan(0);
    expect(figures.unkept).toBe(0);
    expect(figures).toMatchObject({ lost: 0, otherFailures: 0 });
    // A delivery reaches the bus twice only through an ambiguous publish: the bus took an attempt whose reply the
    // ingest never read (the SDK timed out on a busy machine, or a queue write's reply was lost), so the ingest
    // answered "not published" (503, or queued for the retrier) after the bus had it, and the redelivery or the
    // retrier sent it again. Any other double (a dedupe that let a redelivery through) fails here.
    const orphanRecords = figures.retrierPublished - figures.queued;
    const unexplained = doublesWithoutAmbiguousPublish(sent);
    console.log(
      `(d) queue records of deliveries answered 503: ${orphanRecords}, doubled: ${figures.doubled}, ` +
        `doubles without an ambiguous publish: ${unexplained.length}`,
    );
    expect(unexplained).toEqual([]);
  });

  it('(e) 5% of PutEvents replies lost (item 13): the doubled rate is measured, not hidden, and bounded', async () => {
    const { figures, sent } = await run({
      key: 'e',
      title: '(e) bus: 5% of PutEvents replies lost (accepted); redelivery',
      bus: { lostReplyRate: 0.05 },
      redelivery: FORGE_REDELIVERY,
    });
    const rate = figures.doubled / DELIVERIES;
    console.log(
      `(e) doubled: ${figures.doubled} of ${DELIVERIES} deliveries (${(rate * 100).toFixed(1)}%) after ${bus.stats.lostReplies} lost replies`,
    );
    expect(bus.stats.lostReplies).toBeGreaterThan(DELIVERIES * 0.03);
    // Only an accepted entry whose reply the ingest never read can be sent again: a lost reply (injected), or on a
    // busy machine a reply its request timeout beat. Each double is one of them, checked per delivery.
    expect(doublesWithoutAmbiguousPublish(sent)).toEqual([]);
    expect(rate).toBeLessThan(0.1);
    expect(figures).toMatchObject({ lost: 0, unkept: 0, otherFailures: 0 });
  });

  it('(f) a slow bus for 6 s (item 9): one HTTP attempt per send, no 503, no retry after an attempt that timed out, doubles only from replies the client gave up on', async () => {
    const slowAt = Math.floor(DELIVERIES / 2);
    const { figures, sent } = await run({
      key: 'f',
      title: `(f) bus slow ${OUTAGE_MS / 1000} s (accepts, answers after ${SLOW_BUS.minDelayMs / 1000}-${SLOW_BUS.maxDelayMs / 1000} s; request timeout ${REQUEST_TIMEOUT_MS / 1000} s, budget ${PUBLISH_BUDGET_MS / 1000} s); redelivery`,
      redelivery: FORGE_REDELIVERY,
      before: (index) => {
        if (index === slowAt) slowBus(OUTAGE_MS);
      },
    });
    const copies = [...bus.received.values()];
    const extraCopies = copies.reduce((sum, count) => sum + count - 1, 0);
    // Requests still under way when their delivery's publish budget ran out, counted from the bus: the budget
    // starts a few ms before the delivery's first request arrives, so this undercounts at the edge, if anything.
    const inFlightAtBudgetEnd = bus.slowRequests.filter((request) => {
      const budgetEnd = (bus.firstSeen.get(request.ids[0] ?? '') ?? 0) + PUBLISH_BUDGET_MS;
      return request.arrivedAt < budgetEnd && request.endedAt > budgetEnd;
    }).length;
    console.log(
      `(f) ${figures.putEvents} HTTP PutEvents attempts for ${figures.sends} sends during the ingest run; ` +
        `${bus.stats.slowed} answered late, ${bus.stats.lateReplies} after the client gave up, ` +
        `${inFlightAtBudgetEnd} in flight when the publish budget ran out, ${bus.stats.refused} refused; ` +
        `${figures.doubled} deliveries published twice (${extraCopies} extra copies, at most ${Math.max(...copies)} of one delivery); ` +
        `${figures.status503} answers 503, ${figures.queued} queued, ${figures.lost} lost`,
    );
    // The slow window was there and the client gave up on some accepted requests.
    expect(bus.stats.slowed).toBeGreaterThan(CONCURRENCY);
    expect(bus.stats.lateReplies).toBeGreaterThan(0);
    expect(bus.stats.refused).toBeGreaterThan(0);
    // inFlightAtBudgetEnd is printed, not asserted: with the fix an attempt outlives the budget only when a retry
    // started late after slow refusals (a couple per run); the publisher before fe6ecd9 had 13 in one run.
    // The handler's client makes exactly one HTTP attempt per send (maxAttempts 1): the publisher alone retries.
    expect(figures.putEvents).toBe(figures.sends);
    expect(bus.stats.requests).toBe(bus.stats.sends);
    // DynamoDB takes every queue write here, so whatever the bus did, each delivery is published or queued: no 503.
    expect(figures.status503).toBe(0);
    expect(sent.filter((delivery) => delivery.statuses.join() !== '202')).toEqual([]);
    expect(figures.queued).toBeGreaterThan(0);
    expect(figures.retrierPublished).toBe(figures.queued);
    expect(figures).toMatchObject({ lost: 0, unkept: 0, otherFailures: 0 });
    // Every slowed request was recorded on arrival, so an entry reaches the bus twice only when the client stopped
    // waiting for an accepted request (its timeout) and the delivery was then sent again (the retrier): item 13's
    // ambiguous case, not a publish the budget cut off. Checked per delivery: each double was accepted by the bus
    // before the ingest answered it "queued". Most are the slow replies the client gave up on (lateReplies); on a
    // busy machine a prompt reply that the client's timer beat counts too, which the bus cannot see, so the
    // count of late replies is printed, not used as a bound.
    expect(doublesWithoutAmbiguousPublish(sent)).toEqual([]);
    // No retry starts after an attempt that timed out (the request timeout plus another such attempt does not
    // fit the budget), and a refused attempt records nothing, so no delivery is on the bus more than twice: its
    // timed-out attempt and the retrier's.
    expect(Math.max(...copies)).toBeLessThanOrEqual(2);
  });

  it('(c) a bus outage longer than the publish budget and NO redelivery: every delivery answered 2xx, the queued ones published once when the bus is back', async () => {
    const outageAt = Math.floor(DELIVERIES / 4);
    const { figures, sent } = await run({
      key: 'c',
      title: `(c) bus outage ${OUTAGE_MS / 1000} s (budget ${PUBLISH_BUDGET_MS / 1000} s); no redelivery; retrier`,
      before: (index) => {
        if (index === outageAt) outage(OUTAGE_MS);
      },
    });
    expect(bus.stats.refused).toBeGreaterThan(CONCURRENCY);
    // One attempt each, and each one answered 2xx: a forge that never redelivers loses nothing.
    expect(sent.filter((delivery) => delivery.statuses.length !== 1)).toEqual([]);
    expect(figures.requests).toBe(DELIVERIES);
    expect(figures.status503).toBe(0);
    expect(figures.queued).toBeGreaterThanOrEqual(CONCURRENCY);
    expect(figures.unkept).toBe(0);
    // The retrier published exactly what was queued, once.
    expect(figures.retrierPublished).toBe(figures.queued);
    expect(figures).toMatchObject({ lost: 0, doubled: 0, otherFailures: 0 });
  });
});
