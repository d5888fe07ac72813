// `forgebridge status` against DynamoDB Local: the delivery log written through DeliveryLog.record, the queue
// records of the dedupe table written through DeliveryQueue (enqueued, leased and buried as the retrier does),
// run in this process (`main`) and once as a process; on a "stage", the SDK pointed at DynamoDB Local and at a
// DescribeStacks stand-in (test/helpers/local-cloudformation.ts) for the stack's outputs.
import { randomUUID } from 'node:crypto';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { ForgeGovernor } from '../../../lib/aws/governor/governor.js';
import { DeliveryQueue } from '../../../lib/aws/queue/queue.js';
import { recordReconcileRun } from '../../../lib/aws/reconcile/last-run.js';
import type { StatusReport } from '../../../lib/cli/stage-status.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import {
  cleanCliEnv,
  expectOneLineError,
  closedPort as freePort,
  NO_AWS_CREDENTIALS,
  runCli,
} from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';
import { type LocalCloudFormation, startLocalCloudFormation } from '../../helpers/local-cloudformation.js';

const ddb = useDynamoDbLocal();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DASHBOARD =
  'https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#dashboards/dashboard/forgebridge-dev';

let endpoint: string;
/** A log with a healthy mix, a log whose last hour was all refused. */
let busy: string;
let refused: string;
/** An empty dedupe table, one with a queued delivery waiting 20 minutes, one with a dead letter. */
let emptyDedupe: string;
let oldQueue: string;
let deadDedupe: string;
const ids = { published: randomUUID(), gitlab: randomUUID(), dead: randomUUID(), queued: randomUUID() };

function entry(overrides: Partial<DeliveryLogEntry>): DeliveryLogEntry {
  return {
    event: 'issues',
    action: 'opened',
    forge: 'generic',
    source: 'default',
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    ...overrides,
  };
}

async function table(kind: 'deliveries' | 'dedupe'): Promise<string> {
  const name = `${kind}-${randomUUID().slice(0, 8)}`;
  await createTable(endpoint, TableDefinitions[kind], name);
  return name;
}

async function enqueue(tableName: string, id: string): Promise<{ queue: DeliveryQueue; pk: string }> {
  const queue = new DeliveryQueue({ client: ddb.client(), tableName });
  const body = Buffer.from('{"action":"opened"}');
  await expect(
    queue.enqueue({ id, name: 'issues', payload: { action: 'opened' }, rawBody: body, source: 'default' }),
  ).resolves.toBe('queued');
  const [pk] = await queue.due(10);
  if (pk === undefined) throw new Error('the queued delivery is not due');
  return { queue, pk };
}

beforeAll(async () => {
  endpoint = ddb.endpoint;
  [busy, refused, emptyDedupe, oldQueue, deadDedupe] = await Promise.all([
    table('deliveries'),
    table('deliveries'),
    table('dedupe'),
    table('dedupe'),
    table('dedupe'),
  ]);
  const now = Date.now();
  const log = new DeliveryLog({ client: ddb.client(), tableName: busy });
  const busyEntries = [
    entry({ deliveryId: ids.published, receivedAt: now - 2 * MINUTE }),
    entry({ deliveryId: ids.published, receivedAt: now - MINUTE, httpStatus: 200, outcome: 'duplicate' }),
    entry({
      deliveryId: randomUUID(),
      receivedAt: now - 3 * HOUR,
      verdict: 'bad_signature',
      httpStatus: 401,
      outcome: 'rejected',
    }),
    entry({
      deliveryId: ids.gitlab,
      receivedAt: now - 5 * HOUR,
      source: 'gitlab',
      forge: 'gitlab',
      event: 'push',
      action: undefined,
      httpStatus: 202,
      outcome: 'queued',
    }),
    // Older than a day: in no count.
    entry({ deliveryId: randomUUID(), receivedAt: now - 30 * HOUR }),
  ];
  for (const item of busyEntries) expect(await log.record(item)).toMatchObject({ ok: true });
  const refusedLog = new DeliveryLog({ client: ddb.client(), tableName: refused });
  for (const minutes of [5, 10, 20]) {
    expect(
      await refusedLog.record(
        entry({
          deliveryId: randomUUID(),
          receivedAt: now - minutes * MINUTE,
          verdict: 'bad_signature',
          reason: 'signature does not match',
          httpStatus: 401,
          outcome: 'rejected',
        }),
      ),
    ).toMatchObject({ ok: true });
  }
  // A published delivery two hours ago: the last hour is all refused, the day is not.
  expect(
    await refusedLog.record(entry({ deliveryId: randomUUID(), receivedAt: now - 2 * HOUR })),
  ).toMatchObject({ ok: true });

  // A queued delivery the retrier has not published for 20 minutes.
  const queued = await enqueue(oldQueue, ids.queued);
  await ddb.client().send(
    new UpdateItemCommand({
      TableName: oldQueue,
      Key: { pk: { S: queued.pk } },
      UpdateExpression: 'SET queuedAt = :at',
      ExpressionAttributeValues: { ':at': { N: String(now - 20 * MINUTE) } },
    }),
  );
  // A dead letter: leased and given up, as the retrier does after the maximum age.
  const dead = await enqueue(deadDedupe, ids.dead);
  const leased = await dead.queue.lease(dead.pk, 60_000);
  if (leased === undefined) throw new Error('the queued delivery could not be leased');
  await dead.queue.bury(leased, Object.assign(new Error('bus gone'), { name: 'ResourceNotFoundException' }));
});

