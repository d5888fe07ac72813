// The `forgebridge` CLI's scenarios, written once and run by both runners: cli.test.ts and cli-log.test.ts run
// the CLI as a process (the pinned node and bin/forgebridge.js), in-process.test.ts calls `main(argv)` in the test
// process so that the suite's coverage sees lib/cli. Each runner adds what only it can check (stdin and real
// signals for the process; a terminal, the Ctrl-C handler and a deployed stage for the in-process one).
//
// The real parts: a node:http receiver on 127.0.0.1 verifying every delivery with lib/webhooks' readDelivery
// (`/hooks/<forge>` with that forge's preset; `/hooks/<forge>/other-secret` with another secret; `/plain` answers
// 500 in plain text, `/empty` with no body, `/slow` after 1.5 s), and, for the log commands, DynamoDB Local
// holding records written through DeliveryLog.record in the table of infra/tables.ts.
import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it as vitestIt } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import {
  type DeliveryResult,
  deliveryHeaders,
  type Forge,
  Forges,
  readDelivery,
} from '../../../lib/webhooks/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { expectOneLineError, closedPort as freePort, type Run } from '../../helpers/cli.js';

/**
 * The scenarios a file runs: every one, unless it named a sample with {@link sampleScenarios}. in-process.test.ts runs
 * every scenario; the files that run the CLI as a process (a few seconds a start) run a sample of each command and
 * what only a process shows (exit codes, the two streams, one line and no stack trace on bad input).
 */
let sample: Set<string> | undefined;
const registered = new Set<string>();

/**
 * Runs only the scenarios named here in this file, or every one (`'all'`); {@link sampleFound} then checks that each
 * named one exists. Every file that runs scenarios calls it first: the integration files of a worker share their
 * modules (vitest's `isolate: false`), so the previous file's choice would hold otherwise.
 */
export function sampleScenarios(names: readonly string[] | 'all'): void {
  sample = names === 'all' ? undefined : new Set(names);
  registered.clear();
}

/** A test that fails when a sampled name matches no scenario (a renamed one would otherwise drop out unseen). */
export function sampleFound(): void {
  describe('the sample of scenarios', () => {
    vitestIt('names only scenarios that exist', () => {
      expect(sample).toBeDefined();
      expect([...(sample ?? [])].filter((name) => !registered.has(name))).toEqual([]);
    });
  });
}

function selected(name: string): boolean {
  registered.add(name);
  return sample === undefined || sample.has(name);
}

type Scenario<Args extends unknown[]> = (
  name: string,
  fn: (...args: Args) => Promise<void>,
  timeout?: number,
) => void;

/** `it.each` in its printf form, for the selected cases only. */
function each<A extends string>(cases: readonly A[]): Scenario<[A]>;
function each<A, B>(cases: readonly (readonly [A, B])[]): Scenario<[A, B]>;
function each(cases: readonly (string | readonly unknown[])[]): Scenario<unknown[]> {
  return (name, fn, timeout) => {
    for (const value of cases) {
      const args = typeof value === 'string' ? [value] : [...value];
      let next = 0;
      // A plain case stands for every `%s`; a tuple's items fill them in turn.
      const named = name.replaceAll('%s', () => String(typeof value === 'string' ? value : args[next++]));
      if (selected(named)) vitestIt(named, () => fn(...args), timeout);
    }
  };
}

/** vitest's `it` (and {@link each}) for the selected scenarios only. */
const it = Object.assign(
  (name: string, fn: () => Promise<void>, timeout?: number) => {
    if (selected(name)) vitestIt(name, fn, timeout);
  },
  { each },
);

export const SECRET = 'cli-test-secret-5b2e';
export const MINUTE = 60_000;

/** Runs `forgebridge <args>` with `env` over a clean environment (no colours, no forgebridge or AWS settings). */
export type CliRunner = (args: string[], env?: Record<string, string>) => Promise<Run>;

/** One request the receiver got. */
export interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  result: DeliveryResult;
}

export const issuesBody = Buffer.from(
  '{"action":"opened","issue":{"number":7,"title":"caf\\u00e9"},  "zeta":1}\n',
);
/** The delivery ids of the log's records. */
export const ids = {
  opened: randomUUID(),
  failed: randomUUID(),
  old: randomUUID(),
  gitea: randomUUID(),
  noPayload: randomUUID(),
};
/** The headers the forge sent with `ids.opened`, as the log keeps them (masked when read back). */
const openedHeaders = {
  ...deliveryHeaders(SECRET, issuesBody, { name: 'issues', id: ids.opened }),
  'user-agent': 'GitHub-Hookshot/044aadd',
  'x-custom-header': 'kept as is',
  host: 'localhost:3000',
};

/** A log record of a verified issues.opened delivery, with `overrides`. */
export function entry(overrides: Partial<DeliveryLogEntry>): DeliveryLogEntry {
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

/** The records every log scenario reads: two requests of one delivery, a refused one, an old one, ... */
function records(now: number): DeliveryLogEntry[] {
  return [
    entry({
      deliveryId: ids.opened,
      receivedAt: now - 2 * MINUTE,
      eventId: 'event-opened-1',
      headers: openedHeaders,
      body: issuesBody,
    }),
    entry({
      deliveryId: ids.opened,
      receivedAt: now - MINUTE,
      httpStatus: 200,
      outcome: 'duplicate',
      headers: openedHeaders,
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
      headers: deliveryHeaders(SECRET, '{"ref":"refs/heads/dev"}', {
        forge: 'gitea',
        name: 'push',
        id: ids.gitea,
      }),
      body: '{"ref":"refs/heads/dev"}',
    }),
    entry({
      deliveryId: ids.noPayload,
      receivedAt: now - 5 * MINUTE,
      headers: deliveryHeaders(SECRET, issuesBody, { name: 'issues', id: ids.opened }),
    }),
  ];
}

let server: Server;
let base: string;
let received: Received[] = [];
let tmp: string;
let closedPort: number;
let endpoint: string;
let tableName: string;
let ddb: ReturnType<typeof useDynamoDbLocal> | undefined;
/** When the log's records were written: their times are this minus a few minutes. */
let recordedAt: number;

/** What the scenarios run against, for a runner's own tests (read inside a test or hook: set in `beforeAll`). */
export const fixture = {
  /** `http://127.0.0.1:<port>` of the receiver. */
  get base(): string {
    return base;
  },
  /** What the receiver got since the current test began. */
  get received(): Received[] {
    return received;
  },
  /** A folder of this file's own, removed at the end. */
  get tmp(): string {
    return tmp;
  },
  /** A port nothing listens on. */
  get closedPort(): number {
    return closedPort;
  },
  /** DynamoDB Local's endpoint and the log's table (with `log: true`). */
  get endpoint(): string {
    return endpoint;
  },
  get tableName(): string {
    return tableName;
  },
  get ddb(): ReturnType<typeof useDynamoDbLocal> {
    if (ddb === undefined) throw new Error('useCliFixture({ log: true }) starts DynamoDB Local');
    return ddb;
  },
};

/** Writes `content` into a file of the fixture's folder and returns its path. */
export function file(name: string, content: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

/** Starts the receiver (and with `log`, DynamoDB Local and the log's table with its records) around the file. */
export function useCliFixture(options: { log: boolean }): void {
  if (options.log) ddb = useDynamoDbLocal();
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'forgebridge-cli-'));
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const [, , forge = 'generic', other] = (request.url ?? '').split('/');
        const body = Buffer.concat(chunks);
        const result = readDelivery(
          { method: request.method ?? 'POST', headers: request.headers, body },
          { secret: other === 'other-secret' ? 'not-the-cli-secret' : SECRET, forge: forge as Forge },
        );
        received.push({ url: request.url ?? '', headers: request.headers, body, result });
        if (other === 'plain') {
          response.writeHead(500, { 'content-type': 'text/plain' }).end('not json at all');
          return;
        }
        if (other === 'empty') {
          response.writeHead(result.ok ? 204 : result.status).end();
          return;
        }
        if (other === 'slow') {
          setTimeout(() => response.writeHead(202).end(), 1_500);
          return;
        }
        const answer = result.ok
          ? { accepted: true, id: result.id, name: result.name, action: result.action }
          : { error: result.code, message: result.message };
        response
          .writeHead(result.ok ? 202 : result.status, { 'content-type': 'application/json' })
          .end(JSON.stringify(answer));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closedPort = await freePort();
    if (ddb === undefined) return;
    endpoint = ddb.endpoint;
    tableName = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(endpoint, TableDefinitions.deliveries, tableName);
    const log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
    recordedAt = Date.now();
    for (const record of records(recordedAt)) expect(await log.record(record)).toMatchObject({ ok: true });
    await log.recordSubscriber(ids.opened, {
      subscriber: 'onIssuesOpened',
      outcome: 'ok',
      durationMs: 42,
      forgeWaitMs: 30,
    });
    await log.recordSubscriber(ids.opened, {
      subscriber: 'auditTrail',
      outcome: 'error',
      durationMs: 7,
      error: { name: 'TypeError', message: 'boom' },
    });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });

  beforeEach(() => {
    received = [];
  });
}

