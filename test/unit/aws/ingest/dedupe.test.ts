import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DedupeInProgressError } from '../../../../lib/aws/errors.js';
import { createDedupedPublish, type DedupeOptions } from '../../../../lib/aws/ingest/dedupe.js';

const client = new DynamoDBClient({ region: 'us-east-1' });
const publish = async () => {};
const dynamo = mockClient(DynamoDBClient);
const delivery = { id: 'd-1', name: 'push', payload: {}, rawBody: Buffer.from('{}') };
const context = { getRemainingTimeInMillis: () => 10_000 };

function conditionFailed(item?: PutItemCommand['input']['Item']) {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(item === undefined ? {} : { Item: item }),
  });
}

function dedupe(options: Partial<DedupeOptions> = {}) {
  return createDedupedPublish({ client, tableName: 'dedupe', publish, ...options });
}

beforeEach(() => {
  dynamo.reset();
  dynamo.on(UpdateItemCommand).resolves({});
});

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

  it('writes a fresh owner token with each attempt’s in-progress record', async () => {
    dynamo.on(PutItemCommand).resolves({});
    const run = dedupe();
    await run(delivery, context);
    await run({ ...delivery, id: 'd-2' }, context);
    const owners = dynamo.commandCalls(PutItemCommand).map((call) => call.args[0].input.Item?.owner?.S);
    expect(owners).toHaveLength(2);
    expect(owners[0]).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
    expect(owners[1]).not.toBe(owners[0]);
  });

  it('takes a condition failure on the record its own attempt wrote as its lock (the SDK retried its put)', async () => {
    // The first put was carried out but its reply lost; the retry sees that very record.
    dynamo.on(PutItemCommand).callsFake((input: PutItemCommand['input']) => {
      throw conditionFailed(input.Item);
    });
    const published: string[] = [];
    const outcome = await dedupe({ publish: async (d) => void published.push(d.id) })(delivery, context);
    expect(outcome).toEqual({ status: 'published' });
    expect(published).toEqual(['d-1']);
    expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(1);
  });

  it('reports in progress for a record another attempt owns', async () => {
    dynamo.on(PutItemCommand).callsFake((input: PutItemCommand['input']) => {
      throw conditionFailed({ ...input.Item, owner: { S: 'someone-else' } });
    });
    await expect(dedupe()(delivery, context)).rejects.toBeInstanceOf(DedupeInProgressError);
  });

  it('reads the record when the condition failure does not carry it, without comparing owners', async () => {
    dynamo.on(PutItemCommand).rejects(conditionFailed());
    dynamo.on(GetItemCommand).resolves({
      Item: {
        pk: { S: 'delivery#x' },
        status: { S: 'COMPLETED' },
        expiresAt: { N: String(Math.floor(Date.now() / 1000) + 60) },
        owner: { S: 'the-first-attempt' },
        data: { M: { delivery: { S: 'd-1' } } },
      },
    });
    const published: string[] = [];
    const outcome = await dedupe({ publish: async (d) => void published.push(d.id) })(delivery, context);
    expect(outcome).toEqual({ status: 'duplicate' });
    expect(published).toEqual([]);
  });

  it('completes a queued delivery as queued, and answers its redelivery as a duplicate', async () => {
    dynamo.on(PutItemCommand).resolves({});
    const outcome = await dedupe({ publish: async () => ({ queued: true }) })(delivery, context);
    expect(outcome).toEqual({ status: 'queued' });
    const update = dynamo.commandCalls(UpdateItemCommand)[0]?.args[0].input;
    expect(update?.ExpressionAttributeValues?.[':response_data']).toEqual({
      M: { delivery: { S: 'd-1' }, queued: { BOOL: true } },
    });
  });
});
