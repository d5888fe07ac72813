// The `forgebridge` CLI run in this process: `main(argv)` of lib/cli/program.ts with stdout and stderr captured,
// so that the coverage of the suite sees the CLI. It runs every scenario of scenarios.ts (which cli.test.ts and
// cli-log.test.ts run as a process) and adds what only the test process can check: a terminal on stderr or stdin,
// `dev --proxy` stopped through the Ctrl-C handler it registers, records of every shape, and a deployed stage
// (--stage) with the SDK pointed at DynamoDB Local, s3rver and a local PutEvents bus.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { deliveryHeaders } from '../../../lib/webhooks/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { type LocalS3, startS3 } from '../../../local-stack/s3.js';
import { expectOneLineError, type Run } from '../../helpers/cli.js';
import { runMain, type StartedMain, startMain } from '../../helpers/cli-in-process.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../helpers/fault-eventbridge.js';
import { type SseServer, startSseServer } from '../../helpers/sse-server.js';
import {
  COMMANDS,
  type Command,
  commandScenarios,
  devScenarios,
  entry,
  fixture,
  helpScenarios,
  ids,
  logScenarios,
  MINUTE,
  SECRET,
  sampleScenarios,
  useCliFixture,
} from './scenarios.js';

type Started = StartedMain;
const start = startMain;

const cli = runMain;
/** Runs a log command against the fixture's table on DynamoDB Local. */
function cliLog(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return cli([...args, '--endpoint', fixture.endpoint, '--table', fixture.tableName], env);
}