/** Every command's usage line in the program's help, and what its own help must name. */
export const COMMANDS = {
  send: {
    usage: 'send [options] <event[.action]>',
    options: [
      '--file <payload.json>',
      '--url <url>',
      '--secret <secret>',
      '--forge <forge>',
      '--source <name>',
      '--id <delivery-id>',
      '--native-event <name>',
      '--timeout <ms>',
      '--json',
    ],
  },
  rules: {
    usage: 'rules [options] <event[.action]>',
    options: [
      '--forge <forge>',
      '--event-source <source>',
      '--function <name>',
      '--handler <path>',
      '--json',
    ],
  },
  verify: {
    usage: 'verify [options] [file|-]',
    options: [
      '--secret <secret>',
      '--signature <value>',
      '--header <name: value>',
      '--forge <forge>',
      '--no-sha1',
      'never printed',
      '--json',
    ],
  },
  deliveries: {
    usage: 'deliveries [options]',
    options: ['--event <event[.action]>', '--status <outcome>', '--since <when>', '--stage <name>', '--json'],
  },
  show: {
    usage: 'show [options] <delivery-id>',
    options: ['<delivery-id>', '--source <name>', '--body', '--table <name>'],
  },
  replay: {
    usage: 'replay [options] [delivery-id]',
    options: [
      '[delivery-id]',
      '--fresh-id',
      '--archive <arn>',
      '--rule <arn>',
      '--no-wait',
      '--since <time>',
      '--subscriber <name>',
      '--outcome <outcome>',
      '--dry-run',
      '--yes',
      '--rate <n>',
    ],
  },
  dev: { usage: 'dev [options]', options: ['--proxy <channel-url>', '--forge <forge>', '--url <url>'] },
  connect: {
    usage: 'connect [options]',
    options: [
      '--check',
      '--token-env <name>',
      '--dry-run',
      '--all-events',
      'github [options]',
      'gitlab [options]',
    ],
  },
} as const;

export type Command = keyof typeof COMMANDS;

/** The program's help, each command's help (`<command> --help` and `help <command>`) and the version. */
export function helpScenarios(cli: CliRunner, commands: readonly Command[]): void {
  describe('help and version', () => {
    it('lists the commands and the exit codes, without colours', async () => {
      const result = await cli(['--help']);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: forgebridge \[options\] \[command\]/);
      for (const command of commands) expect(result.stdout).toContain(COMMANDS[command].usage);
      expect(result.stdout).toContain('Exit codes: 0 done');
      expect(result.stdout).not.toContain('\u001b[');
    });

    it.each(commands)('%s --help and help %s', async (command) => {
      for (const args of [
        [command, '--help'],
        ['help', command],
      ]) {
        const result = await cli(args);
        expect(result.code).toBe(0);
        expect(result.stderr).toBe('');
        expect(result.stdout).toMatch(new RegExp(`^Usage: forgebridge ${command} `));
        for (const option of COMMANDS[command].options) expect(result.stdout).toContain(option);
        expect(result.stdout).toContain('-h, --help');
      }
    });

    it('prints the package version', async () => {
      const result = await cli(['--version']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
    });

    it('the bare program prints its help on stderr and exits 2', async () => {
      const result = await cli([]);
      expect(result.code).toBe(2);
      expect(result.stdout + result.stderr).toContain('Usage: forgebridge [options] [command]');
    });
  });
}
/** The event header's value of each forge's own sample of issues.opened. */
const NATIVE_ISSUES_OPENED: Record<Forge, string> = {
  generic: 'issues',
  github: 'issues',
  gitea: 'issues',
  forgejo: 'issues',
  gitlab: 'Issue Hook',
  bitbucket: 'issue:created',
  // A Standard Webhooks delivery names its event in the payload's type.
  standard: 'issues.opened',
  svix: 'issues.opened',
};

