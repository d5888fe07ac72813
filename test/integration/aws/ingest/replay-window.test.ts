// The replay window of a scheme without a timestamp is the dedupe record's lifetime: per source, against
// DynamoDB Local. A redelivery within it is a duplicate; once the record has expired the same delivery id is
// published again.
import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../../../lib/aws/index.js';
import { createDedupedPublish } from '../../../../lib/aws/ingest/dedupe.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
const remaining = { getRemainingTimeInMillis: () => 10_000 };
const delivery = (id: string, source: string): Delivery => ({
  id,
  name: 'push',
  payload: {},
  rawBody: Buffer.from('{}'),
  source,
});
const keyOf = (key: string) => `delivery#${createHash('md5').update(JSON.stringify(key)).digest('base64')}`;

describe('the dedupe record lifetime per source', () => {
  it('keeps each source its own lifetime, and publishes a delivery again once its record expired', async () => {
    const { dedupe: tableName } = await ddb.tables();
    const published: string[] = [];
    const publish = createDedupedPublish({
      client: ddb.client(),
      tableName,
      ttlSeconds: 3600,
      ttlSecondsBySource: { github: 2 },
      publish: async (one) => void published.push(`${one.source}/${one.id}`),
    });
    const before = Math.floor(Date.now() / 1000);
    expect(await publish(delivery('d-1', 'github'), remaining)).toEqual({ status: 'published' });
    expect(await publish(delivery('d-1', 'default'), remaining)).toEqual({ status: 'published' });
    expect(await publish(delivery('d-1', 'github'), remaining)).toEqual({ status: 'duplicate' });
    const after = Math.floor(Date.now() / 1000);

    const expiry = async (key: string) => {
      const { Item } = await ddb
        .documentClient()
        .send(new GetCommand({ TableName: tableName, Key: { pk: keyOf(key) } }));
      return Item?.expiresAt as number;
    };
    // The key of a source other than `default` is `source#<source>#<id>` (dedupeKeyOf).
    const github = await expiry('source#github#d-1');
    const fallback = await expiry('d-1');
    // Written between `before` and `after`, each with its source's lifetime (Powertools rounds the expiry to the
    // nearest second: up to one past `after`).
    expect(github).toBeGreaterThanOrEqual(before + 2);
    expect(github).toBeLessThanOrEqual(after + 3);
    expect(fallback).toBeGreaterThanOrEqual(before + 3600);
    expect(fallback).toBeLessThanOrEqual(after + 3601);

    // Past the github record's lifetime the same delivery is accepted again; the default one still is not.
    let again: unknown;
    for (let attempt = 0; attempt < 40; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (Math.floor(Date.now() / 1000) <= github) continue;
      again = await publish(delivery('d-1', 'github'), remaining);
      break;
    }
    expect(again).toEqual({ status: 'published' });
    expect(await publish(delivery('d-1', 'default'), remaining)).toEqual({ status: 'duplicate' });
    expect(published).toEqual(['github/d-1', 'default/d-1', 'github/d-1']);
  });

  it('refuses a lifetime that is not positive', () => {
    expect(() =>
      createDedupedPublish({
        client: ddb.client(),
        tableName: 't',
        ttlSecondsBySource: { github: 0 },
        publish: async () => undefined,
      }),
    ).toThrow('"ttlSecondsBySource.github" must be a positive number');
  });
});
