// The reconciler against the GitHub deliveries stand-in (local-stack/github-deliveries.ts), DynamoDB Local, the
// local authorization server (oidc-provider: the hook's token comes from the token store) and the real ingest
// in-process: the stand-in sends each delivery and each redelivery, signed as GitHub signs it, into the ingest,
// which publishes onto a bus of ours on 127.0.0.1 that records every entry by `detail.delivery`. Every answer
// the stand-in sends is validated against GitHub's REST description (@octokit/openapi) after each test.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createReconcileHandler, DeliveryLog, resolveDelivery } from '../../../../lib/aws/index.js';
import { gitHubDeliveryLog } from '../../../../lib/aws/reconcile/github.js';
import { type ReconcileOptions, reconcile } from '../../../../lib/aws/reconcile/reconcile.js';
import { createRecovery } from '../../../../lib/aws/reconcile/recover.js';
import type { SourceHook } from '../../../../lib/aws/stage/source-hook.js';
import { DEFAULT_CLIENT } from '../../../../local-stack/authorization-server.js';
import { startGitHubDeliveries } from '../../../../local-stack/github-deliveries.js';
import { startInspector } from '../../../../local-stack/inspector/server.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import {
  gitHubOperationId,
  gitHubQueryParameters,
  gitHubResponseErrors,
} from '../../../helpers/github-openapi.js';
import { inspectorFetch } from '../../../helpers/inspector.js';
import {
  counts,
  localStoreAuth,
  localTokenEntry,
  reconcileStores,
  useReconcileRig,
} from '../../../helpers/reconcile-rig.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

const ddb = useDynamoDbLocal();
const SECRET = 'reconcile-test-secret';
const HOOK_PATH = '/repos/acme/web/hooks/77';
const APP_ID = '4242';
/** The GitHub App whose hook is `/app/hook`: the stand-in checks its JWT with the app's public key. */
const appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });

const BUCKET = 'reconcile-claims';
/** Tokens the stand-in no longer accepts (an expired token). */
const revoked = new Set<string>();

const rig = useReconcileRig({
  ddb,
  bucket: BUCKET,
  source: 'acme',
  forge: 'github',
  secret: SECRET,
  startForge: async ({ send, isAccessToken }) => {
    const forge = await startGitHubDeliveries({
      accepts: async (token) => {
        if (revoked.has(token)) return false;
        try {
          await jwtVerify(token, appKeys.publicKey, { issuer: APP_ID, algorithms: ['RS256'] });
          return true;
        } catch {
          // Not the app's JWT: an OAuth access token.
          return isAccessToken(token);
        }
      },
      send,
    });
    forge.addHook(HOOK_PATH, SECRET);
    return forge;
  },
});

afterEach(() => {
  // The stand-in stays honest: every answer it gave conforms to GitHub's description.
  const errors = rig.forge.responses
    .filter((response) => response.fault === undefined)
    .flatMap(gitHubResponseErrors);
  expect(errors).toEqual([]);
});

const hook: SourceHook = { kind: 'repo', api: '', id: 77, provider: 'local', owner: 'acme', repo: 'web' };
const deliveryLog = () => new DeliveryLog({ client: ddb.client(), tableName: rig.tables.deliveries });

/** The reconcile handler's environment: the local token entry, the App's, and these sources. */
function handlerVariables(sources: unknown[]): Record<string, string> {
  return {
    IS_OFFLINE: 'true',
    FORGEBRIDGE_BUS_NAME: 'forge',
    FORGEBRIDGE_DEDUPE_TABLE: rig.tables.dedupe,
    FORGEBRIDGE_TOKEN_TABLE: rig.tables.tokens,
    FORGEBRIDGE_DELIVERIES_TABLE: rig.tables.deliveries,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
      localTokenEntry(rig.authServer.issuer),
      { kind: 'github_app', provider: 'app', appId: APP_ID, installationId: 1, apiUrl: rig.forge.url },
    ]),
    FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
    FORGEBRIDGE_GITHUB_APP_PRIVATE_KEY: appKeys.privateKey
      .export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(sources),
  };
}