/** send: a signed sample or file to a receiver, and what it answered. */
export function sendScenarios(cli: CliRunner): void {
  describe('send', () => {
    it.each(Forges)('signs a catalogue sample as %s does and the receiver verifies it', async (forge) => {
      const id = `cli-${forge}-1`;
      const result = await cli([
        'send',
        'issues.opened',
        '--url',
        `${base}/hooks/${forge}`,
        '--secret',
        SECRET,
        '--forge',
        forge,
        '--id',
        id,
      ]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`POST ${base}/hooks/${forge}  issues.opened  ${forge}, delivery ${id}`);
      expect(result.stdout).toContain('202 Accepted');
      expect(received).toHaveLength(1);
      const [delivery] = received as [Received];
      // Each forge's own sample: its own event name, routed to the catalogue's issues.opened.
      expect(delivery.result).toMatchObject({
        ok: true,
        id,
        name: 'issues',
        action: 'opened',
        nativeName: NATIVE_ISSUES_OPENED[forge],
      });
      expect(delivery.headers['user-agent']).toMatch(/^forgebridge-cli\//);
      // Each forge's own signature header, signed its way.
      const expectedHeader = {
        generic: 'x-hub-signature-256',
        github: 'x-hub-signature-256',
        gitea: 'x-gitea-signature',
        forgejo: 'x-forgejo-signature',
        gitlab: 'x-gitlab-token',
        bitbucket: 'x-hub-signature',
        standard: 'webhook-signature',
        svix: 'svix-signature',
      }[forge];
      expect(delivery.headers[expectedHeader]).toBeDefined();
    });

    it('exits 1 when the receiver has another secret, and shows its JSON answer', async () => {
      const result = await cli([
        'send',
        'push',
        '--url',
        `${base}/hooks/github/other-secret`,
        '--secret',
        SECRET,
        '--forge',
        'github',
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('401 Unauthorized');
      expect(result.stdout).toContain('"error": "invalid_signature"');
      expect(received[0]?.result.ok).toBe(false);
    });

    it('shows an answer that is not JSON as it is', async () => {
      const result = await cli(['send', 'push', '--url', `${base}/hooks/generic/plain`, '--secret', SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('500 Internal Server Error');
      expect(result.stdout).toContain('not json at all');
      const json = await cli([
        'send',
        'push',
        '--url',
        `${base}/hooks/generic/plain`,
        '--secret',
        SECRET,
        '--json',
      ]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        response: { status: 500, ok: false, body: 'not json at all', contentType: 'text/plain' },
      });
    });

    it('posts a payload file byte for byte and routes a GitLab event by its own name with --native-event', async () => {
      const payload = `{\n  "object_kind": "merge_request",\n  "object_attributes": { "action": "open", "title": "Café" }\n}\n`;
      const result = await cli([
        'send',
        'pull_request.opened',
        '--file',
        file('gitlab-mr.json', payload),
        '--url',
        `${base}/hooks/gitlab`,
        '--secret',
        SECRET,
        '--forge',
        'gitlab',
        '--native-event',
        'Merge Request Hook',
        '--json',
      ]);
      expect(result.code).toBe(0);
      const output = JSON.parse(result.stdout) as { request: unknown; response: unknown };
      expect(output.request).toMatchObject({
        method: 'POST',
        event: 'pull_request.opened',
        forge: 'gitlab',
        nativeEvent: 'Merge Request Hook',
        bytes: Buffer.byteLength(payload),
      });
      expect(output.response).toMatchObject({
        status: 202,
        ok: true,
        body: { accepted: true, name: 'pull_request', action: 'opened' },
      });
      expect(received[0]?.body.toString('utf8')).toBe(payload);
    });

    it('prints JSON with --json: the request, the parsed answer and how long it took', async () => {
      const started = performance.now();
      const result = await cli([
        'send',
        'push',
        '--url',
        `${base}/hooks/generic`,
        '--secret',
        SECRET,
        '--id',
        'json-1',
        '--json',
      ]);
      const elapsed = performance.now() - started;
      expect(result.code).toBe(0);
      const output = JSON.parse(result.stdout) as {
        request: { delivery: string; url: string };
        response: { status: number; body: unknown; durationMs: number };
      };
      expect(output.request.delivery).toBe('json-1');
      expect(output.request.url).toBe(`${base}/hooks/generic`);
      expect(output.response.status).toBe(202);
      expect(output.response.body).toEqual({ accepted: true, id: 'json-1', name: 'push' });
      // Whole milliseconds of the request alone: within what the whole run took.
      expect(Number.isInteger(output.response.durationMs)).toBe(true);
      expect(output.response.durationMs).toBeGreaterThanOrEqual(0);
      expect(output.response.durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
    });

    it('never prints the secret, not even as the GitLab token it sends', async () => {
      const result = await cli([
        'send',
        'push',
        '--url',
        `${base}/hooks/gitlab`,
        '--secret',
        SECRET,
        '--forge',
        'gitlab',
        '--json',
      ]);
      expect(result.code).toBe(0);
      expect(received[0]?.headers['x-gitlab-token']).toBe(SECRET);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
    });

    it('names an event in its forge spelling for a file without an action, and refuses a mismatched action', async () => {
      const result = await cli([
        'send',
        'push',
        '--file',
        file('push.json', '{"ref":"refs/heads/main"}'),
        '--url',
        `${base}/hooks/github`,
        '--secret',
        SECRET,
        '--forge',
        'github',
      ]);
      expect(result.code).toBe(0);
      expect(received[0]?.headers['x-github-event']).toBe('push');
      expectOneLineError(
        await cli([
          'send',
          'issues.closed',
          '--file',
          file('opened.json', '{"action":"opened"}'),
          '--secret',
          SECRET,
        ]),
        2,
        /holds a "opened" action, not "closed"/,
      );
    });

    it('posts to /<source> of FORGEBRIDGE_WEBHOOK_URL with the first of FORGEBRIDGE_WEBHOOK_SECRET', async () => {
      const result = await cli(['send', 'issues.opened', '--source', 'gitea', '--forge', 'gitea'], {
        FORGEBRIDGE_WEBHOOK_URL: `${base}/hooks`,
        FORGEBRIDGE_WEBHOOK_SECRET: `${SECRET},older`,
      });
      expect(result.code).toBe(0);
      expect(received[0]?.url).toBe('/hooks/gitea');
      expect(received[0]?.result.ok).toBe(true);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
    });

    it('shows an answer without a body, and gives up on a slow receiver after --timeout (exit 3)', async () => {
      const empty = await cli(['send', 'push', '--url', `${base}/hooks/generic/empty`, '--secret', SECRET]);
      expect(empty.code).toBe(0);
      expect(empty.stdout).toMatch(/^204 No Content {2}\d+ ms\n$/m);
      expect(empty.stdout.trimEnd().split('\n')).toHaveLength(2);
      const url = `${base}/hooks/generic/slow`;
      expectOneLineError(
        await cli(['send', 'push', '--url', url, '--secret', SECRET, '--timeout', '200']),
        3,
        `no answer from ${url} within 200 ms`,
      );
    });
  });
}

/** verify: why a signature fails, said in plain words. */
export function verifyScenarios(cli: CliRunner): void {
  describe('verify', () => {
    const compact = JSON.stringify({ action: 'opened', issue: { title: 'Ünïcode ☕' } });
    const pretty = JSON.stringify(JSON.parse(compact), null, 2);
    const sha256 = (secret: string, body: string) =>
      `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const sha1 = (secret: string, body: string) =>
      `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;

    it('says verified (exit 0) for the exact body, without the secret or the signature', async () => {
      const signature = sha256(SECRET, compact);
      const result = await cli([
        'verify',
        file('ok.json', compact),
        '--secret',
        SECRET,
        '--signature',
        signature,
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^verdict {2}verified$/m);
      expect(result.stdout).toContain('checked  x-hub-signature-256  sha256=');
      expect(result.stdout).toContain('matches');
      expect(result.stdout).not.toContain(signature.slice(7, 20));
      expect(result.stdout).not.toContain(SECRET);
    });

    it('says bad_signature (exit 1) with the re-serialization for a pretty-printed signed body', async () => {
      const result = await cli([
        'verify',
        file('compact.json', compact),
        '--secret',
        'first',
        '--secret',
        SECRET,
        '--signature',
        sha256(SECRET, pretty),
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^verdict {2}bad_signature$/m);
      expect(result.stdout).toContain('does not match');
      expect(result.stdout).toContain('pretty-printed (2-space indent)');
    });

    it('says wrong secret for every secret of FORGEBRIDGE_WEBHOOK_SECRET, as JSON', async () => {
      const result = await cli(
        ['verify', file('wrong.json', compact), '--signature', sha256('the-forge-secret', compact), '--json'],
        { FORGEBRIDGE_WEBHOOK_SECRET: `${SECRET},second-secret` },
      );
      expect(result.code).toBe(1);
      const diagnosis = JSON.parse(result.stdout) as {
        verdict: string;
        reasons: { code: string; message: string }[];
      };
      expect(diagnosis.verdict).toBe('bad_signature');
      expect(diagnosis.reasons[0]?.code).toBe('wrong_secret');
      expect(diagnosis.reasons[0]?.message).toContain('any of the 2 configured secrets');
    });

    it('reads headers: missing_header, sha1 refused with --no-sha1, sha1 and sha256 put in their headers', async () => {
      const body = file('headers.json', compact);
      const missing = await cli(['verify', body, '--secret', SECRET, '-H', 'Content-Type: application/json']);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toMatch(/^verdict {2}missing_header$/m);
      const refused = await cli([
        'verify',
        body,
        '--secret',
        SECRET,
        '-H',
        `X-Hub-Signature: ${sha1(SECRET, compact)}`,
        '--no-sha1',
        '--json',
      ]);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({
        verdict: 'missing_header',
        reasons: [{ code: 'sha1_only' }],
      });
      const allowed = await cli([
        'verify',
        body,
        '--secret',
        SECRET,
        '-H',
        `X-Hub-Signature: ${sha1(SECRET, compact)}`,
      ]);
      expect(allowed.code).toBe(0);
      // --signature with -H: the value goes into the header of its scheme (sha1=, sha256=, or the preset's first).
      for (const signature of [sha1(SECRET, compact), sha256(SECRET, compact)]) {
        const result = await cli([
          'verify',
          body,
          '--secret',
          SECRET,
          '-H',
          'Accept: */*',
          '--signature',
          signature,
        ]);
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(/^verdict {2}verified$/m);
      }
      const gitlab = await cli([
        'verify',
        body,
        '--secret',
        SECRET,
        '--forge',
        'gitlab',
        '-H',
        'X-Gitlab-Event: Issue Hook',
        '--signature',
        SECRET,
      ]);
      expect(gitlab.code).toBe(0);
      expect(gitlab.stdout).not.toContain(SECRET);
      expectOneLineError(
        await cli(['verify', body, '--secret', SECRET, '-H', 'no colon here']),
        2,
        '"--header" must be "name: value"',
      );
    });

    it('diagnoses a base64 body and verifies a form-encoded one', async () => {
      const base64 = await cli([
        'verify',
        file('b64.txt', Buffer.from(compact).toString('base64')),
        '--secret',
        SECRET,
        '--signature',
        sha256(SECRET, compact),
        '--json',
      ]);
      expect(base64.code).toBe(1);
      expect(JSON.parse(base64.stdout)).toMatchObject({
        verdict: 'bad_signature',
        reasons: [{ code: 'base64_body' }],
      });
      const form = new URLSearchParams({ payload: compact }).toString();
      const formResult = await cli([
        'verify',
        file('form.txt', form),
        '--secret',
        SECRET,
        '--signature',
        sha256(SECRET, form),
      ]);
      expect(formResult.code).toBe(0);
      expect(formResult.stdout).toContain('"application/json"');
    });

    it('checks a GitLab token without printing it', async () => {
      const result = await cli([
        'verify',
        file('gl.json', compact),
        '--secret',
        SECRET,
        '--forge',
        'gitlab',
        '--signature',
        'wrong-token-value',
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('[token, 17 characters]');
      expect(result.stdout).not.toContain('wrong-token-value');
    });

    it('refuses a missing and an empty secret', async () => {
      const body = file('x.json', '{}');
      expectOneLineError(
        await cli(['verify', body, '--signature', 'sha256=00']),
        2,
        /missing secret: pass "--secret"/,
      );
      expectOneLineError(
        await cli(['verify', body, '--secret', '', '--signature', 'x']),
        2,
        '"--secret" must not be empty',
      );
    });
  });
}

/** rules: the EventBridge pattern and the serverless.yml entry for an event. */
export function rulesScenarios(cli: CliRunner): void {
  describe('rules', () => {
    it.each([
      ['issues.opened', { source: ['forge.webhooks'], 'detail-type': ['issues.opened'] }],
      ['issues', { source: ['forge.webhooks'], detail: { event: ['issues'] } }],
      ['push', { source: ['forge.webhooks'], 'detail-type': ['push'] }],
    ])('prints the pattern the ingest matches for %s as JSON', async (name, pattern) => {
      const result = await cli(['rules', name, '--json']);
      expect(result.code).toBe(0);
      const output = JSON.parse(result.stdout) as { event: string; pattern: unknown; serverless: string };
      expect(output.event).toBe(name);
      expect(output.pattern).toEqual(pattern);
      expect(output.serverless).toContain('eventBus: !GetAtt Bus.Name');
      // biome-ignore lint/suspicious/noTemplateCurlyInString: serverless.yml's own variable, not a template
      expect(output.serverless).toContain('- ${self:custom.forgebridge.source}');
    });

    it('prints the pattern and the snippet for people, with the forge, source, function and handler given', async () => {
      const result = await cli([
        'rules',
        'pull_request.opened',
        '--forge',
        'gitlab',
        '--event-source',
        'my.forge',
        '--function',
        'onMr',
        '--handler',
        'src/mr.handler',
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('EventBridge pattern\n{');
      expect(result.stdout).toContain('"my.forge"');
      expect(result.stdout).toContain('serverless.yml\nfunctions:\n  onMr:\n    handler: src/mr.handler');
      expect(result.stdout).toContain('              forge:\n                - gitlab');
    });

    it('takes the source from FORGEBRIDGE_SOURCE and quotes what YAML would misread', async () => {
      const result = await cli(['rules', 'issues', '--forge', 'github'], { FORGEBRIDGE_SOURCE: 'yes' });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('"source": [\n    "yes"');
      expect(result.stdout).toContain('  onIssues:\n    handler: functions/on-issues/handler.handler');
    });
  });
}

/** Bad input to send, verify and rules: one line on stderr, a non-zero exit code, no stack trace. */
export function badInputScenarios(cli: CliRunner): void {
  describe('bad input: one line on stderr, a non-zero exit code, no stack trace', () => {
    it('an unknown command and an unknown option, with the closest one', async () => {
      expectOneLineError(
        await cli(['sned', 'issues.opened']),
        2,
        /unknown command "sned" \(did you mean "send"\?\)/,
      );
      expectOneLineError(
        await cli(['send', 'push', '--secert', 'x']),
        2,
        /unknown option "--secert" \(did you mean "--secret"\?\)/,
      );
      expectOneLineError(await cli(['send']), 2, /missing required argument "event\[\.action\]"/);
    });

    it('a missing secret with a URL', async () => {
      expectOneLineError(
        await cli(['send', 'push', '--url', `${base}/hooks/generic`]),
        2,
        /missing secret: pass "--secret"/,
      );
      expect(received).toHaveLength(0);
    });

    it('an unreadable, a non-JSON and a non-object payload file', async () => {
      const path = join(tmp, 'does-not-exist.json');
      expectOneLineError(
        await cli(['send', 'push', '--file', path, '--secret', SECRET]),
        2,
        `cannot read "${path}": no such file`,
      );
      expectOneLineError(
        await cli(['verify', tmp, '--secret', SECRET, '--signature', 'x']),
        2,
        /it is a directory/,
      );
      expectOneLineError(
        await cli(['send', 'push', '--file', file('bad.json', '{"a":'), '--secret', SECRET]),
        2,
        /is not valid JSON$/,
      );
      expectOneLineError(
        await cli(['send', 'push', '--file', file('list.json', '[1]'), '--secret', SECRET]),
        2,
        /must hold a JSON object$/,
      );
    });

    it('an unknown event, with the closest known one when there is one', async () => {
      expectOneLineError(
        await cli(['send', 'isues.opend']),
        2,
        'unknown event "isues.opend" (did you mean "issues.opened"?)',
      );
      expectOneLineError(
        await cli(['rules', 'pul_request']),
        2,
        'unknown event "pul_request" (did you mean "pull_request"?)',
      );
      expectOneLineError(
        await cli(['rules', 'zzzzzzzzzzzzzzzzzzzz']),
        2,
        /^forgebridge: unknown event "z+"$/,
      );
      expectOneLineError(await cli(['rules', ' ']), 2, 'an event name is required');
    });

    it('an unreachable URL: one line naming it, exit 3', async () => {
      const url = `http://127.0.0.1:${closedPort}/webhooks`;
      expectOneLineError(
        await cli(['send', 'push', '--url', url, '--secret', SECRET]),
        3,
        `could not reach ${url}: connection refused`,
      );
    });

    it('bad --forge, --url, --source, --id and --timeout values', async () => {
      expectOneLineError(
        await cli(['send', 'push', '--forge', 'svn']),
        2,
        /"--forge <forge>" argument "svn" is invalid: allowed choices are generic, github/,
      );
      expectOneLineError(
        await cli(['send', 'push', '--url', 'ftp://example.com/', '--secret', 'x']),
        2,
        '"--url" must be an http or https URL',
      );
      expectOneLineError(
        await cli(['send', 'push', '--url', 'not a url', '--secret', 'x']),
        2,
        '"--url" must be an http',
      );
      expectOneLineError(
        await cli(['send', 'push', '--source', 'Bad_Source', '--url', base, '--secret', 'x']),
        2,
        '"--source" must be 1 to 64 lowercase letters',
      );
      expectOneLineError(
        await cli(['send', 'push', '--id', 'with space', '--url', base, '--secret', 'x']),
        2,
        '"--id" must be 1 to 256 visible ascii characters',
      );
      expectOneLineError(
        await cli(['send', 'push', '--timeout', 'soon']),
        2,
        '"--timeout" must be a positive integer',
      );
    });
  });
}

/** deliveries, show and replay against the log's table on DynamoDB Local (`useCliFixture({ log: true })`). */
export function logScenarios(cli: CliRunner): void {
  const cliLog = (args: string[], env: Record<string, string> = {}) =>
    cli([...args, '--endpoint', endpoint, '--table', tableName], env);
  /** Replays a delivery of the log to `url`, signed with the fixture's secret. */
  const replay = (id: string, url: string, ...options: string[]) =>
    cliLog(['replay', id, ...options, '--url', url, '--secret', SECRET]);

  describe('deliveries', () => {
    it('lists the last day newest first as a table', async () => {
      const result = await cliLog(['deliveries']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines[0]).toMatch(/^TIME\s+EVENT\s+DELIVERY\s+SOURCE\s+HTTP\s+VERDICT\s+OUTCOME\s+SUBSCRIBERS$/);
      const rows = lines.filter((line) => Object.values(ids).some((id) => line.includes(id)));
      expect(rows.map((line) => Object.values(ids).find((id) => line.includes(id)))).toEqual([
        ids.opened,
        ids.opened,
        ids.failed,
        ids.gitea,
        ids.noPayload,
        ids.old,
      ]);
      expect(rows[0]).toMatch(/issues\.opened\s+\S+\s+default\s+200\s+verified\s+duplicate\s+1 ok, 1 error$/);
      expect(rows[2]).toMatch(/push\s+\S+\s+default\s+401\s+bad_signature\s+rejected\s+-$/);
      expect(result.stdout).toContain('6 deliveries, newest first');
    });

    it('filters by event, status, verdict, source, --since and --until, as JSON', async () => {
      const ofJson = async (args: string[]) => {
        const result = await cliLog(['deliveries', ...args, '--json']);
        expect(result.code).toBe(0);
        return (JSON.parse(result.stdout) as { deliveryId: string }[]).map((record) => record.deliveryId);
      };
      expect(await ofJson(['--event', 'issues.opened'])).toEqual([ids.opened, ids.opened, ids.noPayload]);
      expect(await ofJson(['--status', 'rejected'])).toEqual([ids.failed]);
      expect(await ofJson(['--verdict', 'bad_signature'])).toEqual([ids.failed]);
      // Times from when the records were written (not from now: a slow run must not move the window).
      const at = (msAgo: number) => new Date(recordedAt - msAgo).toISOString();
      expect(await ofJson(['--since', at(150_000)])).toEqual([ids.opened, ids.opened]);
      expect(await ofJson(['--since', '2h', '--until', at(150_000), '--source', 'gitea'])).toEqual([
        ids.gitea,
      ]);
      expect(await ofJson(['--limit', '2'])).toHaveLength(2);
      const since = `${new Date(Date.now() - 4 * 60 * MINUTE).toISOString().slice(0, 16)}Z`;
      expect(await ofJson(['--since', since, '--source', 'default'])).toHaveLength(5);
    });

    it('says so when nothing matches', async () => {
      const result = await cliLog(['deliveries', '--event', 'release']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^no deliveries in the log of the local stack/);
    });

    it('refuses bad input, an unreachable log, a missing table and a stage without credentials', async () => {
      expectOneLineError(
        await cliLog(['deliveries', '--since', 'yesterday']),
        2,
        /"--since" must be a duration/,
      );
      expectOneLineError(
        await cliLog(['deliveries', '--event', 'not an event']),
        2,
        '"--event" must be an event name',
      );
      expectOneLineError(
        await cliLog(['deliveries', '--status', 'lost']),
        2,
        /"--status <outcome>" argument "lost" is invalid/,
      );
      expectOneLineError(
        await cliLog(['deliveries', '--limit', '0']),
        2,
        /"--limit" must be an integer from 1 to 1000/,
      );
      expectOneLineError(
        await cli(['deliveries', '--endpoint', `http://127.0.0.1:${closedPort}`, '--table', tableName]),
        3,
        `could not reach http://127.0.0.1:${closedPort}: connection refused`,
      );
      expectOneLineError(
        await cli(['deliveries', '--endpoint', endpoint, '--table', 'no-such-table']),
        3,
        'delivery log table "no-such-table" not found (local stack)',
      );
      expectOneLineError(
        await cli(['deliveries', '--stage', 'dev', '--endpoint', endpoint]),
        2,
        '"--endpoint" and "--stage" cannot be used together',
      );
      expectOneLineError(await cli(['deliveries', '--stage', 'no_such!']), 2, '"--stage" must be letters');
      expectOneLineError(
        await cli([
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

    it('reads the endpoint from FORGEBRIDGE_DYNAMODB_ENDPOINT', async () => {
      const result = await cli(['deliveries', '--table', tableName, '--status', 'rejected', '--json'], {
        FORGEBRIDGE_DYNAMODB_ENDPOINT: endpoint,
      });
      expect(result.code).toBe(0);
      expect(
        (JSON.parse(result.stdout) as { deliveryId: string }[]).map((record) => record.deliveryId),
      ).toEqual([ids.failed]);
    });
  });

  describe('show', () => {
    it('shows every request, the subscribers, the masked headers and with --body the payload', async () => {
      const result = await cliLog(['show', ids.opened, '--body']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`delivery  ${ids.opened}`);
      expect(result.stdout).toMatch(/event\s+issues\.opened/);
      expect(result.stdout).toMatch(
        /requests \(2, newest first\)\n.*200\s+verified\s+duplicate.*\n.*202\s+verified\s+published.*event event-opened-1/,
      );
      expect(result.stdout).toMatch(/auditTrail\s+error\s+7 ms\s+TypeError: boom/);
      expect(result.stdout).toMatch(/onIssuesOpened\s+ok\s+42 ms, 30 ms waiting for the forge api/);
      expect(result.stdout).toContain('x-hub-signature-256: sha256=[masked]');
      // A header no preset knows to be harmless (a forge user's own, maybe a key) is kept masked; a known one in clear.
      expect(result.stdout).toContain('x-custom-header: [masked]');
      expect(result.stdout).toContain('user-agent: GitHub-Hookshot/044aadd');
      expect(result.stdout).toContain('"title": "café"');
      expect(result.stdout).not.toContain(SECRET);
    });

    it('shows a failed signature with its diagnosis, a delivery without payload, and JSON with the exact body', async () => {
      const failed = await cliLog(['show', ids.failed]);
      expect(failed.code).toBe(0);
      expect(failed.stdout).toMatch(/401\s+bad_signature\s+rejected/);
      expect(failed.stdout).toContain('reason signature does not match');
      expect(failed.stdout).toContain(
        '- the signature was made with another secret than every configured one',
      );
      expect(failed.stdout).not.toContain('0123456789abcdef');
      const bare = await cliLog(['show', ids.noPayload, '--body']);
      expect(bare.code).toBe(0);
      expect(bare.stdout).toContain('none reported');
      const json = await cliLog(['show', ids.opened, '--json']);
      const details = JSON.parse(json.stdout) as {
        deliveryId: string;
        subscribers: Record<string, { outcome: string }>;
        records: { outcome: string; body: string }[];
      };
      expect(details.deliveryId).toBe(ids.opened);
      expect(details.records.map((record) => record.outcome)).toEqual(['duplicate', 'published']);
      expect(Buffer.from(details.records[1]?.body ?? '', 'utf8').equals(issuesBody)).toBe(true);
      expect(details.subscribers.auditTrail?.outcome).toBe('error');
    });

    it('finds another source with --source, and says an unknown or a bad id in one line', async () => {
      expect((await cliLog(['show', ids.gitea, '--source', 'gitea'])).stdout).toMatch(/forge\s+gitea/);
      expectOneLineError(
        await cliLog(['show', ids.gitea]),
        2,
        `no delivery "${ids.gitea}" in the log of the local stack`,
      );
      expectOneLineError(
        await cliLog(['show', 'x'.repeat(300)]),
        2,
        /"<delivery-id>" must be 1 to 256 visible ascii/,
      );
    });
  });

  hookScenarios(cli);

  describe('replay (local)', () => {
    it('re-sends the exact body and headers, signed again, with the same delivery id', async () => {
      const result = await replay(ids.opened, `${base}/hooks/generic`);
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
        host: 'localhost:3000',
      };
      // Every header as the forge sent it (the signatures made again with the same secret are the same values),
      // but the transport's own host.
      const { host, ...sent } = asReceived;
      for (const [name, value] of Object.entries(sent)) expect(got.headers[name]).toBe(value);
      expect(got.headers.host).not.toBe(host);
      // A masked header (one no preset knows to be harmless) is not re-sent: its value was never kept.
      expect(got.headers['x-custom-header']).toBeUndefined();
    });

    it("sends a fresh delivery id with --fresh-id as JSON, and signs as the record's forge", async () => {
      const result = await replay(ids.opened, `${base}/hooks/generic`, '--fresh-id', '--json');
      expect(result.code).toBe(0);
      const answer = JSON.parse(result.stdout) as {
        request: { delivery: string; replayOf: string };
        response: { status: number };
      };
      expect(answer.request.replayOf).toBe(ids.opened);
      expect(answer.request.delivery).not.toBe(ids.opened);
      expect(answer.response.status).toBe(202);
      expect(received[0]?.result).toMatchObject({ ok: true, id: answer.request.delivery });
      const gitea = await cliLog(['replay', ids.gitea, '--source', 'gitea', '--url', `${base}/hooks`], {
        FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
      });
      expect(gitea.code).toBe(0);
      expect(received[1]?.result).toMatchObject({ ok: true, id: ids.gitea });
      expect(received[1]?.headers['x-gitea-delivery']).toBe(ids.gitea);
      expect(received[1]?.body.toString()).toBe('{"ref":"refs/heads/dev"}');
    });

    it('replays as another forge with --forge, shows a plain-text answer, and gives up after --timeout', async () => {
      // --forge signs as that forge (GitHub adds its sha1 header); the stored headers go as received.
      const github = await replay(ids.opened, `${base}/hooks/generic`, '--forge', 'github');
      expect(github.code).toBe(0);
      expect(github.stdout).toContain('github, source default, delivery');
      expect(received[0]?.result).toMatchObject({ ok: true, id: ids.opened });
      expect(received[0]?.headers['x-hub-signature']).toBe(
        `sha1=${createHmac('sha1', SECRET).update(issuesBody).digest('hex')}`,
      );
      const plain = await replay(ids.opened, `${base}/hooks/generic/plain`);
      expect(plain.code).toBe(1);
      expect(plain.stdout).toContain('500 Internal Server Error');
      expect(plain.stdout).toContain('not json at all');
      const plainJson = await replay(ids.opened, `${base}/hooks/generic/plain`, '--json');
      expect(plainJson.code).toBe(1);
      expect(JSON.parse(plainJson.stdout)).toMatchObject({
        response: { status: 500, body: 'not json at all' },
      });
      const url = `${base}/hooks/generic/slow`;
      expectOneLineError(
        await replay(ids.opened, url, '--timeout', '200'),
        3,
        `could not reach ${url}: no answer within 200 ms`,
      );
      expectOneLineError(
        await replay(ids.opened, url, '--timeout', '0'),
        2,
        '"--timeout" must be a positive integer',
      );
    });

    it('exits 1 on a refused replay, and says a missing payload, an unknown id and an unreachable URL in one line', async () => {
      const refused = await cliLog([
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
        await replay(ids.noPayload, `${base}/hooks/generic`),
        1,
        `the log holds no payload of delivery "${ids.noPayload}" (absent)`,
      );
      expectOneLineError(await replay('unknown-id', base), 2, 'no delivery "unknown-id"');
      expectOneLineError(
        await replay(ids.opened, `http://127.0.0.1:${closedPort}/webhooks`),
        3,
        `could not reach http://127.0.0.1:${closedPort}/webhooks: connection refused`,
      );
      expect(received.filter((got) => got.result.ok)).toHaveLength(0);
    });
  });

  describe('replay --since (many, to one subscriber)', () => {
    const many = (...args: string[]) => cliLog(['replay', '--since', '1d', ...args]);

    it('counts what one subscriber failed with --dry-run, a sample first, and sends nothing', async () => {
      const text = await many('--subscriber', 'auditTrail', '--dry-run');
      expect(text.stderr).toBe('');
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^1 delivery auditTrail reported error {2}/);
      expect(text.stdout).toContain(`${ids.opened}  issues.opened  TypeError: boom`);
      const json = await many('--subscriber', 'auditTrail', '--dry-run', '--json');
      expect(JSON.parse(json.stdout)).toMatchObject({
        subscriber: 'auditTrail',
        outcome: 'error',
        selected: 1,
        dryRun: true,
        sample: [{ deliveryId: ids.opened, event: 'issues', action: 'opened', error: 'TypeError: boom' }],
      });
      // The subscriber that took it has nothing to replay; with "--outcome any" it has its one delivery.
      expect(
        JSON.parse((await many('--subscriber', 'onIssuesOpened', '--dry-run', '--json')).stdout),
      ).toMatchObject({ subscriber: 'onIssuesOpened', selected: 0 });
      const any = await many('--subscriber', 'onIssuesOpened', '--outcome', 'any', '--dry-run', '--json');
      expect(JSON.parse(any.stdout)).toMatchObject({ selected: 1, sample: [{ deliveryId: ids.opened }] });
      expect(received).toHaveLength(0);
    });

    it('refuses bad input in one line, exit 2, and sends nothing', async () => {
      expectOneLineError(
        await cliLog(['replay', '--since', '1h', '--until', '2h', '--subscriber', 'auditTrail']),
        2,
        /^forgebridge: "--until" \(.*\) must be after "--since" \(.*\)$/,
      );
      expectOneLineError(
        await many('--subscriber', 'nobody', '--dry-run'),
        2,
        'no delivery of the window was reported on by subscriber "nobody" (subscribers that did: auditTrail, onIssuesOpened)',
      );
      expectOneLineError(
        await many('--subscriber', 'auditTrail', '--event', 'isues.opened'),
        2,
        'unknown event "isues.opened" (did you mean "issues.opened"?)',
      );
      // Without --subscriber the deliveries go to the bus: --via (how to reach one subscriber) is refused.
      expectOneLineError(await many('--via', 'invoke', '--dry-run'), 2, '"--via" needs "--subscriber"');
      expectOneLineError(
        await cliLog(['replay', ids.opened, '--since', '1h']),
        2,
        'give a delivery id or "--since", not both',
      );
      // Off a terminal a send needs "--yes".
      expectOneLineError(
        await many('--subscriber', 'auditTrail'),
        2,
        'pass "--yes" to send 1 deliveries to auditTrail (or "--dry-run" to count)',
      );
      expect(received).toHaveLength(0);
    });
  });
}

/**
 * Two hooks, one event (issue 27): GitHub gives one event one GUID at every hook it is sent to (two Apps on one
 * URL), each with its own payload and X-GitHub-Hook-ID. In a table of their own: both hooks' records of `shared`
 * (hook 1101's delivery and its redelivery, hook 2202's), a delivery of one hook, and a generic one naming none.
 */
function hookScenarios(cli: CliRunner): void {
  describe('two hooks, one event (deliveries, show, replay --hook)', () => {
    const shared = randomUUID();
    const single = randomUUID();
    const plain = randomUUID();
    const bodyOf = (installation: number) =>
      `{"action":"opened","issue":{"number":27},"installation":{"id":${installation}}}`;
    const github = (id: string, hook: string, body: string) => ({
      ...deliveryHeaders(SECRET, body, { forge: 'github', name: 'issues', id }),
      'x-github-hook-id': hook,
      'user-agent': 'GitHub-Hookshot/044aadd',
    });
    let table: string;
    const logArgs = () => ['--endpoint', endpoint, '--table', table];
    const run = (args: string[]) => cli([...args, ...logArgs()]);
    const replayHook = (id: string, ...options: string[]) =>
      run([
        'replay',
        id,
        '--source',
        'github',
        ...options,
        '--url',
        `${base}/hooks/github`,
        '--secret',
        SECRET,
      ]);

    beforeAll(async () => {
      table = `deliveries-${randomUUID().slice(0, 8)}`;
      await createTable(endpoint, TableDefinitions.deliveries, table);
      const log = new DeliveryLog({ client: fixture.ddb.client(), tableName: table, storePayload: true });
      const now = Date.now();
      const githubEntry = (
        id: string,
        hook: string,
        installation: number,
        overrides: Partial<DeliveryLogEntry>,
      ) =>
        entry({
          deliveryId: id,
          forge: 'github',
          source: 'github',
          hook,
          headers: github(id, hook, bodyOf(installation)),
          body: bodyOf(installation),
          ...overrides,
        });
      for (const record of [
        githubEntry(shared, '1101', 501, { receivedAt: now - 4 * MINUTE, eventId: 'event-1101' }),
        githubEntry(shared, '2202', 502, { receivedAt: now - 3 * MINUTE, eventId: 'event-2202' }),
        githubEntry(shared, '1101', 501, {
          receivedAt: now - 2 * MINUTE,
          httpStatus: 200,
          outcome: 'duplicate',
        }),
        githubEntry(single, '3303', 503, { receivedAt: now - MINUTE }),
        entry({ deliveryId: plain, receivedAt: now - 5 * MINUTE }),
      ]) {
        expect(await log.record(record)).toMatchObject({ ok: true });
      }
      await log.recordSubscriber(shared, {
        subscriber: 'onIssuesOpened',
        outcome: 'ok',
        durationMs: 11,
        source: 'github',
        hook: '1101',
      });
      await log.recordSubscriber(shared, {
        subscriber: 'auditTrail',
        outcome: 'error',
        durationMs: 5,
        error: { name: 'TypeError', message: 'second app' },
        source: 'github',
        hook: '2202',
      });
    });

    it('deliveries shows a HOOK column, as text and JSON, once a listed record names its hook', async () => {
      const result = await run(['deliveries']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines[0]).toMatch(
        /^TIME\s+EVENT\s+DELIVERY\s+SOURCE\s+HOOK\s+HTTP\s+VERDICT\s+OUTCOME\s+SUBSCRIBERS$/,
      );
      const rows = lines.slice(1, 6);
      expect(rows[0]).toMatch(
        new RegExp(`${single}\\s+github\\s+3303\\s+202\\s+verified\\s+published\\s+-$`),
      );
      expect(rows[1]).toMatch(
        new RegExp(`${shared}\\s+github\\s+1101\\s+200\\s+verified\\s+duplicate\\s+1 ok$`),
      );
      expect(rows[2]).toMatch(
        new RegExp(`${shared}\\s+github\\s+2202\\s+202\\s+verified\\s+published\\s+0 ok, 1 error$`),
      );
      expect(rows[3]).toMatch(
        new RegExp(`${shared}\\s+github\\s+1101\\s+202\\s+verified\\s+published\\s+1 ok$`),
      );
      expect(rows[4]).toMatch(new RegExp(`${plain}\\s+default\\s+-\\s+202\\s+verified\\s+published\\s+-$`));
      const json = await run(['deliveries', '--json']);
      expect(json.code).toBe(0);
      const records = JSON.parse(json.stdout) as { deliveryId: string; hook: string | null }[];
      expect(records.map((record) => [record.deliveryId, record.hook])).toEqual([
        [single, '3303'],
        [shared, '1101'],
        [shared, '2202'],
        [shared, '1101'],
        [plain, null],
      ]);
      // No record naming a hook: no column, and no "hook" in the JSON.
      const none = await run(['deliveries', '--source', 'default']);
      expect(none.stdout.split('\n')[0]).toMatch(/^TIME\s+EVENT\s+DELIVERY\s+SOURCE\s+HTTP\s/);
      const noneJson = JSON.parse((await run(['deliveries', '--source', 'default', '--json'])).stdout);
      expect(noneJson).toHaveLength(1);
      expect(noneJson[0]).not.toHaveProperty('hook');
    });

    it("show says plainly that a GUID came from 2 hooks, with each record's hook and each hook's subscribers", async () => {
      const result = await run(['show', shared, '--source', 'github', '--body']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^hooks +2 hooks: 1101, 2202 /m);
      expect(result.stdout).toMatch(
        /requests \(3, newest first\)\n.*hook 1101\s+200\s+verified\s+duplicate.*\n.*hook 2202\s+202\s+verified\s+published.*event event-2202\n.*hook 1101\s+202\s+verified\s+published.*event event-1101/,
      );
      expect(result.stdout).toMatch(/subscribers of hook 1101 \(1\)\n\s+onIssuesOpened\s+ok\s+11 ms\n/);
      expect(result.stdout).toMatch(
        /subscribers of hook 2202 \(1\)\n\s+auditTrail\s+error\s+5 ms\s+TypeError: second app\n/,
      );
      expect(result.stdout).toContain('x-github-hook-id: 1101');
      expect(result.stdout).toContain('x-github-hook-id: 2202');
      // Each hook's own payload.
      const [, ofFirst = '', ofSecond = ''] = result.stdout.split(/^payload of hook (?:1101|2202)$/m);
      expect(ofFirst).toContain('"id": 501');
      expect(ofFirst).not.toContain('"id": 502');
      expect(ofSecond).toContain('"id": 502');
      const json = JSON.parse((await run(['show', shared, '--source', 'github', '--json'])).stdout) as {
        hooks: string[];
        subscribersByHook: Record<string, Record<string, { outcome: string }>>;
        records: { hook: string }[];
      };
      expect(json.hooks).toEqual(['1101', '2202']);
      expect(json.records.map((record) => record.hook)).toEqual(['1101', '2202', '1101']);
      expect(json.subscribersByHook['1101']).toMatchObject({ onIssuesOpened: { outcome: 'ok' } });
      expect(json.subscribersByHook['2202']).toMatchObject({ auditTrail: { outcome: 'error' } });
      expect(Object.keys(json.subscribersByHook['2202'] ?? {})).toEqual(['auditTrail']);
      const one = await run(['show', single, '--source', 'github']);
      expect(one.stdout).toMatch(/^hook +3303$/m);
      expect(one.stdout).not.toContain('2 hooks');
      expect(one.stdout).toMatch(/^subscribers \(0\)$/m);
    });

    it('replay refuses an id from two hooks without --hook, in one line naming them', async () => {
      expectOneLineError(
        await replayHook(shared),
        2,
        `delivery ${shared} came from 2 hooks (1101, 2202): pass --hook`,
      );
      expectOneLineError(
        await replayHook(shared, '--hook', '9999'),
        2,
        `delivery ${shared} has no record from hook "9999" (hooks: 1101, 2202)`,
      );
      expectOneLineError(
        await cli([
          'replay',
          plain,
          '--hook',
          '1101',
          '--url',
          `${base}/hooks/generic`,
          '--secret',
          SECRET,
          ...logArgs(),
        ]),
        2,
        `delivery ${plain} has no record from hook "1101" (its records name no hook)`,
      );
      expect(received).toHaveLength(0);
    });

    it("replay --hook re-sends that hook's record: its body and its X-GitHub-Hook-ID", async () => {
      const result = await replayHook(shared, '--hook', '2202');
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`delivery ${shared}, hook 2202,`);
      const json = await replayHook(shared, '--hook', '1101', '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        request: { delivery: shared, hook: '1101', source: 'github', forge: 'github' },
        response: { status: 202 },
      });
      expect(received).toHaveLength(2);
      const [second, first] = [received[0] as Received, received[1] as Received];
      expect(second.result).toMatchObject({ ok: true, id: shared, hook: '2202' });
      expect(second.headers['x-github-hook-id']).toBe('2202');
      expect(second.body.toString()).toBe(bodyOf(502));
      expect(first.result).toMatchObject({ ok: true, id: shared, hook: '1101' });
      expect(first.body.toString()).toBe(bodyOf(501));
    });

    it('replays a delivery of one hook without --hook', async () => {
      const result = await replayHook(single);
      expect(result.code).toBe(0);
      expect(received).toHaveLength(1);
      expect(received[0]?.headers['x-github-hook-id']).toBe('3303');
      expect(received[0]?.body.toString()).toBe(bodyOf(503));
    });
  });
}

/** dev: what it refuses before relaying anything. */
export function devScenarios(cli: CliRunner): void {
  describe('dev --proxy', () => {
    it('refuses a channel that is not a URL, a missing one and an unreachable one in one line', async () => {
      expectOneLineError(
        await cli(['dev', '--proxy', 'smee.io/abc']),
        2,
        '"--proxy" must be an http or https URL',
      );
      expectOneLineError(await cli(['dev']), 2, /"--proxy <channel-url>" not specified/);
      expectOneLineError(
        await cli(['dev', '--proxy', base, '--timeout', '0']),
        2,
        '"--timeout" must be a positive integer',
      );
      expectOneLineError(
        await cli(['dev', '--proxy', `http://127.0.0.1:${closedPort}/channel`, '--url', base]),
        3,
        /^forgebridge: could not open the proxy channel at http:\/\/127\.0\.0\.1:\d+\/…: proxy channel connection lost/,
      );
    });
  });
}

/** The scenarios of the commands that need no log: send, verify, rules and their bad input. */
export function commandScenarios(cli: CliRunner): void {
  sendScenarios(cli);
  verifyScenarios(cli);
  rulesScenarios(cli);
  badInputScenarios(cli);
}
