// `forgebridge connect` in this process against the GitHub and GitLab stand-ins' hooks APIs (every answer validated
// against @octokit/openapi and GitLab's documented fields) and the real ingest, built as the function builds it, on
// 127.0.0.1 with its delivery log on DynamoDB Local: the state file `npm start` writes points the CLI at it, and the
// project is a temporary copy (config/local.yml, serverless.yml), never the repository's. Connect creates one hook,
// the forge's test delivery arrives signed and is verified, a second run changes nothing, --dry-run changes
// nothing, --check finds each misconfiguration planted at the forge, and neither the token nor a secret is printed.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createIngestHandler, DeliveryLog } from '../../../lib/aws/index.js';
import { readIngestConfig } from '../../../lib/aws/stage/function-config.js';
import { readStageConfig } from '../../../lib/aws/stage/index.js';
import { createTables } from '../../../local-stack/dynamodb.js';
import { type GitHubDeliveries, startGitHubDeliveries } from '../../../local-stack/github-deliveries.js';
import { type GitLabEvents, startGitLabEvents } from '../../../local-stack/gitlab-events.js';
import { type LocalS3, startS3 } from '../../../local-stack/s3.js';
import type { SendDelivery } from '../../../local-stack/stand-in-server.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import type { Run } from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';
import { gitHubResponseErrors } from '../../helpers/github-openapi.js';
import { gitLabResponseErrors } from '../../helpers/gitlab-events-schema.js';
import {
  busPublisher,
  type RecordingBus,
  sourceEvent,
  startRecordingBus,
} from '../../helpers/reconcile-rig.js';

const ddb = useDynamoDbLocal();
const ROOT = new URL('../../../', import.meta.url).pathname;
const TOKEN = `forge-token-${randomUUID()}`;
const SECRETS = { github: `gh-secret-${randomUUID()}`, gitlab: `gl-secret-${randomUUID()}` };
const BUCKET = 'connect-claims';

let bus: RecordingBus;
let s3: LocalS3;
let ingest: Server;
let ingestUrl: string;
let github: GitHubDeliveries;
let gitlab: GitLabEvents;
let dir: string;
let project: string;
let env: Record<string, string>;
let deliveriesTable: string;