function local(deliveries: string, dedupe: string, extra: string[] = []) {
  return runMain([
    'status',
    '--endpoint',
    endpoint,
    '--table',
    deliveries,
    '--dedupe-table',
    dedupe,
    ...extra,
  ]);
}

describe('forgebridge status (a local log)', () => {
  it('has help, and the program help lists it', async () => {
    const help = await runMain(['status', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: forgebridge status \[options\]/);
    for (const text of ['--stage <name>', '--dedupe-table <name>', '--json', 'Exit codes: 0 nothing needs']) {
      expect(help.stdout).toContain(text);
    }
    expect((await runMain(['--help'])).stdout).toMatch(/^ {2}status \[options\] +one screen: /m);
  });

  it('shows each source with its last delivery, the counts of the last hour and day, an empty queue; exit 0', async () => {
    const result = await local(busy, emptyDedupe);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^forgebridge status {2}local stack {2}\d{4}-\d{2}-\d{2}T/);
    expect(result.stdout).not.toContain('dashboard');
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}default {2}last 1m \d+s ago {2}issues\.opened {2}200 duplicate {2}verified {2}2 in the last hour, 3 in the last day$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}gitlab {3}last 5h 0m ago {2}push {2}202 queued {2}verified {2}0 in the last hour, 1 in the last day$/,
      ),
    );
    const table = lines.indexOf('deliveries             last hour  last day');
    expect(lines.slice(table + 1, table + 8)).toEqual([
      '  total                        2         4',
      '  published                    1         1',
      '  queued                       0         1',
      '  duplicate                    1         1',
      '  rejected                     0         1',
      '  verified                     2         3',
      '  bad_signature                0         1',
    ]);
    expect(lines).toContain('queue        empty');
    expect(lines).toContain('dead letters none');
    expect(lines).toContain('reconciler   no run recorded');
    expect(result.stdout).toMatch(/nothing needs attention\n$/);
  });

  it("shows the reconciler's last run as it wrote it down in the dedupe table", async () => {
    const dedupe = await table('dedupe');
    const at = Date.parse('2026-11-26T10:00:00Z');
    const report = {
      sources: 2,
      listed: 120,
      failed: 4,
      alreadyOurs: 1,
      late: 1,
      redelivered: 2,
      recovered: 1,
      skipped: 0,
      gaveUp: 0,
      errors: 1,
      rateLimited: false,
      dryRun: false,
      bySource: {
        acme: { failedAtForge: 2, redelivered: 2, recovered: 0 },
        big: { failedAtForge: 1, redelivered: 0, recovered: 1 },
      },
    };
    await recordReconcileRun(ddb.client(), dedupe, report, at);
    const text = await local(busy, dedupe);
    expect(text.stdout.split('\n')).toContain(
      'reconciler   last run 2026-11-26T10:00:00.000Z: 2 sources, 3 failed at the forge, 2 redelivered, 1 recovered, 1 error',
    );
    const json = JSON.parse((await local(busy, dedupe, ['--json'])).stdout) as StatusReport;
    expect(json.reconciler).toEqual({
      state: 'ran',
      at: '2026-11-26T10:00:00.000Z',
      sources: 2,
      listed: 120,
      failedAtForge: 3,
      redelivered: 2,
      recovered: 1,
      errors: 1,
      rateLimited: false,
    });
  });

  it('prints JSON ending with a newline', async () => {
    const result = await local(busy, emptyDedupe, ['--json']);
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith('}\n')).toBe(true);
    const report = JSON.parse(result.stdout) as StatusReport;
    expect(report).toMatchObject({
      target: 'local stack',
      deliveriesTable: busy,
      dedupeTable: emptyDedupe,
      dashboardUrl: null,
      lastHour: { total: 2, byOutcome: { published: 1, duplicate: 1 }, byVerdict: { verified: 2 } },
      lastDay: { total: 4, byOutcome: { published: 1, duplicate: 1, rejected: 1, queued: 1 } },
      truncated: false,
      queue: { depth: 0, oldestAgeSeconds: null, truncated: false },
      deadLetters: { count: 0, truncated: false },
      reconciler: { state: 'none' },
      attention: [],
    });
    expect(report.sources.map((source) => [source.source, source.last?.deliveryId])).toEqual([
      ['default', ids.published],
      ['gitlab', ids.gitlab],
    ]);
  });

  it('exits 1 on a queued delivery older than 15 minutes', async () => {
    const result = await local(busy, oldQueue);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^queue {8}1 waiting, the oldest for 20m \d+s$/m);
    expect(result.stdout).toMatch(
      /^attention {2}the oldest queued delivery waits for 20m \d+s \(over 15 minutes\)$/m,
    );
    const json = JSON.parse((await local(busy, oldQueue, ['--json'])).stdout) as StatusReport;
    expect(json.queue.depth).toBe(1);
    expect(json.queue.oldestAgeSeconds).toBeGreaterThanOrEqual(20 * 60);
    expect(json.attention).toHaveLength(1);
  });

  it('exits 1 on a dead letter, naming the newest', async () => {
    const result = await local(busy, deadDedupe);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(`^dead letters 1  newest ${ids.dead} at \\S+ \\(ResourceNotFoundException\\)$`, 'm'),
    );
    expect(result.stdout).toContain('queue        empty');
    expect(result.stdout).toMatch(/^attention {2}1 dead letter$/m);
    const json = JSON.parse((await local(busy, deadDedupe, ['--json'])).stdout) as StatusReport;
    expect(json.deadLetters).toMatchObject({ count: 1, newest: { deliveryId: ids.dead } });
  });

  it('exits 1 when every delivery of the last hour was refused', async () => {
    const result = await local(refused, emptyDedupe, ['--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as StatusReport;
    expect(report.lastHour).toEqual({
      total: 3,
      byVerdict: { bad_signature: 3 },
      byOutcome: { rejected: 3 },
    });
    expect(report.lastDay.total).toBe(4);
    expect(report.attention).toEqual(['all 3 deliveries of the last hour were refused']);
  });

  it('shows each forge API owner: calls in flight, a stop the forge imposed, the primary budget; exit 1 on a stop', async () => {
    const tokens = `tokens-${randomUUID().slice(0, 8)}`;
    await createTable(endpoint, TableDefinitions.tokens, tokens);
    const empty = await local(busy, emptyDedupe, ['--token-table', tokens]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain('forge api    no governed call in the last hour');
    const governor = (owner: string) =>
      new ForgeGovernor({
        client: ddb.documentClient(),
        tableName: tokens,
        owner,
        limits: { concurrency: 5, budgets: [] },
      });
    const reset = Math.floor(Date.now() / 1000) + 3600;
    const app = governor('github#app-1#installation-9');
    await app.acquire('GET'); // still in flight
    await (await app.acquire('GET')).release({
      status: 200,
      headers: new Headers({
        'x-ratelimit-remaining': '4211',
        'x-ratelimit-limit': '5000',
        'x-ratelimit-reset': String(reset),
      }),
    });
    await (await governor('forge#bot#repo').acquire('POST')).release({
      status: 403,
      headers: new Headers({ 'retry-after': '600' }),
    });
    const result = await local(busy, emptyDedupe, ['--token-table', tokens]);
    expect(result.code).toBe(1);
    const at = new Date(reset * 1000).toISOString();
    expect(result.stdout).toContain(`forge api    forge#bot#repo: 0 in flight, stopped until `);
    expect(result.stdout).toMatch(
      /^ {13}github#app-1#installation-9: 1 in flight, 4211 of 5000 left until \S+$/m,
    );
    expect(result.stdout).toContain(`4211 of 5000 left until ${at}`);
    expect(result.stdout).toMatch(
      /^attention {2}the forge api of "forge#bot#repo" is stopped until \S+ \(retry-after\)/m,
    );
    const json = JSON.parse(
      (await local(busy, emptyDedupe, ['--token-table', tokens, '--json'])).stdout,
    ) as StatusReport;
    expect(json.forgeApi).toEqual([
      { owner: 'forge#bot#repo', inFlight: 0, stop: { until: expect.any(String), reason: 'retry-after' } },
      {
        owner: 'github#app-1#installation-9',
        inFlight: 1,
        primary: { remaining: 4211, total: 5000, resetAt: at },
      },
    ]);
    // A token table that cannot be read is said so, and is no failure of the status.
    const missing = await local(busy, emptyDedupe, ['--token-table', 'no-such-tokens']);
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain('forge api    token table "no-such-tokens" not readable');
  });

  it('runs as a process with the same exit code', async () => {
    const env = { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS };
    const args = ['status', '--endpoint', endpoint, '--table', busy, '--json'];
    const ok = await runCli([...args, '--dedupe-table', emptyDedupe], env);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as StatusReport).lastDay.total).toBe(4);
    const attention = await runCli([...args, '--dedupe-table', deadDedupe], env);
    expect(attention.code).toBe(1);
    expect(attention.stdout.endsWith('\n')).toBe(true);
  });

  it('says an unreachable log, a missing dedupe table and bad input in one line', async () => {
    const port = await freePort();
    expectOneLineError(
      await runMain(['status', '--endpoint', `http://127.0.0.1:${port}`, '--table', busy]),
      3,
      `could not reach http://127.0.0.1:${port}: connection refused`,
    );
    expectOneLineError(
      await local(busy, 'no-such-dedupe'),
      3,
      'delivery log table "no-such-dedupe" not found (local stack)',
    );
    expectOneLineError(await runMain(['status', '--stage', 'no_such!']), 2, '"--stage" must be letters');
  });
});

