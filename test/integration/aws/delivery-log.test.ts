// The delivery log against DynamoDB Local, on the table infra/tables.ts defines (by-day index, TTL on expiresAt):
// records and their raw bodies read back, newest-first pages with filters, ten subscribers reporting at once
// (also before the ingest's record lands), and withDeliveryReport around a real handler on success and on error.
import { randomUUID } from 'node:crypto';
import { DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import {
  DeliveryLog,
  type DeliveryLogEntry,
  type DeliveryRecord,
  withDeliveryReport,
} from '../../../lib/aws/delivery-log/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();

async function table(): Promise<string> {
  const name = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, name);
  return name;
}

const MINUTE = 60_000;

function entry(overrides: Partial<DeliveryLogEntry> = {}): DeliveryLogEntry {
  return {
    deliveryId: randomUUID(),
    event: 'issues',
    action: 'opened',
    forge: 'github',
    source: 'default',
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    headers: { 'X-GitHub-Event': 'issues', 'X-Hub-Signature-256': 'sha256=5eed5eed5eed' },
    body: '{"action":"opened","issue":{"number":1}}',
    ...overrides,
  };
}

async function allPages(
  log: DeliveryLog,
  query: Parameters<DeliveryLog['list']>[0],
): Promise<DeliveryRecord[]> {
  const records: DeliveryRecord[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const answer = await log.list({ ...query, cursor });
    records.push(...answer.records);
    cursor = answer.cursor;
    if (cursor === undefined) return records;
  }
  throw new Error('too many pages');
}

