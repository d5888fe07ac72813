// The dedupe (Powertools Idempotency over the dedupe table) against DynamoDB Local.
import { createHash } from 'node:crypto';
import { DescribeTableCommand, DescribeTimeToLiveCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DedupeInProgressError, DedupePublishError } from '../../../../lib/aws/errors.js';
import type { Delivery } from '../../../../lib/aws/index.js';
import { createDedupedPublish } from '../../../../lib/aws/ingest/dedupe.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();

const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
const delivery = (id: string): Delivery => ({ id, name: 'push', payload: {}, rawBody: Buffer.from('{}') });
const remaining = (ms: number) => ({ getRemainingTimeInMillis: () => ms });

function dedupe(tableName: string, publish: (delivery: Delivery) => Promise<unknown>) {
  return createDedupedPublish({ client: ddb.client(), tableName, publish });
}

async function item(tableName: string, id: string) {
  const { Item } = await ddb
    .documentClient()
    .send(new GetCommand({ TableName: tableName, Key: { pk: keyOf(id) } }));
  return Item;
}

describe('createDedupedPublish() against DynamoDB Local', () => {
  it('uses the table as serverless.yml declares it: key "pk", TTL on "expiresAt"', async () => {
    const { dedupe: table } = await ddb.tables();
    const described = await ddb.client().send(new DescribeTableCommand({ TableName: table }));
    expect(described.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    const ttl = await ddb.client().send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
  });

  it('goes new, then in progress, then duplicate once published, publishing once', async () => {
    const { dedupe: table } = await ddb.tables();
    let release!: () => void;
    const published: string[] = [];
    const publish = dedupe(table, async (d) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      published.push(d.id);
    });
    const started = Date.now();
    const first = publish(delivery('d-1'), remaining(20_000));
    await expect.poll(() => item(table, 'd-1'), { timeout: 10_000 }).toMatchObject({ status: 'INPROGRESS' });
    const locked = await item(table, 'd-1');
    expect(locked?.in_progress_expiration).toBeGreaterThanOrEqual(started + 20_000);
    expect(locked?.in_progress_expiration).toBeLessThanOrEqual(Date.now() + 20_000);
    await expect(publish(delivery('d-1'), remaining(20_000))).rejects.toBeInstanceOf(DedupeInProgressError);
    release();
    expect(await first).toEqual({ status: 'published' });
    expect(await publish(delivery('d-1'), remaining(20_000))).toEqual({ status: 'duplicate' });
    expect(published).toEqual(['d-1']);
    const done = await item(table, 'd-1');
    expect(done?.status).toBe('COMPLETED');
    expect(done?.expiresAt).toBeGreaterThanOrEqual(Math.floor(started / 1000) + 7 * 24 * 3600 - 1);
    expect(done?.expiresAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 7 * 24 * 3600);
  });

  it('lets exactly one of many concurrent invocations publish a delivery', async () => {
    const { dedupe: table } = await ddb.tables();
    let published = 0;
    // Each invocation as its own Lambda: its own client and its own Powertools instance.
    const invocations = Array.from({ length: 8 }, () =>
      dedupe(table, async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        published += 1;
      })(delivery('d-race'), remaining(20_000)).then(
        (outcome) => outcome.status,
        (error: unknown) => (error instanceof DedupeInProgressError ? 'in_progress' : String(error)),
      ),
    );
    const outcomes = await Promise.all(invocations);
    expect(outcomes.filter((outcome) => outcome === 'published')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'in_progress')).toHaveLength(7);
    expect(published).toBe(1);
  });

  it('takes over a lock left behind once the crashed invocation’s remaining time is over', async () => {
    const { dedupe: table } = await ddb.tables();
    // The first invocation "crashes": its publish never ends, its Lambda had 2 s left.
    void dedupe(table, () => new Promise(() => {}))(delivery('d-crash'), remaining(2_000));
    await expect
      .poll(() => item(table, 'd-crash'), { timeout: 10_000 })
      .toMatchObject({ status: 'INPROGRESS' });
    const lockedUntil = Number((await item(table, 'd-crash'))?.in_progress_expiration);
    const published: string[] = [];
    const next = dedupe(table, async (d) => {
      published.push(d.id);
    });
    await expect(next(delivery('d-crash'), remaining(20_000))).rejects.toBeInstanceOf(DedupeInProgressError);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lockedUntil - Date.now()) + 50));
    expect(await next(delivery('d-crash'), remaining(20_000))).toEqual({ status: 'published' });
    expect(published).toEqual(['d-crash']);
  });

  it('treats a record past its TTL that DynamoDB has not swept yet as absent', async () => {
    const { dedupe: table } = await ddb.tables();
    await ddb.client().send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: keyOf('d-old') },
          status: { S: 'COMPLETED' },
          expiresAt: { N: String(Math.floor(Date.now() / 1000) - 60) },
        },
      }),
    );
    expect(await dedupe(table, async () => {})(delivery('d-old'), remaining(20_000))).toEqual({
      status: 'published',
    });
  });

  it('releases the lock after a failed publish, so the redelivery publishes', async () => {
    const { dedupe: table } = await ddb.tables();
    let attempts = 0;
    const publish = dedupe(table, async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('bus down');
    });
    const failure = await publish(delivery('d-retry'), remaining(20_000)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DedupePublishError);
    expect((failure as DedupePublishError).releaseError).toBeUndefined();
    expect(await item(table, 'd-retry')).toBeUndefined();
    expect(await publish(delivery('d-retry'), remaining(20_000))).toEqual({ status: 'published' });
    expect(attempts).toBe(2);
  });
});
