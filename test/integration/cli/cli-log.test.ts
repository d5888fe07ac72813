// The `forgebridge` delivery-log commands run as a process (the pinned node and bin/forgebridge.js): `deliveries`,
// `show` and `replay` against DynamoDB Local holding records written through DeliveryLog.record (the table of
// infra/tables.ts), replays to a real node:http receiver on 127.0.0.1 verifying each delivery with
// lib/webhooks' readDelivery, and `dev --proxy` relaying a local proxy channel (test/helpers/sse-server.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import {
  type DeliveryResult,
  deliveryHeaders,
  type Forge,
  readDelivery,
} from '../../../lib/webhooks/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import {
  BIN,
  cleanCliEnv,
  expectOneLineError,
  closedPort as freePort,
  NO_AWS_CREDENTIALS,
  NODE,
  type Run,
  runCli,
} from '../../helpers/cli.js';
import { type SseServer, startSseServer } from '../../helpers/sse-server.js';

const SECRET = 'cli-log-test-secret-81c4';

const ddb = useDynamoDbLocal();

/** The CLI's environment: no colours, no local stack or AWS settings of the machine running the tests. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cleanCliEnv();
  Object.assign(env, NO_AWS_CREDENTIALS, extra);
  return env;
}

function run(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return runCli(args, cliEnv(extra));
}

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  result: DeliveryResult;
}

let server: Server;
let base: string;
let received: Received[] = [];
let tableName: string;
let endpoint: string;
let log: DeliveryLog;
/** A port nothing listens on. */
let closedPort: number;

/** Runs a log command against the test table on DynamoDB Local. */
function runLog(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return run([...args, '--endpoint', endpoint, '--table', tableName], extra);
}

const MINUTE = 60_000;
const issuesBody = Buffer.from('{"action":"opened","issue":{"number":7,"title":"caf\\u00e9"},  "zeta":1}\n');
const ids = {
  opened: randomUUID(),
  failed: randomUUID(),
  old: randomUUID(),
  gitea: randomUUID(),
  refused: randomUUID(),
  noPayload: randomUUID(),
};

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

