// The `forgebridge` CLI run as a process (the pinned node and bin/forgebridge.js), against a real node:http
// receiver on 127.0.0.1 that verifies every delivery with lib/webhooks' readDelivery, as a receiver would.
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DeliveryResult, type Forge, Forges, readDelivery } from '../../../lib/webhooks/index.js';
import { closedPort, expectOneLineError, type Run, runCli } from '../../helpers/cli.js';

const SECRET = 'cli-test-secret-5b2e';

/** Runs the CLI with no colours and none of the local stack's variables; `input` goes to stdin. */
function run(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...options.env };
  for (const name of [
    'FORGEBRIDGE_WEBHOOK_URL',
    'FORGEBRIDGE_WEBHOOK_SECRET',
    'FORCE_COLOR',
    'FORGEBRIDGE_SOURCE',
  ]) {
    if (options.env?.[name] === undefined) delete env[name];
  }
  return runCli(args, env, options.input);
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

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'forgebridge-cli-'));
  // `/hooks/<forge>` verifies with that forge's preset; `/hooks/<forge>/other-secret` with another secret.
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const [, , forge = 'generic', other] = (request.url ?? '').split('/');
      const body = Buffer.concat(chunks);
      const result = readDelivery(
        { method: request.method ?? 'POST', headers: request.headers, body },
        { secret: other === undefined ? SECRET : 'not-the-cli-secret', forge: forge as Forge },
      );
      received.push({ url: request.url ?? '', headers: request.headers, body, result });
      const status = result.ok ? 202 : result.status;
      const answer = result.ok
        ? { accepted: true, id: result.id, name: result.name, action: result.action }
        : { error: result.code, message: result.message };
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => {
  received = [];
});