const localAuth = () => localStoreAuth(rig.authServer.issuer, ddb.documentClient(), rig.tables.tokens);

function run(options: Partial<ReconcileOptions> = {}) {
  const auth = localAuth();
  return reconcile({
    sources: [
      {
        name: 'acme',
        forge: 'github',
        // As the handler gives it: the hook's id, which GitHub sends as X-GitHub-Hook-ID (part of the dedupe key).
        hook: String(hook.id),
        windowSeconds: 3 * 24 * 60 * 60,
        api: gitHubDeliveryLog({ hook: { ...hook, api: rig.forge.url }, auth }),
      },
    ],
    ...reconcileStores(() => ddb.client(), rig.tables.dedupe, 3),
    deliveryLog: deliveryLog(),
    ...options,
  });
}

/** A fresh stand-in hook log: each test starts with no attempts. */
function resetHook() {
  rig.forge.addHook(HOOK_PATH, SECRET);
  rig.forge.redeliveries.length = 0;
  rig.forge.faults.down = false;
  rig.forge.faults.malformed = false;
  rig.forge.faults.rateLimitAfter = undefined;
  rig.bus.clear();
}

const payload = (n: number) => ({
  action: 'opened',
  issue: { number: n },
  repository: { id: 9, full_name: 'acme/web' },
});

async function logged(outcome: 'late' | 'redelivered', since: number) {
  const page = await deliveryLog().list({ status: outcome, source: 'acme', since, limit: 1000 });
  return page.records.map((record) => record.deliveryId as string);
}

