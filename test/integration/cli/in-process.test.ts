// The `forgebridge` CLI run in this process: `main(argv)` of lib/cli/program.ts with stdout and stderr captured,
// so that the coverage of the suite sees the CLI (cli.test.ts and cli-log.test.ts run it as a child process).
// The same real parts as those files: a node:http receiver on 127.0.0.1 verifying every delivery with
// lib/webhooks' readDelivery, DynamoDB Local holding records written through DeliveryLog.record, and a local
// proxy channel (test/helpers/sse-server.ts) for `dev --proxy`.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { main } from '../../../lib/cli/program.js';
import {
  type DeliveryResult,
  deliveryHeaders,
  type Forge,
  Forges,
  readDelivery,
} from '../../../lib/webhooks/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { type LocalS3, startS3 } from '../../../local-stack/s3.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import {
  expectOneLineError,
  closedPort as freePort,
  NO_AWS_CREDENTIALS,
  type Run,
} from '../../helpers/cli.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../helpers/fault-eventbridge.js';
import { type SseServer, startSseServer } from '../../helpers/sse-server.js';

const SECRET = 'cli-in-process-secret-3f9a';
const MINUTE = 60_000;

const ddb = useDynamoDbLocal();

interface Started {
  done: Promise<Run>;
  stdout(): string;
  stderr(): string;
}

/**
 * Starts `main` with `args` in this process: no colours, none of the machine's FORGEBRIDGE_* / AWS_* variables
 * (and no AWS credentials anywhere), stdout and stderr captured. Everything is restored when it ends.
 */
