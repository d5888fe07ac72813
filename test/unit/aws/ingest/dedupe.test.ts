import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDedupedPublish } from '../../../../lib/aws/ingest/dedupe.js';

const client = new DynamoDBClient({ region: 'us-east-1' });
const publish = async () => {};

describe('createDedupedPublish()', () => {
  it('throws a TypeError naming a missing or invalid option', () => {
    expect(() => createDedupedPublish({ tableName: 't', publish } as never)).toThrow(
      new TypeError('"client" is required'),
    );
    expect(() => createDedupedPublish({ client, tableName: '', publish })).toThrow(
      new TypeError('"tableName" is required'),
    );
    expect(() => createDedupedPublish({ client, tableName: 't' } as never)).toThrow(
      new TypeError('"publish" must be a function'),
    );
    expect(() => createDedupedPublish({ client, tableName: 't', publish, ttlSeconds: 0 })).toThrow(
      new TypeError('"ttlSeconds" must be a positive number'),
    );
    expect(() => createDedupedPublish({ client, tableName: 't', publish, lockSeconds: -1 })).toThrow(
      new TypeError('"lockSeconds" must be a positive number'),
    );
  });
});