describe('DeliveryLog on DynamoDB Local', () => {
  it('records a request and gets it back with its raw body, masked headers and TTL; a redelivery is another record', async () => {
    const tableName = await table();
    const log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true, ttlSeconds: 3600 });
    const first = entry({ receivedAt: Date.now() - 2_000, eventId: 'event-1' });
    const body = Buffer.from('{"zeta":1,  "alpha":"\\u00e9"}\n');
    expect(await log.record({ ...first, body })).toMatchObject({ ok: true });
    const again = await log.record({
      ...first,
      receivedAt: Date.now(),
      outcome: 'duplicate',
      httpStatus: 200,
      body,
    });
    expect(again.ok).toBe(true);

    const details = await log.get(first.deliveryId as string);
    expect(details?.records.map((record) => record.outcome)).toEqual(['duplicate', 'published']);
    const published = details?.records[1];
    expect(published).toMatchObject({
      deliveryId: first.deliveryId,
      event: 'issues',
      action: 'opened',
      forge: 'github',
      source: 'default',
      verdict: 'verified',
      httpStatus: 202,
      outcome: 'published',
      eventId: 'event-1',
      bodyBytes: body.byteLength,
      headers: { 'x-github-event': 'issues', 'x-hub-signature-256': 'sha256=[masked]' },
    });
    // the exact bytes, as a replay needs them
    expect(Buffer.from(published?.body as Uint8Array).equals(body)).toBe(true);
    expect(JSON.stringify(details)).not.toContain('5eed5eed');

    const ttl = await ddb.client().send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription).toMatchObject({
      AttributeName: 'expiresAt',
      TimeToLiveStatus: 'ENABLED',
    });
    const raw = await ddb.documentClient().send(
      new GetCommand({
        TableName: tableName,
        Key: {
          pk: `delivery#${first.deliveryId}`,
          sk: `record#${new Date(published?.receivedAt ?? 0).toISOString()}#${published?.recordId}`,
        },
      }),
    );
    expect(raw.Item?.expiresAt).toBe(Math.floor((published?.receivedAt ?? 0) / 1000) + 3600);

    await expect(log.get('never-recorded')).resolves.toBeUndefined();
  });

  it('keeps the payload out by default and a too-large one out with a flag', async () => {
    const tableName = await table();
    const off = new DeliveryLog({ client: ddb.client(), tableName });
    const on = new DeliveryLog({
      client: ddb.client(),
      tableName,
      storePayload: true,
      payloadMaxBytes: 1024,
    });
    const a = entry();
    const b = entry({ body: Buffer.alloc(4096, 0x20) });
    await off.record(a);
    await on.record(b);
    expect((await off.get(a.deliveryId as string))?.latest).toMatchObject({ payloadOmitted: 'disabled' });
    expect((await off.get(a.deliveryId as string))?.latest).not.toHaveProperty('body');
    expect((await on.get(b.deliveryId as string))?.latest).toMatchObject({
      payloadOmitted: 'too_large',
      bodyBytes: 4096,
    });
  });

  it('lists newest first across shards and days, page by page, with event, status and time-window filters', async () => {
    const tableName = await table();
    const log = new DeliveryLog({ client: ddb.client(), tableName, indexShards: 4 });
    const now = Date.now();
    const recorded: {
      id: string;
      at: number;
      event: string;
      action: string;
      outcome: DeliveryLogEntry['outcome'];
    }[] = [];
    for (let index = 0; index < 23; index += 1) {
      // every third one a day and a half back, so pages cross days; the rest minutes apart
      const at = index % 3 === 0 ? now - 36 * 60 * MINUTE - index * MINUTE : now - index * MINUTE;
      const event = index % 2 === 0 ? 'issues' : 'push';
      const action = index % 4 === 0 ? 'closed' : 'opened';
      const outcome = index % 5 === 0 ? 'failed' : 'published';
      const id = `d-${String(index).padStart(2, '0')}`;
      recorded.push({ id, at, event, action, outcome });
      const result = await log.record(
        entry({
          deliveryId: id,
          receivedAt: at,
          event,
          action,
          outcome,
          httpStatus: outcome === 'failed' ? 503 : 202,
        }),
      );
      expect(result.ok).toBe(true);
    }
    const newestFirst = [...recorded].sort((a, b) => b.at - a.at);

    const pages: DeliveryRecord[][] = [];
    let cursor: string | undefined;
    do {
      const page = await log.list({ limit: 5, cursor });
      pages.push(page.records);
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(pages[0]).toHaveLength(5);
    expect(pages.flat().map((record) => record.deliveryId)).toEqual(newestFirst.map((record) => record.id));
    expect(pages.flat()[0]).not.toHaveProperty('headers');

    const issuesOpened = await allPages(log, { event: 'issues.opened', limit: 2 });
    expect(issuesOpened.map((record) => record.deliveryId)).toEqual(
      newestFirst.filter((r) => r.event === 'issues' && r.action === 'opened').map((r) => r.id),
    );
    const pushes = await allPages(log, { event: 'push', limit: 50 });
    expect(pushes.map((record) => record.deliveryId)).toEqual(
      newestFirst.filter((r) => r.event === 'push').map((r) => r.id),
    );
    const failed = await allPages(log, { status: 'failed', limit: 3 });
    expect(failed.map((record) => record.deliveryId)).toEqual(
      newestFirst.filter((r) => r.outcome === 'failed').map((r) => r.id),
    );
    expect(failed.every((record) => record.httpStatus === 503)).toBe(true);

    const since = now - 10.5 * MINUTE;
    const until = now - 2.5 * MINUTE;
    const window = await allPages(log, { since, until, limit: 4 });
    expect(window.map((record) => record.deliveryId)).toEqual(
      newestFirst.filter((r) => r.at >= since && r.at < until).map((r) => r.id),
    );
    expect(window.length).toBeGreaterThan(3);
  });

  it('keeps all ten subscribers reporting at once, also when they report before the ingest record lands', async () => {
    const tableName = await table();
    const log = new DeliveryLog({ client: ddb.client(), tableName });
    const early = entry();
    const deliveryId = early.deliveryId as string;
    const names = Array.from({ length: 10 }, (_, index) => `subscriber-${index}`);
    // ten clients, so the updates really race on separate connections
    await Promise.all(
      names.map((subscriber, index) =>
        new DeliveryLog({ client: ddb.client(), tableName }).recordSubscriber(deliveryId, {
          subscriber,
          outcome: index % 3 === 0 ? 'error' : 'ok',
          durationMs: index,
          // A subscriber whose forge calls waited says how long; one that did not wait (0) leaves it out.
          forgeWaitMs: index === 5 ? 1234.4 : 0,
          ...(index % 3 === 0 ? { error: { name: 'TypeError', message: 'x is not a function' } } : {}),
        }),
      ),
    );
    expect((await log.record(early)).ok).toBe(true);
    const details = await log.get(deliveryId);
    expect(Object.keys(details?.subscribers ?? {}).sort()).toEqual([...names].sort());
    expect(details?.subscribers['subscriber-3']).toMatchObject({
      outcome: 'error',
      durationMs: 3,
      error: { name: 'TypeError', message: 'x is not a function' },
    });
    expect(details?.subscribers['subscriber-4']).toMatchObject({ outcome: 'ok', durationMs: 4 });
    expect(details?.subscribers['subscriber-4']?.forgeWaitMs).toBeUndefined();
    expect(details?.subscribers['subscriber-5']?.forgeWaitMs).toBe(1234);
    await expect(
      log.recordSubscriber(deliveryId, { subscriber: 'x', outcome: 'ok', durationMs: 1, forgeWaitMs: -1 }),
    ).rejects.toThrow('"forgeWaitMs" must be a non-negative number');
    await expect(
      log.recordSubscriber(deliveryId, {
        subscriber: 'x',
        outcome: 'ok',
        durationMs: 1,
        forgeWaitMs: 'long' as unknown as number,
      }),
    ).rejects.toThrow('"forgeWaitMs" must be a non-negative number');
    expect(details?.latest.outcome).toBe('published');
    const listed = await log.list({ limit: 1, subscribers: true });
    expect(Object.keys(listed.records[0]?.subscribers ?? {})).toHaveLength(10);
  });

  it('withDeliveryReport records a real handler ok and error (rethrown) for the delivery of the event', async () => {
    const tableName = await table();
    const log = new DeliveryLog({ client: ddb.client(), tableName });
    const recordedEntry = entry({ source: 'gitlab-main' });
    const deliveryId = recordedEntry.deliveryId as string;
    await log.record(recordedEntry);
    const event = {
      'detail-type': 'issues',
      detail: {
        delivery: deliveryId,
        event: 'issues',
        source: 'gitlab-main',
        payload: { title: 'private-title' },
      },
    };
    const ok = withDeliveryReport(
      async (received: typeof event) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return received.detail.delivery;
      },
      { name: 'mailer', deliveryLog: log },
    );
    class ChatUnavailable extends Error {}
    const failing = withDeliveryReport(
      async (_received: typeof event) => {
        throw new ChatUnavailable('chat answered 503');
      },
      { name: 'chat', deliveryLog: log },
    );
    await expect(ok(event)).resolves.toBe(deliveryId);
    await expect(failing(event)).rejects.toThrow(ChatUnavailable);

    const details = await log.get(deliveryId, { source: 'gitlab-main' });
    expect(details?.subscribers.mailer).toMatchObject({ outcome: 'ok' });
    expect(details?.subscribers.mailer?.durationMs).toBeGreaterThanOrEqual(15);
    expect(details?.subscribers.chat).toMatchObject({
      outcome: 'error',
      error: { name: 'ChatUnavailable', message: 'chat answered 503' },
    });
    expect(JSON.stringify(details)).not.toContain('private-title');
    // another source's delivery of the same id is another delivery
    await expect(log.get(deliveryId)).resolves.toBeUndefined();
  });

  it('never throws out of record when the table is missing: it resolves ok false', async () => {
    const warnings: unknown[] = [];
    const log = new DeliveryLog({
      client: ddb.client(),
      tableName: 'no-such-table',
      logger: { warn: (...args: unknown[]) => void warnings.push(args) },
    });
    const result = await log.record(entry({ deliveryId: 'd-missing' }));
    expect(result.ok).toBe(false);
    expect(warnings).toEqual([
      ['delivery log write failed', { code: 'ResourceNotFoundException', delivery: 'd-missing' }],
    ]);
  });
});