/** Posts to the hook's own URL, as the forge does. */
const sendTo =
  (fallback: () => string): SendDelivery =>
  async ({ headers, body, url }) => {
    try {
      const response = await fetch(url ?? fallback(), {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  };

beforeAll(async () => {
  bus = await startRecordingBus();
  s3 = await startS3({ buckets: [BUCKET] });
  const { dedupe } = await ddb.tables();
  deliveriesTable = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTables(ddb.endpoint, { deliveries: deliveriesTable });
  // The ingest as the function builds it: the github and gitlab sources, each with its secret, the delivery log on.
  const handler = createIngestHandler({
    env: {
      FORGEBRIDGE_BUS_NAME: 'forge',
      FORGEBRIDGE_DEDUPE_TABLE: dedupe,
      FORGEBRIDGE_DELIVERIES_TABLE: deliveriesTable,
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
        { name: 'github', forge: 'github' },
        { name: 'gitlab', forge: 'gitlab' },
      ]),
    },
    clients: { dynamodb: ddb.client() },
    publisher: busPublisher(bus.url, s3, BUCKET),
    sourceSecret: (source) => async () => [SECRETS[source.name as 'github' | 'gitlab']],
    logger: { info() {}, warn() {}, error() {} },
    metrics: false,
  });
  const context = { getRemainingTimeInMillis: () => 20_000 } as Context;
  ingest = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const source = (req.url ?? '').replace(/^\/webhooks\/?/, '') || 'default';
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      void (
        handler(
          sourceEvent(source, headers, Buffer.concat(chunks).toString('utf8')) as never,
          context,
        ) as Promise<{
          statusCode: number;
          body?: string;
        }>
      ).then((answer) => {
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
        res.end(answer.body ?? '');
      });
    });
  });
  ingest.listen(0, '127.0.0.1');
  await once(ingest, 'listening');
  const address = ingest.address();
  ingestUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/webhooks`;
  const accepts = (token: string) => token === TOKEN;
  github = await startGitHubDeliveries({ accepts, send: sendTo(() => `${ingestUrl}/github`) });
  gitlab = await startGitLabEvents({ accepts, send: sendTo(() => `${ingestUrl}/gitlab`) });

  dir = mkdtempSync(join(tmpdir(), 'forgebridge-connect-'));
  project = join(dir, 'project');
  mkdirSync(join(project, 'config'), { recursive: true });
  copyFileSync(join(ROOT, 'config/local.yml'), join(project, 'config/local.yml'));
  copyFileSync(join(ROOT, 'serverless.yml'), join(project, 'serverless.yml'));
  // What `npm start` writes about itself: the sources with their URLs and secrets, the delivery log.
  const state = join(dir, 'local-stack.json');
  writeFileSync(
    state,
    JSON.stringify({
      webhookUrl: ingestUrl,
      secret: 'unused',
      sources: [
        { name: 'github', forge: 'github', url: `${ingestUrl}/github`, secret: SECRETS.github },
        { name: 'gitlab', forge: 'gitlab', url: `${ingestUrl}/gitlab`, secret: SECRETS.gitlab },
      ],
      endpoints: { dynamodb: ddb.endpoint },
      names: { deliveriesTable, dedupeTable: dedupe },
    }),
  );
  env = { FORGEBRIDGE_STATE_FILE: state, FORGE_TOKEN: TOKEN };
}, 60_000);

afterAll(async () => {
  await github?.close();
  await gitlab?.close();
  if (ingest !== undefined) {
    ingest.closeAllConnections();
    await new Promise((resolve) => ingest.close(resolve));
  }
  await s3?.stop();
  await bus?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  // The stand-ins stay honest: every answer conforms to the forge's published description.
  expect(github.responses.flatMap(gitHubResponseErrors)).toEqual([]);
  expect(gitlab.responses.flatMap(gitLabResponseErrors)).toEqual([]);
});

/** Runs the CLI in this process; asserts it printed neither the token nor a secret, on either stream. */
async function cli(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const run = await runMain([...args, '--dir', project], { ...env, ...extra });
  for (const hidden of [TOKEN, SECRETS.github, SECRETS.gitlab]) {
    expect(run.stdout).not.toContain(hidden);
    expect(run.stderr).not.toContain(hidden);
  }
  return run;
}

const file = () => join(project, 'config/local.yml');
const hooksOf = () => {
  const config = readStageConfig({ stage: 'local', dir: project, env: {}, offline: true });
  return Object.fromEntries(
    readIngestConfig({ ...config.settings, IS_OFFLINE: 'true' })
      .sources.filter((source) => source.hook !== undefined)
      .map((source) => [source.name, source.hook]),
  );
};
const connected = (forge: string, id: number, source: string) =>
  new RegExp(`^connected: ${forge} hook ${id} -> source ${source}; ping verified in \\d+\\.\\d s\\n$`);

describe('forgebridge connect github', () => {
  it('--dry-run says what it would do and changes nothing at the forge or in the file', async () => {
    const before = readFileSync(file(), 'utf8');
    const run = await cli([
      'connect',
      'github',
      '--repo',
      'acme/web',
      '--api',
      github.url,
      '--token-env',
      'FORGE_TOKEN',
      '--dry-run',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `dry run: would create a github hook on acme/web: url ${ingestUrl}/github, content type json, TLS verification on, active, the source's secret, events *`,
      "dry run: would have the forge send its test delivery and wait for source github's delivery log to show it verified",
      `dry run: would write the hook into ${file()} (source github)`,
    ]);
    expect(github.webHooks.size).toBe(0);
    expect(github.responses.map((response) => response.method)).toEqual(['GET']);
    expect(readFileSync(file(), 'utf8')).toBe(before);
  });

  it('creates one hook (JSON, the secret, TLS on, active), the ping arrives signed and verified, and the file names it', async () => {
    const run = await cli([
      'connect',
      'github',
      '--repo',
      'acme/web',
      '--api',
      github.url,
      '--token-env',
      'FORGE_TOKEN',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect([...github.webHooks.values()]).toHaveLength(1);
    const [hook] = [...github.webHooks.values()];
    if (hook === undefined) throw new Error('no hook');
    expect(run.stdout).toMatch(connected('github', hook.id, 'github'));
    expect(hook).toMatchObject({
      active: true,
      events: ['*'],
      config: { url: `${ingestUrl}/github`, content_type: 'json', insecure_ssl: '0', secret: SECRETS.github },
    });
    // The ping: sent to the hook's URL, signed, verified and logged by the ingest under the hook's id.
    const [ping] = github.hooks.get(hook.path)?.attempts ?? [];
    expect(ping).toMatchObject({ event: 'ping', status_code: 202 });
    const logged = await new DeliveryLog({ client: ddb.client(), tableName: deliveriesTable }).get(
      ping?.guid as string,
      {
        source: 'github',
      },
    );
    expect(logged?.latest).toMatchObject({ verdict: 'verified', event: 'ping', hook: String(hook.id) });
    expect(hooksOf()).toEqual({
      github: { kind: 'repo', api: github.url, id: hook.id, owner: 'acme', repo: 'web', provider: 'forge' },
    });
  });

  it('a second run changes nothing: the same hook, no create or update, the file as it was', async () => {
    const before = readFileSync(file(), 'utf8');
    const sent = github.responses.length;
    const run = await cli([
      'connect',
      'github',
      '--repo',
      'acme/web',
      '--api',
      github.url,
      '--token-env',
      'FORGE_TOKEN',
    ]);
    expect(run.code).toBe(0);
    const [hook] = [...github.webHooks.values()];
    expect(run.stdout).toMatch(connected('github', hook?.id as number, 'github'));
    expect(github.webHooks.size).toBe(1);
    expect(github.responses.slice(sent).map((response) => response.operation)).not.toContain('update-hook');
    expect(github.responses.slice(sent).map((response) => response.operation)).not.toContain('create-hook');
    expect(readFileSync(file(), 'utf8')).toBe(before);
  });

  it('re-keys a hook whose secret the ingest refuses, and proves it with a second ping', async () => {
    const [hook] = [...github.webHooks.values()];
    if (hook === undefined) throw new Error('no hook');
    hook.config.secret = 'a-secret-the-ingest-does-not-know';
    const tracked = github.hooks.get(hook.path);
    if (tracked !== undefined) tracked.secret = hook.config.secret;
    const run = await cli([
      'connect',
      'github',
      '--repo',
      'acme/web',
      '--api',
      github.url,
      '--token-env',
      'FORGE_TOKEN',
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(connected('github', hook.id, 'github'));
    expect(hook.config.secret).toBe(SECRETS.github);
    const pings = (tracked?.attempts ?? [])
      .filter((attempt) => attempt.event === 'ping')
      .map((a) => a.status_code);
    expect(pings.slice(0, 2)).toEqual([202, 401]);
  });

  it('--check: ok for the hook as connect left it, then each planted misconfiguration, one line each, exit 1', async () => {
    const clean = await cli(['connect', '--check', '--token-env', 'FORGE_TOKEN']);
    expect(clean.stderr).toBe('');
    const [hook] = [...github.webHooks.values()];
    if (hook === undefined) throw new Error('no hook');
    const name = `source github, github hook ${hook.id} on acme/web`;
    expect(clean.stdout).toBe(`${name}: ok\n`);
    expect(clean.code).toBe(0);

    hook.config = { url: 'https://old.example/hook', content_type: 'form', insecure_ssl: '1' };
    hook.active = false;
    hook.events = ['push'];
    for (const status of [401, 500]) {
      await github.deliver(hook.path, {
        event: 'push',
        payload: { ref: 'refs/heads/main' },
        statusCode: status,
      });
    }
    const run = await cli(['connect', 'github', '--check', '--token-env', 'FORGE_TOKEN']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `${name}: posts to another URL: https://old.example/hook (the source's is ${ingestUrl}/github)`,
      `${name}: content type "form": the ingest reads JSON only (set "application/json")`,
      `${name}: TLS verification is off: turn SSL verification on`,
      `${name}: inactive: the forge sends it nothing`,
      `${name}: no secret: the ingest refuses every delivery it sends`,
      `${name}: not subscribed to *, which the stage's rules route`,
      `${name}: the last 2 deliveries failed (500, 401)`,
    ]);
  });
});

describe('forgebridge connect gitlab', () => {
  it('creates one project hook with the token, the test event arrives with it and is verified; a second run changes nothing', async () => {
    const args = [
      'connect',
      'gitlab',
      '--project',
      'acme/web',
      '--api',
      gitlab.api,
      '--token-env',
      'FORGE_TOKEN',
    ];
    const run = await cli(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const [hook] = [...gitlab.webHooks.values()];
    if (hook === undefined) throw new Error('no hook');
    expect(gitlab.webHooks.size).toBe(1);
    expect(run.stdout).toMatch(connected('gitlab', hook.id, 'gitlab'));
    expect(hook).toMatchObject({
      path: `/projects/acme%2Fweb/hooks/${hook.id}`,
      url: `${ingestUrl}/gitlab`,
      token: SECRETS.gitlab,
      enable_ssl_verification: true,
      alert_status: 'executable',
    });
    expect(Object.values(hook.flags).every(Boolean)).toBe(true);
    const [event] = gitlab.hooks.get(hook.path)?.events ?? [];
    expect(event).toMatchObject({
      response_status: '202',
      request_headers: { 'X-Gitlab-Token': '[REDACTED]' },
    });
    expect(hooksOf().gitlab).toEqual({
      kind: 'project',
      api: gitlab.api,
      id: hook.id,
      project: 'acme/web',
      provider: 'forge',
    });

    const again = await cli(args);
    expect(again.stdout).toMatch(connected('gitlab', hook.id, 'gitlab'));
    expect(gitlab.webHooks.size).toBe(1);
    expect(
      gitlab.responses.map((response) => response.operation).filter((op) => op === 'update-hook'),
    ).toEqual([]);
  });

  it('--check finds TLS verification off, a disabled hook, no token and a missing trigger', async () => {
    const [hook] = [...gitlab.webHooks.values()];
    if (hook === undefined) throw new Error('no hook');
    hook.enable_ssl_verification = false;
    hook.alert_status = 'disabled';
    hook.flags.merge_requests_events = false;
    const tracked = gitlab.hooks.get(hook.path);
    if (tracked !== undefined) tracked.secret = '';
    // Sent without a token: the ingest refuses it (400, no signature).
    await gitlab.deliver(hook.path, { event: 'Push Hook', payload: { object_kind: 'push' } });
    const run = await cli(['connect', 'gitlab', '--check', '--token-env', 'FORGE_TOKEN']);
    expect(run.code).toBe(1);
    const name = `source gitlab, gitlab hook ${hook.id} on project acme/web`;
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `${name}: TLS verification is off: turn SSL verification on`,
      `${name}: inactive: the forge sends it nothing`,
      `${name}: no secret: the ingest refuses every delivery it sends`,
      `${name}: not subscribed to merge_requests_events, which the stage's rules route`,
      `${name}: the last delivery failed (400)`,
    ]);
  });
});