describe('forgebridge status --stage: the SDK pointed at DynamoDB Local and a DescribeStacks stand-in', () => {
  let cloudFormation: LocalCloudFormation;
  let awsEnv: Record<string, string>;

  beforeAll(async () => {
    cloudFormation = await startLocalCloudFormation({
      'forgebridge-dev': { DeliveriesTableName: busy, DedupeTableName: deadDedupe, DashboardUrl: DASHBOARD },
      'forgebridge-old': { DeliveriesTableName: busy },
    });
    awsEnv = {
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_REGION: 'us-east-1',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
    };
  });
  afterAll(async () => {
    await cloudFormation?.close();
  });

  it("reads the tables and the dashboard's URL from the stack's outputs", async () => {
    const result = await runMain(['status', '--stage', 'dev'], awsEnv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')[0]).toMatch(/^forgebridge status {2}stage "dev" {2}/);
    expect(result.stdout).toContain(`dashboard    ${DASHBOARD}\n`);
    expect(result.stdout).toMatch(new RegExp(`^dead letters 1  newest ${ids.dead}`, 'm'));
    const json = JSON.parse((await runMain(['status', '--stage', 'dev', '--json'], awsEnv)).stdout);
    expect(json).toMatchObject({
      target: 'stage "dev"',
      deliveriesTable: busy,
      dedupeTable: deadDedupe,
      dashboardUrl: DASHBOARD,
    });
    expect(cloudFormation.asked.filter((name) => name === 'forgebridge-dev')).toHaveLength(2);
  });

  it('takes the tables as options, and names a missing output or stack in one line', async () => {
    const named = await runMain(
      ['status', '--stage', 'other', '--table', busy, '--dedupe-table', emptyDedupe, '--json'],
      awsEnv,
    );
    expect(named.code).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ dashboardUrl: null, dedupeTable: emptyDedupe });
    expectOneLineError(
      await runMain(['status', '--stage', 'old'], awsEnv),
      2,
      'stack "forgebridge-old" has no "DedupeTableName" output: pass "--dedupe-table"',
    );
    expectOneLineError(
      await runMain(['status', '--stage', 'gone'], awsEnv),
      2,
      'stack "forgebridge-gone" not found',
    );
  });
});