/** Waits until `check` holds of what the started command printed (15 s at most). */
async function until(started: Started, check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 50) {
    if (waited > 15_000)
      throw new Error(`timed out waiting for ${what}: ${started.stdout()} ${started.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the started command has printed `text` on stdout. */
function printed(started: Started, text: string): Promise<void> {
  return until(started, () => started.stdout().includes(text), `"${text}"`);
}

/** Calls the handler the command registered for `signal`, as the signal would (it is not sent to this process). */
function interrupt(signal: 'SIGINT' | 'SIGTERM'): void {
  const before = signal === 'SIGINT' ? listeners.int : listeners.term;
  const added = process.listeners(signal).filter((listener) => !before.has(listener));
  expect(added).toHaveLength(1);
  (added[0] as (name: string) => void)(signal);
}

useCliFixture({ log: true });

// A command that ends leaves nothing behind: no spy, no exit code, no signal handler of its own.
let listeners: { int: Set<NodeJS.SignalsListener>; term: Set<NodeJS.SignalsListener> };
beforeEach(() => {
  listeners = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  for (const [signal, set] of [
    ['SIGINT', listeners.int],
    ['SIGTERM', listeners.term],
  ] as const) {
    for (const listener of process.listeners(signal)) if (!set.has(listener)) process.off(signal, listener);
  }
});

sampleScenarios('all');
helpScenarios(cli, Object.keys(COMMANDS) as Command[]);
commandScenarios(cli);
logScenarios(cli);
devScenarios(cli);

describe('what only the test process shows: a terminal', () => {
  it('draws a spinner on a terminal stderr and clears it when the answer comes', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      const result = await cli([
        'send',
        'push',
        '--url',
        `${fixture.base}/hooks/generic`,
        '--secret',
        SECRET,
      ]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`POST ${fixture.base}/hooks/generic`);
      expect(result.stderr.endsWith('\r\u001b[K')).toBe(true);
    } finally {
      if (descriptor === undefined) delete (process.stderr as { isTTY?: boolean }).isTTY;
      else Object.defineProperty(process.stderr, 'isTTY', descriptor);
    }
  });

  it('verify refuses no body file on a terminal', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY');
    Object.defineProperty(process.stdin, 'isTTY', { value: true, configurable: true });
    try {
      expectOneLineError(
        await cli(['verify', '--secret', SECRET, '--signature', 'x']),
        2,
        'a body file is required (or "-" to read it from stdin)',
      );
    } finally {
      if (descriptor === undefined) delete (process.stdin as { isTTY?: boolean }).isTTY;
      else Object.defineProperty(process.stdin, 'isTTY', descriptor);
    }
  });
});

describe('a host that does not resolve', () => {
  it('a host that does not resolve: one line naming it, exit 3 (send and replay)', async () => {
    const url = 'http://no-such-host.invalid/webhooks';
    expectOneLineError(
      await cli(['send', 'push', '--url', url, '--secret', SECRET]),
      3,
      `could not reach ${url}: host not found`,
    );
    const result = await cliLog(['replay', ids.opened, '--url', url, '--secret', SECRET]);
    expectOneLineError(
      result,
      3,
      /^forgebridge: could not reach http:\/\/no-such-host\.invalid\/webhooks: (enotfound|eai_again)$/,
    );
  });
});

describe('records of every shape (a table of their own)', () => {
  const idA = randomUUID();
  let table: string;
  const binary = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);

  beforeAll(async () => {
    table = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(fixture.endpoint, TableDefinitions.deliveries, table);
    const log = new DeliveryLog({ client: fixture.ddb.client(), tableName: table, storePayload: true });
    const now = Date.now();
    const records: DeliveryLogEntry[] = [
      entry({
        deliveryId: idA,
        receivedAt: now - MINUTE,
        forge: 'gitlab',
        nativeEvent: 'Issue Hook',
        nativeAction: 'open',
        verdict: 'not_checked',
        httpStatus: 503,
        outcome: 'failed',
        errorCode: 'PutEventsFailed',
        headers: { 'x-gitlab-event': 'Issue Hook', 'x-gitlab-token': 'a-token-value' },
        body: binary,
      }),
      entry({
        receivedAt: now - 2 * MINUTE,
        event: undefined,
        action: undefined,
        verdict: 'invalid_json',
        httpStatus: 400,
        outcome: 'rejected',
      }),
    ];
    for (const record of records) expect(await log.record(record)).toMatchObject({ ok: true });
    await log.recordSubscriber(idA, { subscriber: 'onIssue', outcome: 'ok', durationMs: 3 });
  });

  it('lists a failed, an unchecked and an invalid one', async () => {
    const result = await cli(['deliveries', '--endpoint', fixture.endpoint, '--table', table]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[1]).toMatch(
      new RegExp(`issues\\.opened\\s+${idA}\\s+default\\s+503\\s+not_checked\\s+failed\\s+1 ok$`),
    );
    expect(lines[2]).toMatch(/\s-\s+\(invalid id\)\s+default\s+400\s+invalid_json\s+rejected\s+-$/);
    expect(result.stdout).toContain('2 deliveries, newest first');
    const one = await cli(['deliveries', '--endpoint', fixture.endpoint, '--table', table, '--limit', '1']);
    expect(one.stdout).toContain('1 delivery, newest first');
  });

  it('shows the native names, the error code, masked token and a binary payload as base64', async () => {
    const result = await cli(['show', idA, '--body', '--endpoint', fixture.endpoint, '--table', table]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('forge     gitlab  (Issue Hook, open)');
    expect(result.stdout).toMatch(/503\s+not_checked\s+failed\s+4 B\n\s+error\s+PutEventsFailed/);
    expect(result.stdout).toContain('x-gitlab-token: [masked]');
    expect(result.stdout).not.toContain('a-token-value');
    expect(result.stdout).toContain(`payload\n${binary.toString('base64')}\n`);
    const json = await cli(['show', idA, '--json', '--endpoint', fixture.endpoint, '--table', table]);
    expect(json.code).toBe(0);
    const details = JSON.parse(json.stdout) as { records: { body: string; bodyEncoding: string }[] };
    expect(details.records[0]).toMatchObject({ body: binary.toString('base64'), bodyEncoding: 'base64' });
    expectOneLineError(
      await cli(['show', 'nope', '--source', 'other', '--endpoint', fixture.endpoint, '--table', table]),
      2,
      'no delivery "nope" of source "other" in the log of the local stack',
    );
  });
});

describe('dev --proxy in this process: its Ctrl-C handler called as the signal would', () => {
  let channel: SseServer;

  beforeAll(async () => {
    channel = await startSseServer({ bodyAs: 'string' });
  });
  afterAll(async () => {
    await channel?.close();
  });

  it('relays each delivery into the ingest URL, one line each, and stops on SIGINT', async () => {
    const started = start(['dev', '--proxy', channel.url, '--url', `${fixture.base}/hooks/generic`]);
    await printed(started, 'relaying');
    expect(started.stdout()).not.toContain(channel.url);
    const body = '{"action":"opened","issue":{"number":1},  "note":"as signed"}';
    const id = randomUUID();
    const forgeAnswer = await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { name: 'issues', id }),
      body,
    });
    expect(forgeAnswer.status).toBe(200);
    const wrongId = randomUUID();
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders('not-the-secret', body, { name: 'issues', id: wrongId }),
      body,
    });
    await printed(started, wrongId);
    expect(fixture.received[0]?.result).toMatchObject({ ok: true, id, name: 'issues' });
    expect(fixture.received[0]?.body.toString()).toBe(body);
    expect(fixture.received[1]?.result).toMatchObject({ ok: false });
    // Ctrl-C: the handler the command registered, called as the signal would (not sent to the test process).
    interrupt('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.find((line) => line.includes(id))).toMatch(
      /issues {2}\S+ {2}\d+ B {2}-> 202 Accepted {2}\d+ ms$/,
    );
    expect(lines.find((line) => line.includes(wrongId))).toMatch(/-> 401 Unauthorized invalid_signature/);
    expect(result.stdout).toMatch(/SIGINT: stopped, 2 deliveries relayed\n$/);
    expect(result.stderr).toBe('');
  });

  it('says a delivery it could not post, on its line', async () => {
    const started = start([
      'dev',
      '--proxy',
      channel.url,
      '--url',
      `http://127.0.0.1:${fixture.closedPort}/webhooks`,
    ]);
    await printed(started, 'relaying');
    const id = randomUUID();
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, '{}', { name: 'push', id }),
      body: '{}',
    });
    await printed(started, id);
    interrupt('SIGTERM');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`${id}.*-> not delivered: econnrefused$`, 'm'));
    expect(result.stdout).toMatch(/SIGTERM: stopped, 0 deliveries relayed\n$/);
  });

  it("relays --forge alone into the local stack's source of that forge, or says which --source to use", async () => {
    // A state file as `npm start` writes it, its gitea source being this test's verifying receiver.
    const state = join(fixture.tmp, 'dev-state.json');
    const sources = [
      { name: 'default', forge: 'generic', url: `${fixture.base}/hooks/generic`, secret: SECRET },
      { name: 'gitea', forge: 'gitea', url: `${fixture.base}/hooks/gitea`, secret: SECRET },
    ];
    writeFileSync(
      state,
      JSON.stringify({ webhookUrl: `${fixture.base}/hooks/generic`, secret: SECRET, sources }),
    );
    const none = await cli(['dev', '--proxy', channel.url, '--forge', 'gitlab'], {
      FORGEBRIDGE_STATE_FILE: state,
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      'forgebridge: the local stack has no gitlab source: pass "--source <name>" (its sources: default (generic), gitea (gitea))\n',
    );

    const started = start(['dev', '--proxy', channel.url, '--forge', 'gitea'], {
      FORGEBRIDGE_STATE_FILE: state,
    });
    await printed(started, 'relaying');
    expect(started.stdout()).toContain(
      `-> ${fixture.base}/hooks/gitea  (gitea headers, source gitea (the local stack's source for --forge gitea): the forge must sign with this source's secret; Ctrl-C stops)`,
    );
    const id = randomUUID();
    const body = '{"ref":"refs/heads/main"}';
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { forge: 'gitea', name: 'push', id }),
      body,
    });
    await printed(started, id);
    interrupt('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(fixture.received[0]?.url).toBe('/hooks/gitea');
    expect(fixture.received[0]?.result).toMatchObject({ ok: true, id, name: 'push' });
    expect(result.stdout).not.toContain(SECRET);
  });

  it('relays with the headers of --forge into --source, and counts one delivery', async () => {
    const started = start([
      'dev',
      '--proxy',
      channel.url,
      '--url',
      `${fixture.base}/hooks`,
      '--source',
      'gitea',
      '--forge',
      'gitea',
    ]);
    await printed(started, 'relaying');
    expect(started.stdout()).toContain('(gitea headers, source gitea; Ctrl-C stops)');
    const id = randomUUID();
    const body = '{"ref":"refs/heads/main"}';
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { forge: 'gitea', name: 'push', id }),
      body,
    });
    await printed(started, id);
    interrupt('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(fixture.received[0]?.url).toBe('/hooks/gitea');
    expect(fixture.received[0]?.result).toMatchObject({ ok: true, id });
    expect(fixture.received[0]?.headers['x-gitea-delivery']).toBe(id);
    expect(result.stdout).toMatch(/SIGINT: stopped, 1 delivery relayed\n$/);
  });

  it('relays a parsed (smee-style) body signed with sha1 only, says a bad message and a lost channel on stderr', async () => {
    const smee = await startSseServer({ retryMs: 100 });
    let running: Started | undefined;
    try {
      const started = start([
        'dev',
        '--proxy',
        smee.url,
        '--url',
        `${fixture.base}/hooks/github/plain`,
        '--forge',
        'github',
      ]);
      running = started;
      await printed(started, 'relaying');
      const id = randomUUID();
      const body = JSON.stringify({ ref: 'refs/heads/main' });
      await fetch(smee.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': id,
          'x-hub-signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`,
        },
        body,
      });
      await printed(started, id);
      expect(fixture.received[0]?.headers['x-hub-signature']).toBe(
        `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`,
      );
      expect(fixture.received[0]?.body.toString()).toBe(body);
      expect(started.stdout()).toMatch(
        new RegExp(`push {2}${id} {2}\\d+ B {2}-> 500 Internal Server Error\\s+\\d+ ms\\n`),
      );
      // A message without the event header: said on stderr, not relayed.
      await fetch(smee.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await until(started, () => started.stderr().includes('proxy:'), 'the bad message on stderr');
      expect(started.stderr()).toMatch(/^proxy: \S+: message has no "x-github-event" key\n/);
      // The channel goes away once open: said on stderr, and the relay keeps waiting for it.
      await smee.close();
      await until(
        started,
        () =>
          started
            .stderr()
            .split('\n')
            .filter((line) => line.startsWith('proxy:')).length >= 2,
        'the lost channel',
      );
      interrupt('SIGINT');
      const result = await started.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/SIGINT: stopped, 1 delivery relayed\n$/);
      expect(fixture.received).toHaveLength(1);
      running = undefined;
    } finally {
      await smee.close().catch(() => undefined);
      if (running !== undefined) {
        // A failed assertion above: stop the relay all the same, so that it writes nothing into later tests.
        for (const listener of process.listeners('SIGINT')) {
          if (!listeners.int.has(listener)) (listener as (signal: string) => void)('SIGINT');
        }
        await running.done.catch(() => undefined);
      }
    }
  });

  it('stops cleanly on Ctrl-C while the channel has not opened yet', async () => {
    // A channel that takes the request and never answers.
    const silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/channel`;
      const started = start(['dev', '--proxy', url, '--url', fixture.base]);
      let added: NodeJS.SignalsListener[] = [];
      for (let waited = 0; added.length === 0; waited += 20) {
        if (waited > 5_000) throw new Error('timed out waiting for the Ctrl-C handler');
        await new Promise((resolve) => setTimeout(resolve, 20));
        added = process.listeners('SIGINT').filter((listener) => !listeners.int.has(listener));
      }
      (added[0] as (signal: string) => void)('SIGINT');
      const result = await started.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('a deployed stage (--stage): the SDK pointed at DynamoDB Local, s3rver and a local PutEvents bus', () => {
  const BUCKET = 'claim-checks';
  const claimBody = Buffer.from('{"action":"opened","issue":{"number":9}}');
  const claimed = randomUUID();
  /** One GitHub event delivered to two hooks (two Apps on one URL): one GUID, two claim-checked records. */
  const twoHooks = randomUUID();
  const hookBodies = {
    '1101': Buffer.from('{"action":"opened","issue":{"number":27},"installation":{"id":501}}'),
    '2202': Buffer.from('{"action":"opened","issue":{"number":27},"installation":{"id":502}}'),
  };
  let hooksTable: string;
  let s3: LocalS3;
  let bus: FaultEventBridge;
  let awsEnv: Record<string, string>;

  beforeAll(async () => {
    s3 = await startS3({ buckets: [BUCKET] });
    bus = await startFaultEventBridge();
    const { S3Client, PutObjectCommand } = await import('@aws-sdk/client-s3');
    const client = new S3Client(s3.clientConfig);
    await client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: `deliveries/${claimed}`, Body: claimBody }),
    );
    for (const [hook, body] of Object.entries(hookBodies)) {
      await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: `deliveries/${twoHooks}-${hook}`, Body: body }),
      );
    }
    client.destroy();
    hooksTable = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(fixture.endpoint, TableDefinitions.deliveries, hooksTable);
    const hooksLog = new DeliveryLog({ client: fixture.ddb.client(), tableName: hooksTable });
    for (const [hook, body] of Object.entries(hookBodies)) {
      const written = await hooksLog.record(
        entry({
          deliveryId: twoHooks,
          forge: 'github',
          source: 'github',
          hook,
          receivedAt: Date.now() - (hook === '1101' ? 20 : 10) * MINUTE,
          payloadRef: {
            bucket: BUCKET,
            key: `deliveries/${twoHooks}-${hook}`,
            bytes: body.byteLength,
            sha256: createHash('sha256').update(body).digest('hex'),
          },
        }),
      );
      expect(written).toMatchObject({ ok: true });
    }
    const log = new DeliveryLog({ client: fixture.ddb.client(), tableName: fixture.tableName });
    const recorded = await log.record(
      entry({
        deliveryId: claimed,
        receivedAt: Date.now() - 30 * MINUTE,
        payloadRef: {
          bucket: BUCKET,
          key: `deliveries/${claimed}`,
          bytes: claimBody.byteLength,
          sha256: createHash('sha256').update(claimBody).digest('hex'),
        },
      }),
    );
    expect(recorded).toMatchObject({ ok: true });
    awsEnv = {
      // s3rver's own credentials; DynamoDB Local (sharedDb) and the local bus take any.
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL_DYNAMODB: fixture.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
      AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${fixture.closedPort}`,
    };
  });
  afterAll(async () => {
    await bus?.close();
    await s3?.stop();
  });

  it('lists and shows the stage table', async () => {
    const list = await cli(
      ['deliveries', '--stage', 'dev', '--table', fixture.tableName, '--status', 'rejected', '--json'],
      awsEnv,
    );
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { deliveryId: string }[]).map((record) => record.deliveryId)).toEqual([
      ids.failed,
    ]);
    const show = await cli(['show', claimed, '--stage', 'dev', '--table', fixture.tableName], awsEnv);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`delivery  ${claimed}`);
    expect(show.stdout).toContain(`s3://${BUCKET}/deliveries/${claimed}`);
  });

  it('re-publishes a claim-checked delivery onto the bus, as text and as JSON with a fresh id', async () => {
    const result = await cli(['replay', claimed, '--stage', 'dev', '--table', fixture.tableName], awsEnv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^published {2}issues\\.opened {2}delivery ${claimed} {2}event \\S+ on forgebridge-dev, from s3://${BUCKET}/`,
      ),
    );
    expect(bus.received.get(claimed)).toBe(1);
    const json = await cli(
      [
        'replay',
        claimed,
        '--stage',
        'dev',
        '--table',
        fixture.tableName,
        '--fresh-id',
        '--json',
        '--bus',
        'other-bus',
      ],
      awsEnv,
    );
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout) as {
      mode: string;
      delivery: string;
      replayOf: string;
      entry: { EventBusName: string; Detail: { delivery: string } };
    };
    expect(answer).toMatchObject({
      mode: 'republish',
      replayOf: claimed,
      entry: { EventBusName: 'other-bus' },
    });
    expect(answer.delivery).not.toBe(claimed);
    expect(answer.entry.Detail.delivery).toBe(answer.delivery);
    expect(bus.received.get(answer.delivery)).toBe(1);
  });

  it("re-publishes one hook's claim-checked record with --hook: detail.hook says which, and no hook is guessed", async () => {
    const args = ['replay', twoHooks, '--source', 'github', '--stage', 'dev', '--table', hooksTable];
    expectOneLineError(
      await cli(args, awsEnv),
      2,
      `delivery ${twoHooks} came from 2 hooks (1101, 2202): pass --hook`,
    );
    expect(bus.received.get(twoHooks)).toBeUndefined();
    const text = await cli([...args, '--hook', '2202'], awsEnv);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^published {2}issues\\.opened {2}delivery ${twoHooks} {2}hook 2202 {2}event \\S+ on forgebridge-dev, from s3://${BUCKET}/deliveries/${twoHooks}-2202\\n$`,
      ),
    );
    expect(JSON.parse(bus.details.get(twoHooks) as string)).toMatchObject({
      delivery: twoHooks,
      source: 'github',
      hook: '2202',
      payload: { installation: { id: 502 } },
      payloadRef: { key: `deliveries/${twoHooks}-2202` },
    });
    const json = await cli([...args, '--hook', '1101', '--json'], awsEnv);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      mode: 'republish',
      delivery: twoHooks,
      hook: '1101',
      entry: { Detail: { hook: '1101', payload: { installation: { id: 501 } } } },
    });
    expect(JSON.parse(bus.details.get(twoHooks) as string)).toMatchObject({ hook: '1101' });
    expect(bus.received.get(twoHooks)).toBe(2);
  });

  it('needs an archive for a delivery without a claim check, and says what the bus refuses in one line', async () => {
    const args = ['replay', ids.failed, '--stage', 'dev', '--table', fixture.tableName];
    expectOneLineError(
      await cli(args, awsEnv),
      2,
      `delivery "${ids.failed}" has no claim check: pass "--archive <arn>"`,
    );
    const archive = 'arn:aws:events:us-east-1:123456789012:archive/forgebridge-dev';
    expectOneLineError(
      await cli([...args, '--archive', archive, '--fresh-id'], awsEnv),
      2,
      '"--fresh-id" needs a claim-checked delivery',
    );
    expectOneLineError(
      await cli([...args, '--archive', 'arn:aws:s3:::bucket'], awsEnv),
      2,
      '"--archive" must be an EventBridge archive ARN',
    );
    // The local bus serves PutEvents only: StartReplay is refused, and said so in one line.
    expectOneLineError(
      await cli([...args, '--archive', archive, '--no-wait'], awsEnv),
      1,
      /^forgebridge: replay failed: UnknownOperationException: only PutEvents is served here$/,
    );
  });

  it('says a missing region, an unreachable CloudFormation and missing credentials in one line', async () => {
    const { AWS_REGION: _region, ...noRegion } = awsEnv;
    expectOneLineError(
      await cli(['deliveries', '--stage', 'dev'], noRegion),
      2,
      'missing AWS region: pass "--region"',
    );
    expectOneLineError(
      await cli(['deliveries', '--stage', 'dev'], awsEnv),
      3,
      /^forgebridge: could not reach AWS \(stack "forgebridge-dev"\): connection refused$/,
    );
    expectOneLineError(
      await cli(['deliveries', '--stage', 'dev', '--stack', 'mine', '--region', 'eu-west-1']),
      2,
      'AWS credentials not found for stack "mine"',
    );
  });
});