describe('refusals and failures, in one line, never with the token or a secret', () => {
  it('a bad token, a missing or empty variable, an http API off loopback, a source of another forge', async () => {
    const base = ['connect', 'github', '--repo', 'acme/web', '--api', github.url];
    const refused = await cli([...base, '--token-env', 'WRONG'], { WRONG: 'not-the-token' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^forgebridge: the forge refused the token from \$WRONG \(GET http:\/\/127\.0\.0\.1:\d+\/repos\/acme\/web\/hooks: 401 Bad credentials\)\n$/,
    );
    expect(refused.stderr).not.toContain('not-the-token');
    expect((await cli(base)).stderr).toBe(
      'forgebridge: missing "--token-env <NAME>": the environment variable holding the forge token\n',
    );
    expect((await cli([...base, '--token-env', 'EMPTY'], { EMPTY: '' })).stderr).toBe(
      'forgebridge: the environment variable EMPTY ("--token-env") is not set or empty\n',
    );
    const http = await cli([
      'connect',
      'github',
      '--repo',
      'acme/web',
      '--api',
      'http://ghe.example/api/v3',
      '--token-env',
      'FORGE_TOKEN',
    ]);
    expect(http).toMatchObject({ code: 2, stdout: '' });
    expect(http.stderr).toBe(
      'forgebridge: "--api" must be an https url without a query or credentials (http only on loopback)\n',
    );
    const other = await cli([...base, '--token-env', 'FORGE_TOKEN', '--source', 'gitlab']);
    expect(other.stderr).toBe(
      'forgebridge: source "gitlab" is a gitlab source: a github hook needs a github source\n',
    );
  });

  it('a ping the ingest never sees (the hook points nowhere) fails within the timeout, saying why', async () => {
    const run = await cli([
      'connect',
      'github',
      '--repo',
      'acme/other',
      '--api',
      github.url,
      '--token-env',
      'FORGE_TOKEN',
      '--url',
      'http://127.0.0.1:9',
      '--timeout',
      '2',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^forgebridge: github hook \d+ -> source github: no test delivery reached the delivery log of source "github" in 2 s \(the forge's attempt got no answer\)|the forge's test delivery got no answer from http:\/\/127\.0\.0\.1:9\/webhooks\/github/,
    );
    expect(hooksOf().github).toMatchObject({ repo: 'web' });
  }, 20_000);
});