beforeAll(async () => {
  endpoint = ddb.endpoint;
  tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(endpoint, TableDefinitions.deliveries, tableName);
  log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
  const now = Date.now();
  const signed = deliveryHeaders(SECRET, issuesBody, { name: 'issues', id: ids.opened });
  const asReceived = {
    ...signed,
    'user-agent': 'GitHub-Hookshot/044aadd',
    'x-custom-header': 'kept as is',
    host: 'localhost:3000',
  };
  const records: DeliveryLogEntry[] = [
    entry({
      deliveryId: ids.opened,
      receivedAt: now - 2 * MINUTE,
      eventId: 'event-opened-1',
      headers: {
        ...signed,
        'user-agent': 'GitHub-Hookshot/044aadd',
        'x-custom-header': 'kept as is',
        host: 'localhost:3000',
      },
      body: issuesBody,
    }),
    entry({
      deliveryId: ids.opened,
      receivedAt: now - MINUTE,
      httpStatus: 200,
      outcome: 'duplicate',
      headers: asReceived,
      body: issuesBody,
    }),
    entry({
      deliveryId: ids.failed,
      receivedAt: now - 3 * MINUTE,
      event: 'push',
      action: undefined,
      verdict: 'bad_signature',
      reason: 'signature does not match',
      diagnosis: [
        {
          code: 'wrong_secret',
          message: 'the signature was made with another secret than every configured one',
        },
      ],
      httpStatus: 401,
      outcome: 'rejected',
      headers: {
        'x-forge-event': 'push',
        'x-forge-delivery': ids.failed,
        'x-hub-signature-256': 'sha256=0123456789abcdef',
      },
      body: '{"ref":"refs/heads/main"}',
    }),
    entry({
      deliveryId: ids.old,
      receivedAt: now - 3 * 60 * MINUTE,
      event: 'pull_request',
      action: 'closed',
    }),
    entry({
      deliveryId: ids.gitea,
      receivedAt: now - 4 * MINUTE,
      forge: 'gitea',
      source: 'gitea',
      event: 'push',
      action: undefined,
      nativeEvent: 'push',
      headers: {
        ...deliveryHeaders(SECRET, '{"ref":"refs/heads/dev"}', {
          forge: 'gitea',
          name: 'push',
          id: ids.gitea,
        }),
      },
      body: '{"ref":"refs/heads/dev"}',
    }),
    entry({ deliveryId: ids.noPayload, receivedAt: now - 5 * MINUTE, headers: signed }),
  ];
  for (const record of records) expect(await log.record(record)).toMatchObject({ ok: true });
  await log.recordSubscriber(ids.opened, { subscriber: 'onIssuesOpened', outcome: 'ok', durationMs: 42 });
  await log.recordSubscriber(ids.opened, {
    subscriber: 'auditTrail',
    outcome: 'error',
    durationMs: 7,
    error: { name: 'TypeError', message: 'boom' },
  });

  // `/hooks/<forge>` verifies with that forge's preset and the test secret.
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const [, , forge = 'generic'] = (request.url ?? '').split('/');
      const body = Buffer.concat(chunks);
      const result = readDelivery(
        { method: request.method ?? 'POST', headers: request.headers, body },
        { secret: SECRET, forge: forge as Forge },
      );
      received.push({ url: request.url ?? '', headers: request.headers, body, result });
      response
        .writeHead(result.ok ? 202 : result.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(result.ok ? { accepted: true, id: result.id } : { error: result.code }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closedPort = await freePort();
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

beforeEach(() => {
  received = [];
});

describe('--help of the delivery-log commands', () => {
  it.each([
    [
      'deliveries',
      ['--event <event[.action]>', '--status <outcome>', '--since <when>', '--stage <name>', '--json'],
    ],
    ['show', ['<delivery-id>', '--source <name>', '--body', '--table <name>']],
    ['replay', ['<delivery-id>', '--fresh-id', '--archive <arn>', '--rule <arn>', '--no-wait']],
    ['dev', ['--proxy <channel-url>', '--forge <forge>', '--url <url>']],
  ])('%s --help', async (command, expected) => {
    const result = await run([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(new RegExp(`^Usage: forgebridge ${command} `));
    for (const text of expected) expect(result.stdout).toContain(text);
  });

  it('the program help lists them', async () => {
    const result = await run(['--help']);
    for (const text of [
      'deliveries [options]',
      'show [options] <delivery-id>',
      'replay [options] <delivery-id>',
      'dev [options]',
    ]) {
      expect(result.stdout).toContain(text);
    }
  });
});

describe('forgebridge deliveries', () => {
  it('lists the last day newest first, as a table with the outcome, verdict and subscribers', async () => {
    const result = await runLog(['deliveries']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^TIME\s+EVENT\s+DELIVERY\s+SOURCE\s+HTTP\s+VERDICT\s+OUTCOME\s+SUBSCRIBERS$/);
    const order = [ids.opened, ids.opened, ids.failed, ids.gitea, ids.noPayload, ids.old];
    const rows = lines.filter((line) => Object.values(ids).some((id) => line.includes(id)));
    expect(rows.map((line) => Object.values(ids).find((id) => line.includes(id)))).toEqual(order);
    expect(rows[0]).toMatch(/issues\.opened\s+\S+\s+default\s+200\s+verified\s+duplicate\s+1 ok, 1 error$/);
    expect(rows[2]).toMatch(/push\s+\S+\s+default\s+401\s+bad_signature\s+rejected\s+-$/);
    expect(result.stdout).toContain('6 deliveries, newest first');
  });

  it('filters by event, status and --since, and prints JSON records', async () => {
    const opened = await runLog(['deliveries', '--event', 'issues.opened', '--json']);
    expect(opened.code).toBe(0);
    const records = JSON.parse(opened.stdout) as {
      deliveryId: string;
      outcome: string;
      receivedAtIso: string;
    }[];
    expect(records.map((record) => record.deliveryId)).toEqual([ids.opened, ids.opened, ids.noPayload]);
    expect(records[0]?.receivedAtIso).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const rejected = JSON.parse((await runLog(['deliveries', '--status', 'rejected', '--json'])).stdout) as {
      deliveryId: string;
    }[];
    expect(rejected.map((record) => record.deliveryId)).toEqual([ids.failed]);

    const recent = JSON.parse((await runLog(['deliveries', '--since', '150s', '--json'])).stdout) as {
      deliveryId: string;
    }[];
    expect(recent.map((record) => record.deliveryId)).toEqual([ids.opened, ids.opened]);

    const since = `${new Date(Date.now() - 4 * 60 * MINUTE).toISOString().slice(0, 16)}Z`;
    const all = JSON.parse(
      (await runLog(['deliveries', '--since', since, '--source', 'default', '--json'])).stdout,
    ) as unknown[];
    expect(all).toHaveLength(5);
  });

  it('says so when nothing matches', async () => {
    const result = await runLog(['deliveries', '--event', 'release']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^no deliveries in the log of the local stack/);
  });

  it('refuses bad input and an unreachable log in one line', async () => {
    expectOneLineError(
      await runLog(['deliveries', '--since', 'yesterday']),
      2,
      /"--since" must be a duration/,
    );
    expectOneLineError(
      await runLog(['deliveries', '--status', 'lost']),
      2,
      /"--status <outcome>" argument "lost" is invalid/,
    );
    expectOneLineError(
      await runLog(['deliveries', '--limit', '0']),
      2,
      /"--limit" must be an integer from 1 to 1000/,
    );
    expectOneLineError(
      await run(['deliveries', '--endpoint', `http://127.0.0.1:${closedPort}`, '--table', tableName]),
      3,
      `could not reach http://127.0.0.1:${closedPort}: connection refused`,
    );
    expectOneLineError(
      await run(['deliveries', '--endpoint', endpoint, '--table', 'no-such-table']),
      3,
      'delivery log table "no-such-table" not found (local stack)',
    );
    expectOneLineError(await run(['deliveries']), 3, /the local stack is not running/);
    expectOneLineError(
      await run([
        'deliveries',
        '--stage',
        'dev',
        '--table',
        'forgebridge-dev-deliveries',
        '--region',
        'eu-west-1',
      ]),
      2,
      'AWS credentials not found for stage "dev"',
    );
  });
});

describe('forgebridge show', () => {
  it('shows every request, the subscribers, the masked headers and on request the payload', async () => {
    const result = await runLog(['show', ids.opened, '--body']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`delivery  ${ids.opened}`);
    expect(result.stdout).toMatch(/event\s+issues\.opened/);
    expect(result.stdout).toMatch(
      /requests \(2, newest first\)\n.*200\s+verified\s+duplicate.*\n.*202\s+verified\s+published.*event event-opened-1/,
    );
    expect(result.stdout).toMatch(/auditTrail\s+error\s+7 ms\s+TypeError: boom/);
    expect(result.stdout).toMatch(/onIssuesOpened\s+ok\s+42 ms/);
    expect(result.stdout).toContain('x-hub-signature-256: sha256=[masked]');
    expect(result.stdout).toContain('x-custom-header: kept as is');
    expect(result.stdout).toContain('"title": "café"');
    expect(result.stdout).not.toContain(SECRET);
  });

  it('shows a failed signature with its diagnosis', async () => {
    const result = await runLog(['show', ids.failed]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/401\s+bad_signature\s+rejected/);
    expect(result.stdout).toContain('reason signature does not match');
    expect(result.stdout).toContain('- the signature was made with another secret than every configured one');
    expect(result.stdout).not.toContain('0123456789abcdef');
  });

  it('prints JSON with the exact body', async () => {
    const result = await runLog(['show', ids.opened, '--json']);
    const details = JSON.parse(result.stdout) as {
      deliveryId: string;
      source: string;
      subscribers: Record<string, { outcome: string }>;
      records: { outcome: string; body: string; headers: Record<string, string> }[];
    };
    expect(details.deliveryId).toBe(ids.opened);
    expect(details.source).toBe('default');
    expect(details.records.map((record) => record.outcome)).toEqual(['duplicate', 'published']);
    expect(Buffer.from(details.records[1]?.body ?? '', 'utf8').equals(issuesBody)).toBe(true);
    expect(details.subscribers.auditTrail?.outcome).toBe('error');
  });

  it('finds a delivery of another source with --source, and says an unknown id in one line', async () => {
    expect((await runLog(['show', ids.gitea, '--source', 'gitea'])).stdout).toMatch(/forge\s+gitea/);
    expectOneLineError(
      await runLog(['show', ids.gitea]),
      2,
      `no delivery "${ids.gitea}" in the log of the local stack`,
    );
    expectOneLineError(
      await runLog(['show', 'no-such-delivery']),
      2,
      'no delivery "no-such-delivery" in the log',
    );
    expectOneLineError(
      await runLog(['show', 'x'.repeat(300)]),
      2,
      /"<delivery-id>" must be 1 to 256 visible ascii/,
    );
  });
});

describe('forgebridge replay (local)', () => {
  it('re-sends the exact body and headers, signed again, with the same delivery id', async () => {
    const result = await runLog(['replay', ids.opened, '--url', `${base}/hooks/generic`, '--secret', SECRET]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/hooks\/generic {2}issues\.opened/);
    expect(result.stdout).toContain('202 Accepted');
    expect(received).toHaveLength(1);
    const [got] = received as [Received];
    expect(got.result).toMatchObject({ ok: true, id: ids.opened, name: 'issues' });
    expect(got.body.equals(issuesBody)).toBe(true);
    const signed = deliveryHeaders(SECRET, issuesBody, { name: 'issues', id: ids.opened });
    const asReceived = {
      ...signed,
      'user-agent': 'GitHub-Hookshot/044aadd',
      'x-custom-header': 'kept as is',
      host: 'localhost:3000',
    };
    // Every header as the forge sent it (the signatures made again with the same secret are the same values),
    // but the transport's own host.
    const { host, ...sent } = asReceived;
    for (const [name, value] of Object.entries(sent)) expect(got.headers[name]).toBe(value);
    expect(got.headers.host).not.toBe(host);
    expect(got.headers['x-custom-header']).toBe('kept as is');
  });

  it('sends a fresh delivery id with --fresh-id, and prints JSON', async () => {
    const result = await runLog([
      'replay',
      ids.opened,
      '--fresh-id',
      '--json',
      '--url',
      `${base}/hooks/generic`,
      '--secret',
      SECRET,
    ]);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as {
      request: { delivery: string; replayOf: string };
      response: { status: number };
    };
    expect(answer.request.replayOf).toBe(ids.opened);
    expect(answer.request.delivery).not.toBe(ids.opened);
    expect(answer.response.status).toBe(202);
    expect(received[0]?.result).toMatchObject({ ok: true, id: answer.request.delivery });
    expect(received[0]?.body.equals(issuesBody)).toBe(true);
  });

  it("signs as the record's forge", async () => {
    const result = await runLog([
      'replay',
      ids.gitea,
      '--source',
      'gitea',
      '--url',
      `${base}/hooks/gitea`,
      '--secret',
      SECRET,
    ]);
    expect(result.code).toBe(0);
    expect(received[0]?.result).toMatchObject({ ok: true, id: ids.gitea });
    expect(received[0]?.headers['x-gitea-delivery']).toBe(ids.gitea);
    expect(received[0]?.body.toString()).toBe('{"ref":"refs/heads/dev"}');
  });

  it('exits 1 on a refused replay, and says what is missing in one line', async () => {
    const refused = await runLog([
      'replay',
      ids.opened,
      '--url',
      `${base}/hooks/generic`,
      '--secret',
      'another-secret',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('401');
    expectOneLineError(
      await runLog(['replay', ids.noPayload, '--url', `${base}/hooks/generic`, '--secret', SECRET]),
      1,
      `the log holds no payload of delivery "${ids.noPayload}" (absent)`,
    );
    expectOneLineError(
      await runLog(['replay', 'unknown-id', '--url', base, '--secret', SECRET]),
      2,
      'no delivery "unknown-id"',
    );
    expectOneLineError(
      await runLog([
        'replay',
        ids.opened,
        '--url',
        `http://127.0.0.1:${closedPort}/webhooks`,
        '--secret',
        SECRET,
      ]),
      3,
      `could not reach http://127.0.0.1:${closedPort}/webhooks: connection refused`,
    );
    expect(received.filter((got) => got.result.ok)).toHaveLength(0);
  });
});

describe('forgebridge dev --proxy', () => {
  let channel: SseServer;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    channel = await startSseServer({ bodyAs: 'string' });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await channel.close();
  });

  it('relays each delivery into the ingest URL, one line each, and stops cleanly on Ctrl-C', async () => {
    const proc = spawn(NODE, [BIN, 'dev', '--proxy', channel.url, '--url', `${base}/hooks/generic`], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const until = async (check: () => boolean, what: string) => {
      for (let waited = 0; !check(); waited += 50) {
        if (waited > 15_000) throw new Error(`timed out waiting for ${what}: ${stdout} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until(() => stdout.includes('relaying'), 'the relay to start');
    expect(stdout).not.toContain(channel.url);

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
    await until(() => stdout.includes(wrongId), 'two relayed deliveries');

    expect(received).toHaveLength(2);
    expect(received[0]?.result).toMatchObject({ ok: true, id, name: 'issues' });
    expect(received[0]?.body.toString()).toBe(body);
    expect(received[1]?.result).toMatchObject({ ok: false });
    const lines = stdout.split('\n');
    expect(lines.find((line) => line.includes(id))).toMatch(
      /issues {2}\S+ {2}\d+ B {2}-> 202 Accepted {2}\d+ ms$/,
    );
    expect(lines.find((line) => line.includes(wrongId))).toMatch(/-> 401 Unauthorized/);

    proc.kill('SIGINT');
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(stdout).toMatch(/SIGINT: stopped, 2 deliveries relayed\n$/);
    expect(stderr).toBe('');
  });

  it('refuses a channel that is not a URL and an unreachable one in one line', async () => {
    expectOneLineError(
      await run(['dev', '--proxy', 'smee.io/abc']),
      2,
      '"--proxy" must be an http or https URL',
    );
    expectOneLineError(await run(['dev']), 2, /"--proxy <channel-url>" not specified/);
    expectOneLineError(
      await run(['dev', '--proxy', `http://127.0.0.1:${closedPort}/channel`, '--url', base]),
      3,
      /^forgebridge: could not open the proxy channel at http:\/\/127\.0\.0\.1:\d+\/…: proxy channel connection lost/,
    );
  });
});