function file(name: string, content: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

describe('forgebridge --help', () => {
  it('lists every command and the exit codes', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^Usage: forgebridge \[options\] \[command\]/);
    for (const command of [
      'send [options] <event[.action]>',
      'rules [options] <event[.action]>',
      'verify [options] [file|-]',
    ]) {
      expect(result.stdout).toContain(command);
    }
    expect(result.stdout).toContain('Exit codes: 0 done');
    // NO_COLOR: no escape sequences.
    expect(result.stdout).not.toContain('\u001b[');
  });

  it.each([
    [
      'send',
      [
        '--file <payload.json>',
        '--url <url>',
        '--secret <secret>',
        '--forge <forge>',
        '--source <name>',
        '--id <delivery-id>',
        '--json',
      ],
    ],
    ['rules', ['--forge <forge>', '--event-source <source>', '--function <name>', '--json']],
    [
      'verify',
      [
        '--secret <secret>',
        '--signature <value>',
        '--header <name: value>',
        '--forge <forge>',
        '--no-sha1',
        '--json',
      ],
    ],
  ])('documents every option of %s (--help and help <command>)', async (command, options) => {
    for (const args of [
      [command, '--help'],
      ['help', command],
    ]) {
      const result = await run(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(`Usage: forgebridge ${command} [options]`);
      for (const option of options) expect(result.stdout).toContain(option);
      expect(result.stdout).toContain('-h, --help');
    }
  });

  it('prints the package version', async () => {
    const result = await run(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

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

describe('forgebridge send', () => {
  it.each(Forges)('signs a catalogue sample as %s does and the receiver verifies it', async (forge) => {
    const id = `cli-${forge}-1`;
    const result = await run([
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
    expect(delivery.result.ok).toBe(true);
    if (!delivery.result.ok) return;
    expect(delivery.result.id).toBe(id);
    // Each forge's own sample: its own event name, routed to the catalogue's issues.opened.
    expect(delivery.result.nativeName).toBe(NATIVE_ISSUES_OPENED[forge]);
    expect([delivery.result.name, delivery.result.action]).toEqual(['issues', 'opened']);
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

  it('is refused (exit 1) when the receiver has another secret, and shows the answer', async () => {
    const result = await run([
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

  it('posts a payload file byte for byte and routes a GitLab event by its own name with --native-event', async () => {
    const payload = `{\n  "object_kind": "merge_request",\n  "object_attributes": { "action": "open", "title": "Café" }\n}\n`;
    const path = file('gitlab-mr.json', payload);
    const result = await run([
      'send',
      'pull_request.opened',
      '--file',
      path,
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
    const output = JSON.parse(result.stdout) as {
      request: Record<string, unknown>;
      response: Record<string, unknown>;
    };
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

  it('prints JSON with --json: the request and the parsed answer', async () => {
    const result = await run([
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
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as {
      request: { delivery: string; url: string };
      response: { status: number; body: unknown; durationMs: number };
    };
    expect(output.request.delivery).toBe('json-1');
    expect(output.request.url).toBe(`${base}/hooks/generic`);
    expect(output.response.status).toBe(202);
    expect(output.response.body).toEqual({ accepted: true, id: 'json-1', name: 'push' });
    expect(output.response.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('posts to /webhooks/<source> of the configured URL with --source, and reads FORGEBRIDGE_WEBHOOK_URL / _SECRET', async () => {
    const result = await run(['send', 'issues.opened', '--source', 'gitea', '--forge', 'gitea'], {
      env: { FORGEBRIDGE_WEBHOOK_URL: `${base}/hooks`, FORGEBRIDGE_WEBHOOK_SECRET: `${SECRET},older` },
    });
    expect(result.code).toBe(0);
    expect(received[0]?.url).toBe('/hooks/gitea');
    expect(received[0]?.result.ok).toBe(true);
  });

  it('never prints the secret', async () => {
    const result = await run([
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
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });
});

describe('forgebridge verify', () => {
  const compact = JSON.stringify({ action: 'opened', issue: { title: 'Ünïcode ☕' } });
  const pretty = JSON.stringify(JSON.parse(compact), null, 2);
  const sha256 = (secret: string, body: string) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  it('says verified (exit 0) for the exact body', async () => {
    const signature = sha256(SECRET, compact);
    const result = await run([
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

  it('says bad_signature (exit 1) with the re-serialization when the forge signed pretty-printed JSON', async () => {
    const result = await run([
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
    expect(result.stdout).toContain('pretty-printed (2-space indent)');
  });

  it('says wrong secret for every configured one, reading the body from stdin, as JSON', async () => {
    const result = await run(['verify', '-', '--signature', sha256('the-forge-secret', compact), '--json'], {
      input: compact,
      env: { FORGEBRIDGE_WEBHOOK_SECRET: `${SECRET},second-secret` },
    });
    expect(result.code).toBe(1);
    const diagnosis = JSON.parse(result.stdout) as {
      verdict: string;
      reasons: { code: string; message: string }[];
    };
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe('wrong_secret');
    expect(diagnosis.reasons[0]?.message).toContain('any of the 2 configured secrets');
    expect(result.stdout).not.toContain(SECRET);
  });

  it('says missing_header for headers without a signature, and sha1 refused with --no-sha1', async () => {
    const body = file('headers.json', compact);
    const missing = await run(['verify', body, '--secret', SECRET, '-H', 'Content-Type: application/json']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/^verdict {2}missing_header$/m);
    const sha1 = `sha1=${createHmac('sha1', SECRET).update(compact).digest('hex')}`;
    const refused = await run([
      'verify',
      body,
      '--secret',
      SECRET,
      '-H',
      `X-Hub-Signature: ${sha1}`,
      '--no-sha1',
      '--json',
    ]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      verdict: 'missing_header',
      reasons: [{ code: 'sha1_only' }],
    });
    const allowed = await run(['verify', body, '--secret', SECRET, '-H', `X-Hub-Signature: ${sha1}`]);
    expect(allowed.code).toBe(0);
  });

  it('diagnoses a base64 body and a form-encoded one', async () => {
    const base64 = await run([
      'verify',
      file('b64.txt', Buffer.from(compact).toString('base64')),
      '--secret',
      SECRET,
      '--signature',
      sha256(SECRET, compact),
      '--json',
    ]);
    expect(JSON.parse(base64.stdout)).toMatchObject({
      verdict: 'bad_signature',
      reasons: [{ code: 'base64_body' }],
    });
    const form = new URLSearchParams({ payload: compact }).toString();
    const formResult = await run([
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
    const result = await run([
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
});

describe('forgebridge rules', () => {
  it.each([
    ['issues.opened', { source: ['forge.webhooks'], 'detail-type': ['issues.opened'] }],
    ['issues', { source: ['forge.webhooks'], detail: { event: ['issues'] } }],
    ['push', { source: ['forge.webhooks'], 'detail-type': ['push'] }],
  ])('prints the pattern the ingest matches for %s', async (name, pattern) => {
    const result = await run(['rules', name, '--json']);
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as { pattern: unknown; serverless: string };
    expect(output.pattern).toEqual(pattern);
    expect(output.serverless).toContain('eventBus: !GetAtt Bus.Name');
  });

  it('prints the pattern and a serverless.yml snippet for people, with the forge and source given', async () => {
    const result = await run([
      'rules',
      'pull_request.opened',
      '--forge',
      'gitlab',
      '--event-source',
      'my.forge',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('EventBridge pattern\n{');
    expect(result.stdout).toContain('"my.forge"');
    expect(result.stdout).toContain(
      'serverless.yml\nfunctions:\n  onPullRequestOpened:\n    handler: functions/on-pull-request-opened/handler.handler',
    );
    expect(result.stdout).toContain('              forge:\n                - gitlab');
  });
});

describe('bad input: one line on stderr, a non-zero exit code, no stack trace', () => {
  it('an unknown command, with the closest one', async () => {
    expectOneLineError(
      await run(['sned', 'issues.opened']),
      2,
      /unknown command "sned" \(did you mean "send"\?\)/,
    );
  });

  it('an unknown option', async () => {
    expectOneLineError(
      await run(['send', 'push', '--secert', 'x']),
      2,
      /unknown option "--secert" \(did you mean "--secret"\?\)/,
    );
  });

  it('a missing argument', async () => {
    expectOneLineError(await run(['send']), 2, /missing required argument "event\[\.action\]"/);
  });

  it('a missing secret for send with a URL, and for verify', async () => {
    expectOneLineError(
      await run(['send', 'push', '--url', `${base}/hooks/generic`]),
      2,
      /missing secret: pass "--secret"/,
    );
    expectOneLineError(
      await run(['verify', file('x.json', '{}'), '--signature', 'sha256=00']),
      2,
      /missing secret: pass "--secret"/,
    );
    expect(received).toHaveLength(0);
  });

  it('an unreadable payload file', async () => {
    const path = join(tmp, 'does-not-exist.json');
    expectOneLineError(
      await run(['send', 'push', '--file', path, '--secret', SECRET]),
      2,
      `cannot read "${path}": no such file`,
    );
    expectOneLineError(
      await run(['verify', tmp, '--secret', SECRET, '--signature', 'x']),
      2,
      /it is a directory/,
    );
  });

  it('a payload file that is not JSON or not an object', async () => {
    expectOneLineError(
      await run(['send', 'push', '--file', file('bad.json', '{"a":'), '--secret', SECRET]),
      2,
      /is not valid JSON$/,
    );
    expectOneLineError(
      await run(['send', 'push', '--file', file('list.json', '[1]'), '--secret', SECRET]),
      2,
      /must hold a JSON object$/,
    );
  });

  it('an unknown event name, with the closest known one', async () => {
    expectOneLineError(
      await run(['send', 'isues.opend']),
      2,
      'unknown event "isues.opend" (did you mean "issues.opened"?)',
    );
    expectOneLineError(
      await run(['rules', 'pul_request']),
      2,
      'unknown event "pul_request" (did you mean "pull_request"?)',
    );
  });

  it('an unreachable URL: one line naming it, exit 3', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/webhooks`;
    const result = await run(['send', 'push', '--url', url, '--secret', SECRET]);
    expectOneLineError(result, 3, `could not reach ${url}: connection refused`);
  });

  it('a bad --forge, a bad --url and a bad --timeout', async () => {
    expectOneLineError(
      await run(['send', 'push', '--forge', 'svn']),
      2,
      /"--forge <forge>" argument "svn" is invalid: allowed choices are generic, github/,
    );
    expectOneLineError(
      await run(['verify', '-', '--forge', 'svn', '--secret', 'x']),
      2,
      /allowed choices are/,
    );
    expectOneLineError(
      await run(['send', 'push', '--url', 'ftp://example.com/', '--secret', 'x']),
      2,
      '"--url" must be an http or https URL',
    );
    expectOneLineError(
      await run(['send', 'push', '--timeout', 'soon']),
      2,
      '"--timeout" must be a positive integer',
    );
  });
});
