import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DedupeStore } from '../../../../lib/aws/index.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();

function store(tableName: string, options: { now?: () => number; lockSeconds?: number } = {}) {
  return new DedupeStore({ client: ddb.documentClient(), tableName, ...options });
}

describe('DedupeStore against DynamoDB Local', () => {
  it('creates the table with the key schema and TTL attribute serverless.yml declares', async () => {
    const { dedupe } = await ddb.tables();
    const table = await ddb.client().send(new DescribeTableCommand({ TableName: dedupe }));
    expect(table.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    const ttl = await ddb.client().send(new DescribeTimeToLiveCommand({ TableName: dedupe }));
    expect(ttl.TimeToLiveDescription).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
  });

  it('answers new, then in_progress, then duplicate once completed', async () => {
    const { dedupe } = await ddb.tables();
    const first = store(dedupe);
    expect(await first.begin('d-1')).toBe('new');
    expect(await store(dedupe).begin('d-1')).toBe('in_progress');
    await first.complete('d-1');
    expect(await store(dedupe).begin('d-1')).toBe('duplicate');
    expect(await store(dedupe).begin('d-2')).toBe('new');
  });

  it('writes the TTL attribute 7 days ahead, in epoch seconds', async () => {
    const { dedupe } = await ddb.tables();
    const before = Math.floor(Date.now() / 1000);
    const dedupeStore = store(dedupe);
    await dedupeStore.begin('d-ttl');
    await dedupeStore.complete('d-ttl');
    const { Item } = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: dedupe, Key: { pk: 'd-ttl' } }));
    expect(Item?.status).toBe('done');
    expect(Item?.expiresAt).toBeGreaterThanOrEqual(before + 604800);
    expect(Item?.expiresAt).toBeLessThanOrEqual(before + 604800 + 5);
    expect(Item).not.toHaveProperty('lockExpiresAt');
  });

  it('lets exactly one of many concurrent invocations claim a delivery', async () => {
    const { dedupe } = await ddb.tables();
    const results = await Promise.all(Array.from({ length: 12 }, () => store(dedupe).begin('d-race')));
    expect(results.filter((result) => result === 'new')).toHaveLength(1);
    expect(results.filter((result) => result === 'in_progress')).toHaveLength(11);
  });

  it('takes over a lock left behind once it has expired', async () => {
    const { dedupe } = await ddb.tables();
    let now = Date.now();
    const clock = () => now;
    expect(await store(dedupe, { now: clock, lockSeconds: 30 }).begin('d-crash')).toBe('new');
    now += 29_000;
    expect(await store(dedupe, { now: clock, lockSeconds: 30 }).begin('d-crash')).toBe('in_progress');
    now += 2_000;
    expect(await store(dedupe, { now: clock, lockSeconds: 30 }).begin('d-crash')).toBe('new');
  });

  it('treats a record past its TTL that DynamoDB has not swept yet as absent', async () => {
    const { dedupe } = await ddb.tables();
    let now = Date.now();
    const first = store(dedupe, { now: () => now });
    await first.begin('d-old');
    await first.complete('d-old');
    now += 7 * 24 * 3600 * 1000 + 1000;
    expect(await store(dedupe, { now: () => now }).begin('d-old')).toBe('new');
  });

  it('release() lets a redelivery through after a failed publish, but never undoes a done record', async () => {
    const { dedupe } = await ddb.tables();
    const failing = store(dedupe);
    expect(await failing.begin('d-fail')).toBe('new');
    await failing.release('d-fail');
    const retry = store(dedupe);
    expect(await retry.begin('d-fail')).toBe('new');
    await retry.complete('d-fail');
    await store(dedupe).release('d-fail');
    expect(await store(dedupe).begin('d-fail')).toBe('duplicate');
  });

  it('release() by a stale owner leaves the new owner’s lock in place', async () => {
    const { dedupe } = await ddb.tables();
    let now = Date.now();
    const stale = store(dedupe, { now: () => now, lockSeconds: 1 });
    expect(await stale.begin('d-owner')).toBe('new');
    now += 2_000;
    const fresh = store(dedupe, { now: () => now, lockSeconds: 60 });
    expect(await fresh.begin('d-owner')).toBe('new');
    await stale.release('d-owner');
    expect(await store(dedupe, { now: () => now }).begin('d-owner')).toBe('in_progress');
  });
});