function start(args: string[], env: Record<string, string> = {}): Started {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('FORGEBRIDGE_') || name.startsWith('AWS_') || name === 'FORCE_COLOR')
      delete process.env[name];
  }
  Object.assign(process.env, {
    NO_COLOR: '1',
    ...NO_AWS_CREDENTIALS,
    ...env,
  });
  let stdout = '';
  let stderr = '';
  const text = (chunk: unknown) =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout += text(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    stderr += text(chunk);
    return true;
  });
  const restore = () => {
    out.mockRestore();
    err.mockRestore();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
  const done = main([process.execPath, 'forgebridge', ...args]).then(
    (code) => {
      restore();
      return { code, stdout, stderr };
    },
    (error: unknown) => {
      restore();
      throw error;
    },
  );
  return { done, stdout: () => stdout, stderr: () => stderr };
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return start(args, env).done;
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
let tmp: string;
let closedPort: number;
let endpoint: string;
let tableName: string;

const issuesBody = Buffer.from('{"action":"opened","issue":{"number":7,"title":"caf\\u00e9"},  "zeta":1}\n');
const ids = {
  opened: randomUUID(),
  failed: randomUUID(),
  old: randomUUID(),
  gitea: randomUUID(),
  noPayload: randomUUID(),
  binary: randomUUID(),
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
  tmp = mkdtempSync(join(tmpdir(), 'forgebridge-cli-in-process-'));
  // `/hooks/<forge>` verifies with that forge's preset; `/hooks/<forge>/other-secret` with another secret;
  // `/plain` answers 500 in plain text, `/empty` with no body, `/slow` after 1.5 s.
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

  endpoint = ddb.endpoint;
  tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(endpoint, TableDefinitions.deliveries, tableName);
  const log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
  const now = Date.now();
  const signed = deliveryHeaders(SECRET, issuesBody, { name: 'issues', id: ids.opened });
  const asReceived = { ...signed, 'user-agent': 'GitHub-Hookshot/044aadd', 'x-custom-header': 'kept as is' };
  const records: DeliveryLogEntry[] = [
    entry({
      deliveryId: ids.opened,
      receivedAt: now - 2 * MINUTE,
      eventId: 'event-opened-1',
      headers: asReceived,
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
      diagnosis: [{ code: 'wrong_secret', message: 'made with another secret than every configured one' }],
      httpStatus: 401,
      outcome: 'rejected',
      headers: { 'x-forge-event': 'push', 'x-hub-signature-256': 'sha256=0123456789abcdef' },
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
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  received = [];
});

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

function file(name: string, content: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

/** Runs a log command against the test table on DynamoDB Local. */
function cliLog(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return cli([...args, '--endpoint', endpoint, '--table', tableName], env);
}

describe('help and version', () => {
  it('lists every command and the exit codes, without colours', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^Usage: forgebridge \[options\] \[command\]/);
    for (const command of [
      'send [options] <event[.action]>',
      'rules [options] <event[.action]>',
      'verify [options] [file|-]',
      'deliveries [options]',
      'show [options] <delivery-id>',
      'replay [options] <delivery-id>',
      'dev [options]',
    ]) {
      expect(result.stdout).toContain(command);
    }
    expect(result.stdout).toContain('Exit codes: 0 done');
    expect(result.stdout).not.toContain('\u001b[');
  });

  it.each([
    ['send', ['--file <payload.json>', '--secret <secret>', '--native-event <name>', '--timeout <ms>']],
    ['rules', ['--forge <forge>', '--event-source <source>', '--function <name>', '--handler <path>']],
    ['verify', ['--signature <value>', '--header <name: value>', '--no-sha1', 'never printed']],
    ['deliveries', ['--event <event[.action]>', '--status <outcome>', '--since <when>', '--stage <name>']],
    ['show', ['<delivery-id>', '--source <name>', '--body', '--table <name>']],
    ['replay', ['<delivery-id>', '--fresh-id', '--archive <arn>', '--rule <arn>', '--no-wait']],
    ['dev', ['--proxy <channel-url>', '--forge <forge>', '--url <url>']],
  ])('%s --help and help %s', async (command, options) => {
    for (const args of [
      [command, '--help'],
      ['help', command],
    ]) {
      const result = await cli(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(new RegExp(`^Usage: forgebridge ${command} `));
      for (const option of options) expect(result.stdout).toContain(option);
    }
  });

  it('prints the package version', async () => {
    const result = await cli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('the bare program prints its help on stderr and exits 2', async () => {
    const result = await cli([]);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain('Usage: forgebridge [options] [command]');
  });
});

describe('send', () => {
  it.each(Forges)('signs a catalogue sample as %s does and the receiver verifies it', async (forge) => {
    const id = `in-process-${forge}-1`;
    const url = `${base}/hooks/${forge}`;
    const result = await cli([
      'send',
      'issues.opened',
      '--url',
      url,
      '--secret',
      SECRET,
      '--forge',
      forge,
      '--id',
      id,
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`POST ${url}  issues.opened  ${forge}, delivery ${id}`);
    expect(result.stdout).toContain('202 Accepted');
    expect(received).toHaveLength(1);
    // Each forge's own sample: its own event name, routed to the catalogue's issues.opened.
    expect(received[0]?.result).toMatchObject({
      ok: true,
      id,
      name: 'issues',
      action: 'opened',
      nativeName:
        {
          gitlab: 'Issue Hook',
          bitbucket: 'issue:created',
          standard: 'issues.opened',
          svix: 'issues.opened',
        }[forge as string] ?? 'issues',
    });
    expect(received[0]?.headers['user-agent']).toMatch(/^forgebridge-cli\//);
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

  it('posts a payload file byte for byte with --native-event, as JSON', async () => {
    const payload = `{\n  "object_kind": "merge_request",\n  "object_attributes": { "action": "open" }\n}\n`;
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
      nativeEvent: 'Merge Request Hook',
      bytes: Buffer.byteLength(payload),
    });
    expect(output.response).toMatchObject({ status: 202, body: { name: 'pull_request', action: 'opened' } });
    expect(received[0]?.body.toString('utf8')).toBe(payload);
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

  it('draws a spinner on a terminal stderr and clears it when the answer comes', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      const result = await cli(['send', 'push', '--url', `${base}/hooks/generic`, '--secret', SECRET]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`POST ${base}/hooks/generic`);
      expect(result.stderr.endsWith('\r\u001b[K')).toBe(true);
    } finally {
      if (descriptor === undefined) delete (process.stderr as { isTTY?: boolean }).isTTY;
      else Object.defineProperty(process.stderr, 'isTTY', descriptor);
    }
  });
});

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

  it('refuses a missing, an empty secret, and no body file on a terminal', async () => {
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
    // biome-ignore lint/suspicious/noTemplateCurlyInString: serverless.yml's own variable syntax, printed as is
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
    expectOneLineError(await cli(['rules', 'zzzzzzzzzzzzzzzzzzzz']), 2, /^forgebridge: unknown event "z+"$/);
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
      '"--source" must be lowercase letters',
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
    expect(await ofJson(['--since', '150s'])).toEqual([ids.opened, ids.opened]);
    expect(await ofJson(['--since', '2h', '--until', '150s', '--source', 'gitea'])).toEqual([ids.gitea]);
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
    expect(result.stdout).toMatch(/onIssuesOpened\s+ok\s+42 ms/);
    expect(result.stdout).toContain('x-hub-signature-256: sha256=[masked]');
    expect(result.stdout).toContain('x-custom-header: kept as is');
    expect(result.stdout).toContain('"title": "café"');
    expect(result.stdout).not.toContain(SECRET);
  });

  it('shows a failed signature with its diagnosis, a delivery without payload, and JSON with the exact body', async () => {
    const failed = await cliLog(['show', ids.failed]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/401\s+bad_signature\s+rejected/);
    expect(failed.stdout).toContain('reason signature does not match');
    expect(failed.stdout).toContain('- made with another secret than every configured one');
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

describe('records of every shape (a table of their own)', () => {
  const idA = randomUUID();
  let table: string;
  const binary = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);

  beforeAll(async () => {
    table = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(endpoint, TableDefinitions.deliveries, table);
    const log = new DeliveryLog({ client: ddb.client(), tableName: table, storePayload: true });
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
    const result = await cli(['deliveries', '--endpoint', endpoint, '--table', table]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[1]).toMatch(
      new RegExp(`issues\\.opened\\s+${idA}\\s+default\\s+503\\s+not_checked\\s+failed\\s+1 ok$`),
    );
    expect(lines[2]).toMatch(/\s-\s+\(invalid id\)\s+default\s+400\s+invalid_json\s+rejected\s+-$/);
    expect(result.stdout).toContain('2 deliveries, newest first');
    const one = await cli(['deliveries', '--endpoint', endpoint, '--table', table, '--limit', '1']);
    expect(one.stdout).toContain('1 delivery, newest first');
  });

  it('shows the native names, the error code, masked token and a binary payload as base64', async () => {
    const result = await cli(['show', idA, '--body', '--endpoint', endpoint, '--table', table]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('forge     gitlab  (Issue Hook, open)');
    expect(result.stdout).toMatch(/503\s+not_checked\s+failed\s+4 B\n\s+error\s+PutEventsFailed/);
    expect(result.stdout).toContain('x-gitlab-token: [masked]');
    expect(result.stdout).not.toContain('a-token-value');
    expect(result.stdout).toContain(`payload\n${binary.toString('base64')}\n`);
    const json = await cli(['show', idA, '--json', '--endpoint', endpoint, '--table', table]);
    expect(json.code).toBe(0);
    const details = JSON.parse(json.stdout) as { records: { body: string; bodyEncoding: string }[] };
    expect(details.records[0]).toMatchObject({ body: binary.toString('base64'), bodyEncoding: 'base64' });
    expectOneLineError(
      await cli(['show', 'nope', '--source', 'other', '--endpoint', endpoint, '--table', table]),
      2,
      'no delivery "nope" of source "other" in the log of the local stack',
    );
  });
});

describe('replay (local)', () => {
  it('re-sends the exact body and headers, signed again, with the same delivery id', async () => {
    const result = await cliLog(['replay', ids.opened, '--url', `${base}/hooks/generic`, '--secret', SECRET]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/hooks\/generic {2}issues\.opened/);
    expect(result.stdout).toContain('202 Accepted');
    expect(received).toHaveLength(1);
    expect(received[0]?.result).toMatchObject({ ok: true, id: ids.opened, name: 'issues' });
    expect(received[0]?.body.equals(issuesBody)).toBe(true);
    expect(received[0]?.headers['x-custom-header']).toBe('kept as is');
  });

  it("sends a fresh delivery id with --fresh-id as JSON, and signs as the record's forge", async () => {
    const result = await cliLog([
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
    const gitea = await cliLog(['replay', ids.gitea, '--source', 'gitea', '--url', `${base}/hooks`], {
      FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
    });
    expect(gitea.code).toBe(0);
    expect(received[1]?.result).toMatchObject({ ok: true, id: ids.gitea });
    expect(received[1]?.headers['x-gitea-delivery']).toBe(ids.gitea);
  });

  it('replays as another forge with --forge, shows a plain-text answer, and gives up after --timeout', async () => {
    // --forge signs as that forge (GitHub adds its sha1 header); the stored headers go as received.
    const github = await cliLog([
      'replay',
      ids.opened,
      '--forge',
      'github',
      '--url',
      `${base}/hooks/generic`,
      '--secret',
      SECRET,
    ]);
    expect(github.code).toBe(0);
    expect(github.stdout).toContain('github, source default, delivery');
    expect(received[0]?.result).toMatchObject({ ok: true, id: ids.opened });
    expect(received[0]?.headers['x-hub-signature']).toBe(
      `sha1=${createHmac('sha1', SECRET).update(issuesBody).digest('hex')}`,
    );
    const plain = await cliLog([
      'replay',
      ids.opened,
      '--url',
      `${base}/hooks/generic/plain`,
      '--secret',
      SECRET,
    ]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('500 Internal Server Error');
    expect(plain.stdout).toContain('not json at all');
    const plainJson = await cliLog([
      'replay',
      ids.opened,
      '--json',
      '--url',
      `${base}/hooks/generic/plain`,
      '--secret',
      SECRET,
    ]);
    expect(plainJson.code).toBe(1);
    expect(JSON.parse(plainJson.stdout)).toMatchObject({
      response: { status: 500, body: 'not json at all' },
    });
    const url = `${base}/hooks/generic/slow`;
    expectOneLineError(
      await cliLog(['replay', ids.opened, '--url', url, '--secret', SECRET, '--timeout', '200']),
      3,
      `could not reach ${url}: no answer within 200 ms`,
    );
    expectOneLineError(
      await cliLog(['replay', ids.opened, '--url', url, '--secret', SECRET, '--timeout', '0']),
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
      await cliLog(['replay', ids.noPayload, '--url', `${base}/hooks/generic`, '--secret', SECRET]),
      1,
      `the log holds no payload of delivery "${ids.noPayload}" (absent)`,
    );
    expectOneLineError(
      await cliLog(['replay', 'unknown-id', '--url', base, '--secret', SECRET]),
      2,
      'no delivery "unknown-id"',
    );
    expectOneLineError(
      await cliLog([
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

describe('dev --proxy', () => {
  let channel: SseServer;

  beforeAll(async () => {
    channel = await startSseServer({ bodyAs: 'string' });
  });
  afterAll(async () => {
    await channel?.close();
  });

  it('relays each delivery into the ingest URL, one line each, and stops on SIGINT', async () => {
    const before = new Set(process.listeners('SIGINT'));
    const started = start(['dev', '--proxy', channel.url, '--url', `${base}/hooks/generic`]);
    const until = async (check: () => boolean, what: string) => {
      for (let waited = 0; !check(); waited += 50) {
        if (waited > 15_000) throw new Error(`timed out waiting for ${what}: ${started.stdout()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until(() => started.stdout().includes('relaying'), 'the relay to start');
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
    await until(() => started.stdout().includes(wrongId), 'two relayed deliveries');
    expect(received[0]?.result).toMatchObject({ ok: true, id, name: 'issues' });
    expect(received[0]?.body.toString()).toBe(body);
    expect(received[1]?.result).toMatchObject({ ok: false });
    // Ctrl-C: the handler the command registered, called as the signal would (not sent to the test process).
    const added = process.listeners('SIGINT').filter((listener) => !before.has(listener));
    expect(added).toHaveLength(1);
    (added[0] as (signal: string) => void)('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.find((line) => line.includes(id))).toMatch(
      /issues {2}\S+ {2}\d+ B {2}-> 202 Accepted {2}\d+ ms$/,
    );
    expect(lines.find((line) => line.includes(wrongId))).toMatch(/-> 401 Unauthorized invalid_signature/);
    expect(result.stdout).toMatch(/SIGINT: stopped, 2 deliveries relayed\n$/);
    expect(result.stderr).toBe('');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal))
        if (!before.has(listener)) process.off(signal, listener);
    }
  });

  it('says a delivery it could not post, on its line', async () => {
    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
    const started = start([
      'dev',
      '--proxy',
      channel.url,
      '--url',
      `http://127.0.0.1:${closedPort}/webhooks`,
    ]);
    for (let waited = 0; !started.stdout().includes('relaying'); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relay');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const id = randomUUID();
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, '{}', { name: 'push', id }),
      body: '{}',
    });
    for (let waited = 0; !started.stdout().includes(id); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relayed line');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const added = process.listeners('SIGTERM').filter((listener) => !before.term.has(listener));
    (added[0] as (signal: string) => void)('SIGTERM');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`${id}.*-> not delivered: econnrefused$`, 'm'));
    expect(result.stdout).toMatch(/SIGTERM: stopped, 0 deliveries relayed\n$/);
    for (const [signal, set] of [
      ['SIGINT', before.int],
      ['SIGTERM', before.term],
    ] as const) {
      for (const listener of process.listeners(signal)) if (!set.has(listener)) process.off(signal, listener);
    }
  });

  it("relays --forge alone into the local stack's source of that forge, or says which --source to use", async () => {
    // A state file as `npm start` writes it, its gitea source being this test's verifying receiver.
    const state = join(tmp, 'dev-state.json');
    const sources = [
      { name: 'default', forge: 'generic', url: `${base}/hooks/generic`, secret: SECRET },
      { name: 'gitea', forge: 'gitea', url: `${base}/hooks/gitea`, secret: SECRET },
    ];
    writeFileSync(state, JSON.stringify({ webhookUrl: `${base}/hooks/generic`, secret: SECRET, sources }));
    const none = await cli(['dev', '--proxy', channel.url, '--forge', 'gitlab'], {
      FORGEBRIDGE_STATE_FILE: state,
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      'forgebridge: the local stack has no gitlab source: pass "--source <name>" (its sources: default (generic), gitea (gitea))\n',
    );

    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
    const started = start(['dev', '--proxy', channel.url, '--forge', 'gitea'], {
      FORGEBRIDGE_STATE_FILE: state,
    });
    for (let waited = 0; !started.stdout().includes('relaying'); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relay');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(started.stdout()).toContain(
      `-> ${base}/hooks/gitea  (gitea headers, source gitea (the local stack's source for --forge gitea): the forge must sign with this source's secret; Ctrl-C stops)`,
    );
    const id = randomUUID();
    const body = '{"ref":"refs/heads/main"}';
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { forge: 'gitea', name: 'push', id }),
      body,
    });
    for (let waited = 0; !started.stdout().includes(id); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relayed line');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const added = process.listeners('SIGINT').filter((listener) => !before.int.has(listener));
    (added[0] as (signal: string) => void)('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(received[0]?.url).toBe('/hooks/gitea');
    expect(received[0]?.result).toMatchObject({ ok: true, id, name: 'push' });
    expect(result.stdout).not.toContain(SECRET);
    for (const [signal, set] of [
      ['SIGINT', before.int],
      ['SIGTERM', before.term],
    ] as const) {
      for (const listener of process.listeners(signal)) if (!set.has(listener)) process.off(signal, listener);
    }
  });

  it('relays with the headers of --forge into --source, and counts one delivery', async () => {
    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
    const started = start([
      'dev',
      '--proxy',
      channel.url,
      '--url',
      `${base}/hooks`,
      '--source',
      'gitea',
      '--forge',
      'gitea',
    ]);
    for (let waited = 0; !started.stdout().includes('relaying'); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relay');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(started.stdout()).toContain('(gitea headers, source gitea; Ctrl-C stops)');
    const id = randomUUID();
    const body = '{"ref":"refs/heads/main"}';
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { forge: 'gitea', name: 'push', id }),
      body,
    });
    for (let waited = 0; !started.stdout().includes(id); waited += 50) {
      if (waited > 15_000) throw new Error('timed out waiting for the relayed line');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const added = process.listeners('SIGINT').filter((listener) => !before.int.has(listener));
    (added[0] as (signal: string) => void)('SIGINT');
    const result = await started.done;
    expect(result.code).toBe(0);
    expect(received[0]?.url).toBe('/hooks/gitea');
    expect(received[0]?.result).toMatchObject({ ok: true, id });
    expect(received[0]?.headers['x-gitea-delivery']).toBe(id);
    expect(result.stdout).toMatch(/SIGINT: stopped, 1 delivery relayed\n$/);
    for (const [signal, set] of [
      ['SIGINT', before.int],
      ['SIGTERM', before.term],
    ] as const) {
      for (const listener of process.listeners(signal)) if (!set.has(listener)) process.off(signal, listener);
    }
  });

  it('relays a parsed (smee-style) body signed with sha1 only, says a bad message and a lost channel on stderr', async () => {
    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
    const smee = await startSseServer({ retryMs: 100 });
    let running: Started | undefined;
    try {
      const started = start([
        'dev',
        '--proxy',
        smee.url,
        '--url',
        `${base}/hooks/github/plain`,
        '--forge',
        'github',
      ]);
      running = started;
      const until = async (check: () => boolean, what: string) => {
        for (let waited = 0; !check(); waited += 50) {
          if (waited > 15_000)
            throw new Error(`timed out waiting for ${what}: ${started.stdout()} ${started.stderr()}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      await until(() => started.stdout().includes('relaying'), 'the relay to start');
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
      await until(() => started.stdout().includes(id), 'the relayed line');
      expect(received[0]?.headers['x-hub-signature']).toBe(
        `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`,
      );
      expect(received[0]?.body.toString()).toBe(body);
      expect(started.stdout()).toMatch(
        new RegExp(`push {2}${id} {2}\\d+ B {2}-> 500 Internal Server Error\\s+\\d+ ms\\n`),
      );
      // A message without the event header: said on stderr, not relayed.
      await fetch(smee.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await until(() => started.stderr().includes('proxy:'), 'the bad message on stderr');
      expect(started.stderr()).toMatch(/^proxy: \S+: message has no "x-github-event" key\n/);
      // The channel goes away once open: said on stderr, and the relay keeps waiting for it.
      await smee.close();
      await until(
        () =>
          started
            .stderr()
            .split('\n')
            .filter((line) => line.startsWith('proxy:')).length >= 2,
        'the lost channel',
      );
      const added = process.listeners('SIGINT').filter((listener) => !before.int.has(listener));
      (added[0] as (signal: string) => void)('SIGINT');
      const result = await started.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/SIGINT: stopped, 1 delivery relayed\n$/);
      expect(received).toHaveLength(1);
      running = undefined;
    } finally {
      await smee.close().catch(() => undefined);
      if (running !== undefined) {
        // A failed assertion above: stop the relay all the same, so that it writes nothing into later tests.
        for (const listener of process.listeners('SIGINT')) {
          if (!before.int.has(listener)) (listener as (signal: string) => void)('SIGINT');
        }
        await running.done.catch(() => undefined);
      }
      for (const [signal, set] of [
        ['SIGINT', before.int],
        ['SIGTERM', before.term],
      ] as const) {
        for (const listener of process.listeners(signal))
          if (!set.has(listener)) process.off(signal, listener);
      }
    }
  });

  it('stops cleanly on Ctrl-C while the channel has not opened yet', async () => {
    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
    // A channel that takes the request and never answers.
    const silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/channel`;
      const started = start(['dev', '--proxy', url, '--url', base]);
      let added: NodeJS.SignalsListener[] = [];
      for (let waited = 0; added.length === 0; waited += 20) {
        if (waited > 5_000) throw new Error('timed out waiting for the Ctrl-C handler');
        await new Promise((resolve) => setTimeout(resolve, 20));
        added = process.listeners('SIGINT').filter((listener) => !before.int.has(listener));
      }
      (added[0] as (signal: string) => void)('SIGINT');
      const result = await started.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('');
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      for (const [signal, set] of [
        ['SIGINT', before.int],
        ['SIGTERM', before.term],
      ] as const) {
        for (const listener of process.listeners(signal))
          if (!set.has(listener)) process.off(signal, listener);
      }
    }
  });

  it('refuses a channel that is not a URL, a missing one and an unreachable one in one line', async () => {
    const before = { int: new Set(process.listeners('SIGINT')), term: new Set(process.listeners('SIGTERM')) };
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
    for (const [signal, set] of [
      ['SIGINT', before.int],
      ['SIGTERM', before.term],
    ] as const) {
      for (const listener of process.listeners(signal)) if (!set.has(listener)) process.off(signal, listener);
    }
  });
});

describe('a deployed stage (--stage): the SDK pointed at DynamoDB Local, s3rver and a local PutEvents bus', () => {
  const BUCKET = 'claim-checks';
  const claimBody = Buffer.from('{"action":"opened","issue":{"number":9}}');
  const claimed = randomUUID();
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
    client.destroy();
    const log = new DeliveryLog({ client: ddb.client(), tableName });
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
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
      AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${closedPort}`,
    };
  });
  afterAll(async () => {
    await bus?.close();
    await s3?.stop();
  });

  it('lists and shows the stage table', async () => {
    const list = await cli(
      ['deliveries', '--stage', 'dev', '--table', tableName, '--status', 'rejected', '--json'],
      awsEnv,
    );
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { deliveryId: string }[]).map((record) => record.deliveryId)).toEqual([
      ids.failed,
    ]);
    const show = await cli(['show', claimed, '--stage', 'dev', '--table', tableName], awsEnv);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`delivery  ${claimed}`);
    expect(show.stdout).toContain(`s3://${BUCKET}/deliveries/${claimed}`);
  });

  it('re-publishes a claim-checked delivery onto the bus, as text and as JSON with a fresh id', async () => {
    const result = await cli(['replay', claimed, '--stage', 'dev', '--table', tableName], awsEnv);
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
        tableName,
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

  it('needs an archive for a delivery without a claim check, and says what the bus refuses in one line', async () => {
    const base = ['replay', ids.failed, '--stage', 'dev', '--table', tableName];
    expectOneLineError(
      await cli(base, awsEnv),
      2,
      `delivery "${ids.failed}" has no claim check: pass "--archive <arn>"`,
    );
    const archive = 'arn:aws:events:us-east-1:123456789012:archive/forgebridge-dev';
    expectOneLineError(
      await cli([...base, '--archive', archive, '--fresh-id'], awsEnv),
      2,
      '"--fresh-id" needs a claim-checked delivery',
    );
    expectOneLineError(
      await cli([...base, '--archive', 'arn:aws:s3:::bucket'], awsEnv),
      2,
      '"--archive" must be an EventBridge archive ARN',
    );
    // The local bus serves PutEvents only: StartReplay is refused, and said so in one line.
    expectOneLineError(
      await cli([...base, '--archive', archive, '--no-wait'], awsEnv),
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
