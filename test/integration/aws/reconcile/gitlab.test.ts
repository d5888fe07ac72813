import { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { createReconcileHandler, DeliveryLog, resolveDelivery } from '../../../../lib/aws/index.js';
import { gitLabDeliveryLog } from '../../../../lib/aws/reconcile/gitlab.js';
import { type ReconcileOptions, reconcile } from '../../../../lib/aws/reconcile/reconcile.js';
import { createRecovery } from '../../../../lib/aws/reconcile/recover.js';
import type { SourceHook } from '../../../../lib/aws/stage/source-hook.js';
import { DEFAULT_CLIENT } from '../../../../local-stack/authorization-server.js';
import { startGitLabEvents } from '../../../../local-stack/gitlab-events.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { gitLabResponseErrors } from '../../../helpers/gitlab-events-schema.js';
import {
  counts,
  localStoreAuth,
  localTokenEntry,
  reconcileStores,
  useReconcileRig,
} from '../../../helpers/reconcile-rig.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

const ddb = useDynamoDbLocal();
const SECRET = 'reconcile-gitlab-secret';
const PROJECT_HOOK = '/projects/acme%2Fweb/hooks/5';
const GROUP_HOOK = '/groups/acme/hooks/9';
const SOURCE = 'acme-gl';

const BUCKET = 'reconcile-gitlab-claims';

const rig = useReconcileRig({
  ddb,
  bucket: BUCKET,
  source: SOURCE,
  forge: 'gitlab',
  secret: SECRET,
  startForge: ({ send, isAccessToken }) => startGitLabEvents({ accepts: isAccessToken, send }),
});

afterEach(() => {
  // The stand-in stays honest: every answer it gave conforms to GitLab's documented fields.
  const errors = rig.forge.responses
    .filter((response) => response.fault === undefined)
    .flatMap(gitLabResponseErrors);
  expect(errors).toEqual([]);
});

const projectHook = (): SourceHook => ({
  kind: 'project',
  api: rig.forge.api,
  id: 5,
  provider: 'local',
  project: 'acme/web',
});
const deliveryLog = () => new DeliveryLog({ client: ddb.client(), tableName: rig.tables.deliveries });
const localAuth = () => localStoreAuth(rig.authServer.issuer, ddb.documentClient(), rig.tables.tokens);

function run(options: Partial<ReconcileOptions> & { perPage?: number } = {}) {
  const auth = localAuth();
  const { perPage, ...rest } = options;
  return reconcile({
    sources: [
      {
        name: SOURCE,
        forge: 'gitlab',
        windowSeconds: 7 * 24 * 60 * 60,
        api: gitLabDeliveryLog({ hook: projectHook(), auth, perPage }),
      },
    ],
    ...reconcileStores(() => ddb.client(), rig.tables.dedupe, 7),
    deliveryLog: deliveryLog(),
    ...rest,
  });
}

function resetHooks() {
  rig.forge.addHook(PROJECT_HOOK, SECRET);
  rig.forge.addHook(GROUP_HOOK, SECRET);
  rig.forge.resends.length = 0;
  rig.forge.faults.down = false;
  rig.forge.faults.malformed = false;
  rig.forge.faults.rateLimitAfter = undefined;
  rig.bus.clear();
}

const payload = (n: number) => ({
  object_kind: 'issue',
  event_type: 'issue',
  project: { id: 7, path_with_namespace: 'acme/web' },
  object_attributes: { iid: n, action: 'open' },
});

async function logged(outcome: 'late' | 'redelivered', since: number) {
  const page = await deliveryLog().list({ status: outcome, source: SOURCE, since, limit: 1000 });
  return page.records.map((record) => record.deliveryId as string);
}

describe('reconcile() with a GitLab project hook', () => {
  it('56 events over 3 pages, 22 failed at GitLab: resends the 12 that never reached us once, logs the 6 taken late, leaves the 4 with a later success; a second run resends nothing', async () => {
    resetHooks();
    const started = Date.now();
    const at = (n: number) => started - 60 * 60 * 1000 + n * 1000;
    const deliver = async (n: number, extra: { status?: string; answeredLate?: boolean; key?: string }) =>
      (
        await rig.forge.deliver(PROJECT_HOOK, {
          event: 'Issue Hook',
          payload: payload(n),
          at: at(n),
          ...extra,
        })
      ).request_headers['Idempotency-Key'] as string;
    const ok: string[] = [];
    const lost: string[] = [];
    const late: string[] = [];
    const laterOk: string[] = [];
    for (let n = 0; n < 30; n += 1) ok.push(await deliver(n, {}));
    // Never reached us: GitLab got no answer (`internal error`), or the gateway answered 502 / 503.
    for (let n = 0; n < 12; n += 1)
      lost.push(await deliver(100 + n, { status: ['internal error', '502', '503'][n % 3] as string }));
    for (let n = 0; n < 6; n += 1) late.push(await deliver(200 + n, { answeredLate: true }));
    for (let n = 0; n < 4; n += 1) {
      const key = await deliver(300 + n, { status: '500' });
      await deliver(400 + n, { key });
      laterOk.push(key);
    }
    expect(rig.forge.hooks.get(PROJECT_HOOK)?.events).toHaveLength(56);
    expect(rig.bus.received).toHaveLength(40);
    const { logger, lines } = recordingLogger();

    const first = await run({ logger, perPage: 20 });
    expect(first).toEqual({
      sources: 1,
      listed: 56,
      failed: 18,
      alreadyOurs: 6,
      late: 6,
      redelivered: 12,
      recovered: 0,
      skipped: 0,
      gaveUp: 0,
      errors: 0,
      rateLimited: false,
      dryRun: false,
      bySource: { [SOURCE]: { failedAtForge: 12, redelivered: 12, recovered: 0 } },
    });
    const lists = rig.forge.responses.filter((response) => response.operation === 'list');
    expect(lists.map((response) => new URL(response.path, rig.forge.api).searchParams.get('page'))).toEqual([
      '1',
      '2',
      '3',
    ]);
    expect([...rig.forge.resends].sort()).toEqual([...lost].sort());
    const onBus = counts(rig.bus.received);
    for (const key of [...ok, ...lost, ...late, ...laterOk]) expect(onBus.get(key), key).toBe(1);
    expect(rig.bus.received).toHaveLength(52);
    expect((await logged('late', started - 1000)).sort()).toEqual([...late].sort());
    expect((await logged('redelivered', started - 1000)).sort()).toEqual([...lost].sort());
    expect(lines.filter((line) => line.message === 'reconcile run')).toEqual([
      { level: 'info', message: 'reconcile run', fields: first },
    ]);

    const second = await run({ perPage: 20 });
    expect(second).toMatchObject({
      listed: 68,
      failed: 6,
      alreadyOurs: 6,
      late: 0,
      redelivered: 0,
      errors: 0,
    });
    expect(rig.forge.resends).toHaveLength(12);
    expect(rig.bus.received).toHaveLength(52);
  });

  it('the ingest down while GitLab sends 60 deliveries: one run resends the 25 it refused, 0 lost, 0 doubled', async () => {
    resetHooks();
    const keys: string[] = [];
    for (let n = 0; n < 60; n += 1) {
      rig.ingest.down = n >= 20 && n < 45;
      const event = await rig.forge.deliver(PROJECT_HOOK, { event: 'Issue Hook', payload: payload(n) });
      keys.push(event.request_headers['Idempotency-Key'] as string);
    }
    rig.ingest.down = false;
    expect(counts(rig.bus.received).size).toBe(35);
    expect(await run()).toMatchObject({ listed: 60, failed: 25, redelivered: 25, errors: 0 });
    const onBus = counts(rig.bus.received);
    expect(keys.filter((key) => onBus.get(key) !== 1)).toEqual([]);
    expect(rig.bus.received).toHaveLength(60);
  });

  it('stops on a 429 with retry-after mid-run and resumes on the next run', async () => {
    resetHooks();
    for (let n = 0; n < 6; n += 1)
      await rig.forge.deliver(PROJECT_HOOK, { event: 'Issue Hook', payload: payload(n), status: '502' });
    // The list and two resends, then 429 (GitLab limits resends to five a minute per hook and user).
    rig.forge.faults.rateLimitAfter = 3;
    const { logger, lines } = recordingLogger();
    expect(await run({ logger })).toMatchObject({
      failed: 6,
      redelivered: 2,
      skipped: 4,
      errors: 0,
      rateLimited: true,
    });
    expect(
      lines.find((line) => line.message === 'forge api rate limited, resuming next run')?.fields,
    ).toEqual({
      source: SOURCE,
      retryAfterSeconds: 60,
    });
    rig.forge.faults.rateLimitAfter = undefined;
    // The one refused mid-call was claimed: it waits for its backoff.
    expect(await run()).toMatchObject({ failed: 4, redelivered: 3, skipped: 1, rateLimited: false });
    expect(new Set(rig.forge.resends).size).toBe(5);
    expect(rig.forge.resends).toHaveLength(5);
  });

  it('ends normally with the error logged when the API is down, and resends nothing on a malformed answer', async () => {
    resetHooks();
    for (let n = 0; n < 3; n += 1)
      await rig.forge.deliver(PROJECT_HOOK, {
        event: 'Issue Hook',
        payload: payload(n),
        status: 'internal error',
      });
    rig.forge.faults.down = true;
    const { logger, lines } = recordingLogger();
    expect(await run({ logger })).toMatchObject({ listed: 0, redelivered: 0, errors: 1, rateLimited: false });
    expect(lines.find((line) => line.message === 'reconcile of a source failed')).toMatchObject({
      level: 'error',
      fields: {
        source: SOURCE,
        errorCode: 'forge_unavailable',
        error: `GET /api/v4${PROJECT_HOOK}/events failed: 503 "503 Service Unavailable"`,
      },
    });
    rig.forge.faults.down = false;
    rig.forge.faults.malformed = true;
    expect(await run({ logger })).toMatchObject({ listed: 0, failed: 0, redelivered: 0, errors: 1 });
    expect(lines.at(-2)?.fields).toMatchObject({
      errorCode: 'forge_malformed',
      error: `GET /api/v4${PROJECT_HOOK}/events answered an event without a "request_headers" object`,
    });
    expect(rig.forge.resends).toEqual([]);
    // The broken answer is one GitLab's documented fields refuse: the validator sees the drift.
    const broken = rig.forge.responses.filter((response) => response.fault === 'malformed');
    expect(broken).toHaveLength(1);
    expect(gitLabResponseErrors(broken[0] as (typeof broken)[number])).toContain(
      `GET /api/v4${PROJECT_HOOK}/events?per_page=20&page=1 200: /0 must have required property 'request_headers'`,
    );
  });

  it('publishes a 12 MB delivery (answered 413) once through the claim check from its request_data, and a subscriber receives it', async () => {
    resetHooks();
    const big = { ...payload(7), blob: 'x'.repeat(12 * 1024 * 1024) };
    const event = await rig.forge.deliver(PROJECT_HOOK, { event: 'Issue Hook', payload: big, status: '413' });
    const key = event.request_headers['Idempotency-Key'] as string;
    const recover = createRecovery({
      publisher: rig.publisher,
      dedupe: { client: ddb.client(), tableName: rig.tables.dedupe },
      deliveryLog: deliveryLog(),
    });
    const first = await run({ recover });
    expect(first).toMatchObject({ failed: 1, redelivered: 0, recovered: 1, errors: 0 });
    expect(rig.forge.resends).toEqual([]);
    expect(rig.bus.received).toEqual([key]);
    const detail = JSON.parse(rig.bus.details[0] as string) as Record<string, unknown>;
    expect(detail).toMatchObject({
      delivery: key,
      forge: 'gitlab',
      source: SOURCE,
      verified: 'forge-api',
      payloadRef: { bucket: BUCKET, bytes: Buffer.byteLength(JSON.stringify(big)) },
    });
    const received = await resolveDelivery({ detail }, { s3: new S3Client(rig.s3.clientConfig) });
    expect(received.payload).toEqual(big);
    const rows = await deliveryLog().list({ status: 'recovered', source: SOURCE, limit: 10 });
    expect(rows.records.map((row) => [row.deliveryId, row.verdict, row.reason])).toEqual([
      [key, 'forge_api', 'recovered from forge API'],
    ]);
    // Exactly once: a later run finds the dedupe record completed.
    expect(await run({ recover })).toMatchObject({ failed: 1, alreadyOurs: 1, late: 0, recovered: 0 });
    expect(rig.bus.received).toHaveLength(1);
  }, 60_000);

  it('runs from the environment alone through createReconcileHandler: a group hook, a dry run first', async () => {
    resetHooks();
    const lost = await rig.forge.deliver(GROUP_HOOK, {
      event: 'Push Hook',
      payload: { object_kind: 'push', ref: 'refs/heads/main', project: { id: 8 } },
      status: 'internal error',
    });
    const variables = {
      IS_OFFLINE: 'true',
      FORGEBRIDGE_BUS_NAME: 'forge',
      FORGEBRIDGE_DEDUPE_TABLE: rig.tables.dedupe,
      FORGEBRIDGE_TOKEN_TABLE: rig.tables.tokens,
      FORGEBRIDGE_DELIVERIES_TABLE: rig.tables.deliveries,
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([localTokenEntry(rig.authServer.issuer)]),
      FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
        {
          name: SOURCE,
          forge: 'gitlab',
          hook: { kind: 'group', group: 'acme', id: 9, provider: 'local', api: rig.forge.api },
        },
      ]),
    };
    const { logger } = recordingLogger();
    const handler = createReconcileHandler({
      env: variables,
      clients: { dynamodb: ddb.client() },
      logger,
      metrics: false,
    });
    expect(await handler({ dryRun: true })).toMatchObject({
      sources: 1,
      failed: 1,
      redelivered: 1,
      dryRun: true,
    });
    expect(rig.forge.resends).toEqual([]);
    expect(await handler(undefined)).toMatchObject({ sources: 1, failed: 1, redelivered: 1, errors: 0 });
    const key = lost.request_headers['Idempotency-Key'] as string;
    expect(rig.forge.resends).toEqual([key]);
    expect(rig.bus.received).toEqual([key]);
    expect(rig.forge.hooks.get(GROUP_HOOK)?.events.map((event) => event.response_status)).toEqual([
      '202',
      'internal error',
    ]);
    const rows = await deliveryLog().list({ status: 'redelivered', source: SOURCE, limit: 10 });
    expect(rows.records.map((row) => [row.deliveryId, row.reason])).toContainEqual([
      key,
      'redelivered by reconciler',
    ]);
  });

  it('the stand-in filters by status as GitLab documents it, and refuses a value it does not know', async () => {
    const list = async (query: string) => {
      const answer = await fetch(`${rig.forge.api}${GROUP_HOOK}/events?${query}`, {
        headers: { 'private-token': await authToken() },
      });
      return { status: answer.status, body: (await answer.json()) as { response_status: string }[] };
    };
    const statuses = async (query: string) => (await list(query)).body.map((event) => event.response_status);
    expect(await statuses('status=successful')).toEqual(['202']);
    expect(await statuses('status[]=client_failure&status[]=server_failure')).toEqual([]);
    expect(await statuses('status=202')).toEqual(['202']);
    expect(await statuses('status=200')).toEqual([]);
    expect(await statuses('status=200,202')).toEqual(['202']);
    expect((await list('status=timeout')).status).toBe(400);
  });

  it('the stand-in refuses, as GitLab does, each list parameter outside its declared range', async () => {
    resetHooks();
    const refused = async (query: string) => {
      const answer = await fetch(`${rig.forge.api}${GROUP_HOOK}/events?${query}`, {
        headers: { 'private-token': await authToken() },
      });
      return [answer.status, await answer.json()];
    };
    const invalid = (name: string) => [400, { error: `${name} does not have a valid value` }];
    expect(await refused('per_page=100&page=1')).toEqual(invalid('per_page'));
    expect(await refused('per_page=21')).toEqual(invalid('per_page'));
    expect(await refused('per_page=0')).toEqual(invalid('per_page'));
    expect(await refused('per_page=ten')).toEqual([400, { error: 'per_page is invalid' }]);
    expect(await refused('page=two')).toEqual([400, { error: 'page is invalid' }]);
    expect(await refused('status=299')).toEqual(invalid('status'));
    expect(await refused('status=toString')).toEqual(invalid('status'));
    expect((await refused('per_page=20&page=1'))[0]).toBe(200);
  });

  it('asks GitLab for 20 events a page by default, and lists 120 events over 6 pages', async () => {
    resetHooks();
    const started = Date.now();
    for (let n = 0; n < 120; n += 1) {
      await rig.forge.deliver(PROJECT_HOOK, {
        event: 'Issue Hook',
        payload: payload(n),
        at: started - 60_000 + n,
        status: '200',
      });
    }
    rig.forge.responses.length = 0;
    expect(await run()).toMatchObject({ listed: 120, failed: 0, errors: 0 });
    const lists = rig.forge.responses.filter((response) => response.operation === 'list');
    expect(lists.map((response) => new URL(response.path, rig.forge.api).search)).toEqual(
      [1, 2, 3, 4, 5, 6].map((page) => `?per_page=20&page=${page}`),
    );
  });
});

async function authToken(): Promise<string> {
  const auth = localAuth();
  return (await auth.authorization()).slice('Bearer '.length);
}