describe('reconcile() with a GitHub repository hook', () => {
  it('300 attempts over 3 pages, 45 failed: redelivers the 30 that never reached us once, logs the 10 taken late, leaves the 5 with a later success; a second run redelivers nothing', async () => {
    resetHook();
    const started = Date.now();
    const at = (n: number) => started - 60 * 60 * 1000 + n * 1000;
    const ok: string[] = [];
    const lost: string[] = [];
    const late: string[] = [];
    const recovered: string[] = [];
    for (let n = 0; n < 250; n += 1)
      ok.push((await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n), at: at(n) })).guid);
    for (let n = 0; n < 30; n += 1) {
      // Never reached us: timed out before our side answered, or the gateway answered 502 / 413-less 5xx.
      const statusCode = n % 3 === 0 ? 0 : n % 3 === 1 ? 502 : 503;
      lost.push(
        (
          await rig.forge.deliver(HOOK_PATH, {
            event: 'issues',
            payload: payload(1000 + n),
            statusCode,
            at: at(300 + n),
          })
        ).guid,
      );
    }
    for (let n = 0; n < 10; n += 1) {
      late.push(
        (
          await rig.forge.deliver(HOOK_PATH, {
            event: 'issues',
            payload: payload(2000 + n),
            answeredLate: true,
            at: at(400 + n),
          })
        ).guid,
      );
    }
    for (let n = 0; n < 5; n += 1) {
      const first = await rig.forge.deliver(HOOK_PATH, {
        event: 'issues',
        payload: payload(3000 + n),
        statusCode: 500,
        at: at(500 + n),
      });
      await rig.forge.deliver(HOOK_PATH, {
        event: 'issues',
        payload: payload(3000 + n),
        guid: first.guid,
        redelivery: true,
        at: at(600 + n),
      });
      recovered.push(first.guid);
    }
    expect(rig.forge.hooks.get(HOOK_PATH)?.attempts).toHaveLength(300);
    const { logger, lines } = recordingLogger();

    const first = await run({ logger });
    await rig.forge.settled();
    expect(first).toEqual({
      sources: 1,
      listed: 300,
      failed: 40,
      alreadyOurs: 10,
      late: 10,
      redelivered: 30,
      recovered: 0,
      skipped: 0,
      gaveUp: 0,
      errors: 0,
      rateLimited: false,
      dryRun: false,
      bySource: { acme: { failedAtForge: 30, redelivered: 30, recovered: 0 } },
    });
    // Three pages of 100 through the Link header's cursor.
    expect(rig.forge.responses.filter((response) => response.operation === 'list')).toHaveLength(3);
    expect([...rig.forge.redeliveries].sort()).toEqual([...lost].sort());
    const onBus = counts(rig.bus.received);
    for (const guid of [...ok, ...lost, ...late, ...recovered]) expect(onBus.get(guid), guid).toBe(1);
    expect(onBus.size).toBe(295);
    expect((await logged('late', started - 1000)).sort()).toEqual([...late].sort());
    expect((await logged('redelivered', started - 1000)).sort()).toEqual([...lost].sort());
    expect(lines.filter((line) => line.message === 'reconcile run')).toEqual([
      { level: 'info', message: 'reconcile run', fields: first },
    ]);

    const second = await run();
    await rig.forge.settled();
    expect(second).toMatchObject({
      listed: 330,
      failed: 10,
      alreadyOurs: 10,
      late: 0,
      redelivered: 0,
      errors: 0,
    });
    expect(rig.forge.redeliveries).toHaveLength(30);
    expect(rig.bus.received).toHaveLength(295);
  });

  it("two hooks share GUIDs (two Apps on one URL): each hook's failed delivery is redelivered once, judged under its own hook", async () => {
    resetHook();
    const OTHER_PATH = '/repos/acme/web/hooks/78';
    rig.forge.addHook(OTHER_PATH, SECRET);
    const started = Date.now();
    const at = (n: number) => started - 60 * 60 * 1000 + n * 1000;
    // G1: hook 77's delivery reached us, hook 78's never did. Judged by the GUID alone, 78's would pass for ours
    // and be lost; judged under its hook, it is redelivered.
    const g1 = randomUUID();
    await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(1), guid: g1, at: at(1) });
    await rig.forge.deliver(OTHER_PATH, {
      event: 'issues',
      payload: payload(1),
      guid: g1,
      statusCode: 502,
      at: at(2),
    });
    // G2: neither reached us.
    const g2 = randomUUID();
    await rig.forge.deliver(HOOK_PATH, {
      event: 'issues',
      payload: payload(2),
      guid: g2,
      statusCode: 0,
      at: at(3),
    });
    await rig.forge.deliver(OTHER_PATH, {
      event: 'issues',
      payload: payload(2),
      guid: g2,
      statusCode: 503,
      at: at(4),
    });
    expect(counts(rig.bus.received).get(g1)).toBe(1);

    const auth = localAuth();
    const source = (id: number) => ({
      name: 'acme',
      forge: 'github',
      hook: String(id),
      windowSeconds: 3 * 24 * 60 * 60,
      api: gitHubDeliveryLog({ hook: { ...hook, id, api: rig.forge.url }, auth }),
    });
    const both = () =>
      reconcile({
        sources: [source(77), source(78)],
        ...reconcileStores(() => ddb.client(), rig.tables.dedupe, 3),
        deliveryLog: deliveryLog(),
      });
    const first = await both();
    await rig.forge.settled();
    expect(first).toMatchObject({
      sources: 2,
      listed: 4,
      failed: 3,
      alreadyOurs: 0,
      redelivered: 3,
      skipped: 0,
    });
    // One redelivery per failed hook delivery: g1 once (hook 78), g2 twice (77 and 78).
    expect([...rig.forge.redeliveries].sort()).toEqual([g1, g2, g2].sort());
    const onBus = counts(rig.bus.received);
    expect(onBus.get(g1)).toBe(2);
    expect(onBus.get(g2)).toBe(2);
    // A later run lists each redelivery as a success and asks for nothing.
    const second = await both();
    await rig.forge.settled();
    expect(second).toMatchObject({ listed: 7, failed: 0, redelivered: 0 });
    expect(counts(rig.bus.received).get(g2)).toBe(2);
  });

  it('the ingest down while the forge sends 500 deliveries, the forge never redelivering: one run recovers them, 0 lost, 0 doubled', async () => {
    resetHook();
    const guids: string[] = [];
    for (let n = 0; n < 500; n += 1) {
      // The middle 200 arrive while the ingest answers 503.
      rig.ingest.down = n >= 150 && n < 350;
      guids.push((await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n) })).guid);
    }
    rig.ingest.down = false;
    expect(counts(rig.bus.received).size).toBe(300);
    const report = await run({ maxRedeliveries: 500 });
    await rig.forge.settled();
    expect(report).toMatchObject({ listed: 500, failed: 200, redelivered: 200, alreadyOurs: 0, errors: 0 });
    const onBus = counts(rig.bus.received);
    expect(guids.filter((guid) => onBus.get(guid) !== 1)).toEqual([]);
    expect(rig.bus.received).toHaveLength(500);
  });

  it('redelivers at most "maxRedeliveries" per run and the rest on the next run, never one twice', async () => {
    resetHook();
    for (let n = 0; n < 12; n += 1)
      await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n), statusCode: 0 });
    expect(await run({ maxRedeliveries: 5 })).toMatchObject({ failed: 12, redelivered: 5, skipped: 7 });
    await rig.forge.settled();
    expect(await run({ maxRedeliveries: 5 })).toMatchObject({ failed: 7, redelivered: 5, skipped: 2 });
    await rig.forge.settled();
    expect(await run({ maxRedeliveries: 5 })).toMatchObject({ failed: 2, redelivered: 2, skipped: 0 });
    await rig.forge.settled();
    expect(new Set(rig.forge.redeliveries).size).toBe(12);
    expect(rig.forge.redeliveries).toHaveLength(12);
    expect(counts(rig.bus.received).size).toBe(12);
    expect(rig.bus.received).toHaveLength(12);
  });

  it('a wrong secret (every delivery 401) then the right one: the run after the fix redelivers them', async () => {
    resetHook();
    rig.forge.addHook(HOOK_PATH, 'the-old-secret');
    const guids: string[] = [];
    for (let n = 0; n < 20; n += 1)
      guids.push((await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n) })).guid);
    expect(rig.forge.hooks.get(HOOK_PATH)?.attempts.every((attempt) => attempt.status_code === 401)).toBe(
      true,
    );
    expect(rig.bus.received).toEqual([]);
    (rig.forge.hooks.get(HOOK_PATH) as { secret: string }).secret = SECRET;
    expect(await run()).toMatchObject({ failed: 20, redelivered: 20 });
    await rig.forge.settled();
    expect([...rig.bus.received].sort()).toEqual([...guids].sort());
  });

  it('stops on a rate limit mid-run and resumes on the next run', async () => {
    resetHook();
    for (let n = 0; n < 10; n += 1)
      await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n), statusCode: 502 });
    // The list and three redeliveries, then 403 with x-ratelimit-remaining: 0.
    rig.forge.faults.rateLimitAfter = 4;
    const { logger, lines } = recordingLogger();
    const limited = await run({ logger });
    expect(limited).toMatchObject({ failed: 10, redelivered: 3, skipped: 7, errors: 0, rateLimited: true });
    expect(
      lines.find((line) => line.message === 'forge api rate limited, resuming next run')?.fields,
    ).toMatchObject({
      source: 'acme',
      retryAfterSeconds: expect.any(Number),
    });
    rig.forge.faults.rateLimitAfter = undefined;
    await rig.forge.settled();
    // The one refused mid-call was claimed: it waits for its backoff, like any redelivery asked.
    const resumed = await run();
    expect(resumed).toMatchObject({ failed: 7, redelivered: 6, skipped: 1, rateLimited: false });
    await rig.forge.settled();
    expect(new Set(rig.forge.redeliveries).size).toBe(9);
    expect(rig.forge.redeliveries).toHaveLength(9);
  });

  it('ends normally with the error logged when the API is down, and redelivers nothing on a malformed answer', async () => {
    resetHook();
    for (let n = 0; n < 3; n += 1)
      await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n), statusCode: 0 });
    rig.forge.faults.down = true;
    const { logger, lines } = recordingLogger();
    expect(await run({ logger })).toMatchObject({ listed: 0, redelivered: 0, errors: 1, rateLimited: false });
    expect(lines.find((line) => line.message === 'reconcile of a source failed')).toMatchObject({
      level: 'error',
      fields: {
        source: 'acme',
        errorCode: 'forge_unavailable',
        error: `GET ${HOOK_PATH}/deliveries failed: 503 "Service Unavailable"`,
      },
    });
    rig.forge.faults.down = false;
    rig.forge.faults.malformed = true;
    const malformed = await run({ logger });
    expect(malformed).toMatchObject({ listed: 0, failed: 0, redelivered: 0, errors: 1 });
    expect(lines.at(-2)?.fields).toMatchObject({ errorCode: 'forge_malformed' });
    expect(rig.forge.redeliveries).toEqual([]);
    // The broken answer is one GitHub's description refuses: the validator sees the drift.
    const broken = rig.forge.responses.filter((response) => response.fault === 'malformed');
    expect(broken).toHaveLength(1);
    expect(gitHubResponseErrors(broken[0] as (typeof broken)[number])).toContain(
      `GET ${HOOK_PATH}/deliveries?per_page=100 200: /0 must have required property 'guid'`,
    );
  });

  it('renews a token that expired mid-run once, and goes on', async () => {
    resetHook();
    for (let n = 0; n < 4; n += 1)
      await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(n), statusCode: 0 });
    const before = rig.authServer.tokenRequests('client_credentials');
    const answersBefore = rig.forge.responses.length;
    // The second redelivery finds the token expired: the forge stops accepting it.
    let calls = 0;
    const auth = localAuth();
    const api = gitHubDeliveryLog({ hook: { ...hook, api: rig.forge.url }, auth });
    const expiring = {
      ...api,
      list: api.list.bind(api),
      async redeliver(attempt: Parameters<typeof api.redeliver>[0]) {
        calls += 1;
        if (calls === 2) revoked.add((await auth.authorization()).slice('Bearer '.length));
        return api.redeliver(attempt);
      },
    };
    const report = await run({
      sources: [{ name: 'acme', forge: 'github', windowSeconds: 259_200, api: expiring }],
    });
    expect(report).toMatchObject({ failed: 4, redelivered: 4, errors: 0 });
    expect(rig.authServer.tokenRequests('client_credentials') - before).toBe(1);
    expect(
      rig.forge.responses.slice(answersBefore).filter((response) => response.status === 401),
    ).toHaveLength(1);
  });

  it('runs from the environment alone through createReconcileHandler: a repository hook with the token store, an App hook with the app JWT', async () => {
    resetHook();
    rig.forge.addHook('/app/hook', SECRET);
    const repoLost = await rig.forge.deliver(HOOK_PATH, {
      event: 'issues',
      payload: payload(1),
      statusCode: 0,
    });
    const appLost = await rig.forge.deliver('/app/hook', {
      event: 'issues',
      payload: payload(2),
      statusCode: 504,
    });
    const { logger, lines } = recordingLogger();
    const variables = handlerVariables([
      { name: 'acme', forge: 'github', hook: { ...hook, api: rig.forge.url } },
      { name: 'acme-app', forge: 'github', hook: { kind: 'app', provider: 'app', api: rig.forge.url } },
    ]);
    const counted: unknown[] = [];
    const handler = createReconcileHandler({
      env: variables,
      clients: { dynamodb: ddb.client() },
      logger,
      metrics: { reconcile: (metric) => void counted.push(metric) },
    });
    const dry = await handler({ dryRun: true });
    expect(dry).toMatchObject({ sources: 2, failed: 2, redelivered: 2, dryRun: true });
    expect(rig.forge.redeliveries).toEqual([]);
    expect(await handler({ sourceName: 'acme-app' })).toMatchObject({
      sources: 1,
      failed: 1,
      redelivered: 1,
    });
    expect(rig.forge.redeliveries).toEqual([appLost.guid]);
    expect(await handler(undefined)).toMatchObject({ sources: 2, failed: 1, redelivered: 1, skipped: 0 });
    await rig.forge.settled();
    expect([...rig.forge.redeliveries].sort()).toEqual([repoLost.guid, appLost.guid].sort());
    expect(rig.bus.received).toContain(repoLost.guid);
    expect(lines.filter((line) => line.message === 'reconcile run')).toHaveLength(3);
    // Per source and run, the dry run counting nothing: the metrics the failed-at-forge alarm reads.
    expect(counted).toEqual([
      { source: 'acme-app', failedAtForge: 1, redelivered: 1, recovered: 0 },
      { source: 'acme', failedAtForge: 1, redelivered: 1, recovered: 0 },
      { source: 'acme-app', failedAtForge: 0, redelivered: 0, recovered: 0 },
    ]);
  });

  it("an App hook's deliveries are keyed with the hook id GitHub sends (read from one attempt): one the ingest took, which GitHub recorded as failed, is not redelivered", async () => {
    rig.forge.addHook('/app/hook', SECRET);
    rig.forge.redeliveries.length = 0;
    rig.bus.clear();
    // Through the ingest, which keys it with X-GitHub-Hook-ID, but answered past GitHub's 10 s: recorded failed.
    const taken = await rig.forge.deliver('/app/hook', {
      event: 'issues',
      payload: payload(11),
      answeredLate: true,
    });
    const lost = await rig.forge.deliver('/app/hook', {
      event: 'issues',
      payload: payload(12),
      statusCode: 504,
    });
    await rig.forge.deliver('/app/hook', { event: 'issues', payload: payload(13) });
    const hookId = rig.forge.hooks.get('/app/hook')?.id as string;
    expect(hookId).toMatch(/^\d+$/);
    expect(rig.bus.received.filter((id) => id === taken.guid)).toHaveLength(1);
    const since = Date.now() - 1000;
    const handler = createReconcileHandler({
      env: handlerVariables([
        { name: 'acme', forge: 'github', hook: { kind: 'app', provider: 'app', api: rig.forge.url } },
      ]),
      clients: { dynamodb: ddb.client() },
      logger: recordingLogger().logger,
    });
    const answersBefore = rig.forge.responses.length;
    expect(await handler(undefined)).toMatchObject({ failed: 2, alreadyOurs: 1, late: 1, redelivered: 1 });
    expect(rig.forge.redeliveries).toEqual([lost.guid]);
    // The id is read once, from one attempt's request headers (GET /app/hook/deliveries/{id}).
    const gets = rig.forge.responses.slice(answersBefore).filter((response) => response.operation === 'get');
    expect(gets).toHaveLength(1);
    await rig.forge.settled();
    expect(rig.bus.received.filter((id) => id === taken.guid)).toHaveLength(1);
    expect(rig.bus.received.filter((id) => id === lost.guid)).toHaveLength(1);
    // The late row sits beside the ingest's, under the same hook.
    const late = await deliveryLog().list({ status: 'late', source: 'acme', since, limit: 100 });
    expect(late.records.map((record) => [record.deliveryId, record.hook])).toEqual([[taken.guid, hookId]]);
    // A second run: the lost one's latest attempt is the redelivery's success, the taken one is still ours.
    expect(await handler(undefined)).toMatchObject({ failed: 1, alreadyOurs: 1, late: 0, redelivered: 0 });
    expect(rig.forge.redeliveries).toEqual([lost.guid]);
  });

  it('publishes a 12 MB delivery (the forge recorded 413) once through the claim check from the API payload, and a subscriber receives it', async () => {
    resetHook();
    const big = { ...payload(7), blob: 'x'.repeat(12 * 1024 * 1024) };
    const answersBefore = rig.forge.responses.length;
    const attempt = await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: big, statusCode: 413 });
    const recover = createRecovery({
      publisher: rig.publisher,
      dedupe: { client: ddb.client(), tableName: rig.tables.dedupe },
      deliveryLog: deliveryLog(),
    });
    // Without a recovery it is never redelivered into the same 413.
    expect(await run()).toMatchObject({ failed: 1, redelivered: 0, recovered: 0, skipped: 1 });
    const first = await run({ recover });
    expect(first).toMatchObject({ failed: 1, redelivered: 0, recovered: 1, errors: 0 });
    expect(rig.forge.redeliveries).toEqual([]);
    expect(rig.bus.received).toEqual([attempt.guid]);
    const detail = JSON.parse(rig.bus.details[0] as string) as Record<string, unknown>;
    expect(detail).toMatchObject({
      delivery: attempt.guid,
      event: 'issues',
      action: 'opened',
      forge: 'github',
      source: 'acme',
      verified: 'forge-api',
      payloadRef: { bucket: BUCKET, bytes: Buffer.byteLength(JSON.stringify(big)) },
    });
    const received = await resolveDelivery({ detail }, { s3: new S3Client(rig.s3.clientConfig) });
    expect(received.payload).toEqual(big);
    const rows = await deliveryLog().list({ status: 'recovered', source: 'acme', limit: 10 });
    expect(rows.records.map((row) => [row.deliveryId, row.verdict, row.reason])).toEqual([
      [attempt.guid, 'forge_api', 'recovered from forge API'],
    ]);
    // Exactly once: a later run finds the dedupe record completed.
    const second = await run({ recover });
    expect(second).toMatchObject({ failed: 1, alreadyOurs: 1, late: 0, recovered: 0 });
    expect(rig.bus.received).toHaveLength(1);
    const gets = rig.forge.responses.slice(answersBefore).filter((response) => response.operation === 'get');
    expect(gets).toHaveLength(1);
  }, 60_000);

  it('backs off a redelivery that failed again, then gives it up near the end of the forge window with the metric line', async () => {
    resetHook();
    const lost = await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(1), statusCode: 0 });
    rig.ingest.down = true;
    const t0 = Date.now();
    // A short window (1000 s) and backoff (600 s): the second try would be the last within the window.
    const source = (api: ReturnType<typeof gitHubDeliveryLog>) => [
      { name: 'acme', forge: 'github', windowSeconds: 1_000, api },
    ];
    const auth = localAuth();
    const api = gitHubDeliveryLog({ hook: { ...hook, api: rig.forge.url }, auth });
    try {
      expect(await run({ sources: source(api), now: () => t0 })).toMatchObject({ failed: 1, redelivered: 1 });
      await rig.forge.settled();
      // The redelivery failed again (503): within its backoff nothing is asked.
      expect(await run({ sources: source(api), now: () => t0 + 300_000 })).toMatchObject({
        failed: 1,
        redelivered: 0,
        skipped: 1,
      });
      const { logger, lines } = recordingLogger();
      const last = await run({
        sources: source(api),
        now: () => t0 + 700_000,
        logger,
        maxBackoffSeconds: 600,
        metricNamespace: 'fb/test',
      });
      expect(last).toMatchObject({ failed: 1, redelivered: 0, gaveUp: 1 });
      expect(lines.find((line) => line.message === 'delivery given up')).toMatchObject({
        level: 'error',
        fields: {
          delivery: lost.guid,
          source: 'acme',
          ReconcileGaveUpDeliveries: 1,
          _aws: {
            CloudWatchMetrics: [
              { Namespace: 'fb/test', Metrics: [{ Name: 'ReconcileGaveUpDeliveries', Unit: 'Count' }] },
            ],
          },
        },
      });
      // Given up is final: a later run asks for nothing.
      expect(await run({ sources: source(api), now: () => t0 + 900_000 })).toMatchObject({
        redelivered: 0,
        gaveUp: 0,
        skipped: 1,
      });
      expect(rig.forge.redeliveries).toEqual([lost.guid]);
    } finally {
      rig.ingest.down = false;
    }
  });

  it('the inspector shows how each came back: "redelivered by reconciler", "recovered from forge API", and the late ones', async () => {
    const inspector = await startInspector({ log: deliveryLog(), sources: [], rules: [] });
    try {
      const rows = async (status: string) => {
        const answer = await inspectorFetch(
          inspector.url,
          `/api/deliveries?status=${status}&source=acme&limit=500`,
        );
        expect(answer.status).toBe(200);
        return (
          (await answer.json()) as {
            records: { outcome: string; reason?: string; verdict: string; hook?: string }[];
          }
        ).records;
      };
      const redelivered = await rows('redelivered');
      expect(redelivered.length).toBeGreaterThanOrEqual(30);
      expect(new Set(redelivered.map((row) => [row.outcome, row.reason, row.verdict].join('|')))).toEqual(
        new Set(['redelivered|redelivered by reconciler|forge_api']),
      );
      expect((await rows('recovered')).map((row) => row.reason)).toEqual(['recovered from forge API']);
      // The first test's 10 (the App hook's test logs one of its own).
      const late = (await rows('late')).filter((row) => row.hook === String(hook.id));
      expect(late).toHaveLength(10);
      expect(
        late.every(
          (row) =>
            row.reason === 'the forge recorded no answer (timed out) but it was taken: not redelivered',
        ),
      ).toBe(true);
    } finally {
      await inspector.stop();
    }
  });

  it("the stand-in refuses with a 400, as GitHub's description declares, each list parameter outside its range, and filters by status", async () => {
    resetHook();
    await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(1), statusCode: 502 });
    await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(2), statusCode: 302 });
    await rig.forge.deliver(HOOK_PATH, { event: 'issues', payload: payload(3), statusCode: 0 });
    const token = (await localAuth().authorization()).slice('Bearer '.length);
    const list = async (query: string) => {
      const answer = await fetch(`${rig.forge.url}${HOOK_PATH}/deliveries?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return {
        status: answer.status,
        body: (await answer.json()) as { status_code?: number; message?: string },
      };
    };
    for (const query of ['per_page=101', 'per_page=0', 'per_page=ten', 'status=timeout', 'status=FAILURE']) {
      const answer = await list(query);
      expect([query, answer.status], answer.body.message).toEqual([query, 400]);
    }
    expect((await list('per_page=100')).status).toBe(200);
    const codes = async (query: string) =>
      ((await list(query)).body as unknown as { status_code: number }[]).map((item) => item.status_code);
    expect(await codes('status=failure')).toEqual([502]);
    expect(await codes('status=success')).toEqual([302]);
    expect((await codes('per_page=1')).length).toBe(1);
  });

  it("covers the three hook-delivery operations of GitHub's description and only the query parameters it declares", () => {
    const operations = new Set(
      rig.forge.responses
        .filter((response) => response.operation !== 'error')
        .map((response) => gitHubOperationId(response.path, response.method)),
    );
    expect([...operations].sort()).toEqual([
      'apps/get-webhook-delivery',
      'apps/list-webhook-deliveries',
      'apps/redeliver-webhook-delivery',
      'repos/get-webhook-delivery',
      'repos/list-webhook-deliveries',
      'repos/redeliver-webhook-delivery',
    ]);
    const declared = gitHubQueryParameters(`${HOOK_PATH}/deliveries`, 'GET');
    for (const response of rig.forge.responses.filter((r) => r.operation === 'list')) {
      for (const name of new URL(response.path, rig.forge.url).searchParams.keys())
        expect(declared).toContain(name);
    }
  });
});
