// DeliveryQueue and redriveQueue with DynamoDB (through the DocumentClient) and S3 mocked by aws-sdk-client-mock.
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { PublishError, QueueError } from '../../../../lib/aws/errors.js';
import { DeliveryQueue, type QueuedDelivery } from '../../../../lib/aws/queue/queue.js';
import { redriveQueue } from '../../../../lib/aws/queue/redrive.js';
import type { Delivery } from '../../../../lib/aws/types.js';
import { recordingLogger } from '../ingest/events.js';

const documents = mockClient(DynamoDBDocumentClient);
const s3 = mockClient(S3Client);

/** An S3 body as the SDK hands it over (only what the queue reads of it). */
const s3Body = (bytes: Buffer) => ({ transformToByteArray: async () => new Uint8Array(bytes) }) as never;

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

const delivery = (id: string, bytes = 2): Delivery => {
  const rawBody = Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, bytes - 12)) }));
  return { id, name: 'push', payload: JSON.parse(rawBody.toString('utf8')), rawBody };
};

function record(id: string, overrides: Partial<QueuedDelivery> = {}): QueuedDelivery {
  return {
    pk: `queue#${id}`,
    delivery: id,
    event: 'push',
    queuedAt: Date.now() - 1_000,
    attempts: 0,
    body: Buffer.from('{"n":1}'),
    leaseOwner: 'lease-1',
    ...overrides,
  };
}

function queue(options: Partial<ConstructorParameters<typeof DeliveryQueue>[0]> = {}) {
  return new DeliveryQueue({
    client: new DynamoDBClient({ region: 'us-east-1' }),
    tableName: 'dedupe',
    ...options,
  });
}

beforeEach(() => {
  documents.reset();
  s3.reset();
  documents.on(PutCommand).resolves({});
  documents.on(UpdateCommand).resolves({});
  documents.on(DeleteCommand).resolves({});
  documents.on(QueryCommand).resolves({ Items: [] });
  documents.on(GetCommand).resolves({});
});

describe('DeliveryQueue', () => {
  it('refuses a missing client or table and a non-positive limit', () => {
    expect(() => new DeliveryQueue({ tableName: 't' } as never)).toThrow(
      new TypeError('"client" is required'),
    );
    expect(() => queue({ tableName: '' })).toThrow(new TypeError('"tableName" is required'));
    expect(() => queue({ inlineMaxBytes: 0 })).toThrow(
      new TypeError('"inlineMaxBytes" must be a positive number'),
    );
  });

  it('keeps a body over "inlineMaxBytes" in the claim-check bucket and the record points at it', async () => {
    s3.on(PutObjectCommand).resolves({});
    const large = delivery('d-large', 200);
    expect(await queue({ inlineMaxBytes: 100, s3: new S3Client({}), bucket: 'claims' }).enqueue(large)).toBe(
      'queued',
    );
    const put = s3.commandCalls(PutObjectCommand)[0]?.args[0].input;
    expect(put?.Bucket).toBe('claims');
    expect(put?.Key).toMatch(/^deliveries\/\d{4}\/\d{2}\/\d{2}\/d-large\.json$/);
    const item = documents.commandCalls(PutCommand)[0]?.args[0].input.Item;
    expect(item?.body).toBeUndefined();
    expect(item?.payloadRef).toEqual({
      bucket: 'claims',
      key: put?.Key,
      bytes: large.rawBody.byteLength,
      sha256: createHash('sha256').update(large.rawBody).digest('hex'),
    });
  });

  it('refuses a body over "inlineMaxBytes" without a bucket, and reports an S3 failure, as QueueError', async () => {
    await expect(queue({ inlineMaxBytes: 10 }).enqueue(delivery('d', 200))).rejects.toThrow(QueueError);
    s3.on(PutObjectCommand).rejects(new Error('down'));
    await expect(
      queue({ inlineMaxBytes: 10, s3: new S3Client({}), bucket: 'b' }).enqueue(delivery('d', 200)),
    ).rejects.toMatchObject({
      code: 'queue_failed',
      message: 'claim-check object could not be stored in "bucket"',
    });
    expect(documents.commandCalls(PutCommand)).toHaveLength(0);
  });

  it('records the "onBus" a publish error tells, and answers "exists" to a record already there', async () => {
    const failure = Object.assign(new PublishError('publish_failed', 'x'), { onBus: 'unknown' });
    await queue().enqueue(delivery('d-1'), failure);
    expect(documents.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      onBus: 'unknown',
      lastError: 'publish_failed',
    });
    documents.on(PutCommand).rejects(conditionFailed());
    expect(await queue().enqueue(delivery('d-1'))).toBe('exists');
  });

  it('lists due keys with one Query on the sparse index', async () => {
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#a', queue: 'due', dueAt: 1 }] });
    expect(await queue().due(7)).toEqual(['queue#a']);
    const input = documents.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ TableName: 'dedupe', IndexName: 'queue-due', Limit: 7 });
    expect(input?.KeyConditionExpression).toBe('#queue = :due AND #dueAt <= :now');
  });

  it('leases with a conditional write that moves "dueAt" past the lease, and yields nothing once taken', async () => {
    documents.on(UpdateCommand).resolves({ Attributes: record('a') });
    const started = Date.now();
    expect(await queue().lease('queue#a', 60_000)).toMatchObject({ delivery: 'a' });
    const input = documents.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.ConditionExpression).toBe('#queue = :due AND #dueAt <= :now');
    expect(input?.ExpressionAttributeValues?.[':until']).toBeGreaterThanOrEqual(started + 60_000);
    expect(input?.ReturnValues).toBe('ALL_NEW');
    documents.on(UpdateCommand).rejects(conditionFailed());
    expect(await queue().lease('queue#a', 60_000)).toBeUndefined();
    documents.on(UpdateCommand).rejects(new Error('down'));
    await expect(queue().lease('queue#a', 60_000)).rejects.toThrow('down');
  });

  it('reads the depth and oldest age, asking again for keys BatchGetItem left unprocessed', async () => {
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#a' }, { pk: 'queue#b' }], Count: 2 });
    documents
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { dedupe: [{ queuedAt: Date.now() - 5_000 }] },
        UnprocessedKeys: { dedupe: { Keys: [{ pk: 'queue#b' }], ProjectionExpression: 'queuedAt' } },
      })
      .resolves({ Responses: { dedupe: [{ queuedAt: Date.now() - 90_000 }] } });
    expect(await queue().stats()).toEqual({ depth: 2, oldestAgeSeconds: 90 });
    expect(documents.commandCalls(BatchGetCommand)[1]?.args[0].input.RequestItems).toEqual({
      dedupe: { Keys: [{ pk: 'queue#b' }], ProjectionExpression: 'queuedAt' },
    });
  });

  it('refuses to report an age when BatchGetItem keeps leaving keys unprocessed, and passes its errors on', async () => {
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#a' }], Count: 1 });
    documents.on(BatchGetCommand).resolves({
      Responses: { dedupe: [] },
      UnprocessedKeys: { dedupe: { Keys: [{ pk: 'queue#a' }], ProjectionExpression: 'queuedAt' } },
    });
    const error = await queue()
      .stats()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QueueError);
    expect(error).toMatchObject({
      code: 'queue_failed',
      message: 'queue stats incomplete: keys still unprocessed after 5 BatchGetItem rounds',
    });
    expect(documents.commandCalls(BatchGetCommand)).toHaveLength(5);
    const denied = Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
    documents.on(BatchGetCommand).rejects(denied);
    await expect(queue().stats()).rejects.toBe(denied);
  });

  it('loads a claim-checked body and refuses one whose digest does not match', async () => {
    const body = Buffer.from('{"big":true}');
    const ref = {
      bucket: 'b',
      key: 'k',
      bytes: body.byteLength,
      sha256: createHash('sha256').update(body).digest('hex'),
    };
    s3.on(GetObjectCommand).resolves({ Body: s3Body(body) });
    const withS3 = queue({ s3: new S3Client({}), bucket: 'b' });
    const loaded = await withS3.load(record('a', { body: undefined, payloadRef: ref } as never));
    expect(loaded).toMatchObject({ id: 'a', name: 'push', payload: { big: true } });
    s3.on(GetObjectCommand).resolves({ Body: s3Body(Buffer.from('{"big":false}')) });
    await expect(withS3.load(record('a', { body: undefined, payloadRef: ref } as never))).rejects.toThrow(
      'claim-check object "k" does not match the queue record (bytes or sha256)',
    );
    await expect(queue().load(record('a', { body: undefined } as never))).rejects.toThrow(QueueError);
  });
});

describe('redriveQueue()', () => {
  function setup(ids: string[], publish: (d: Delivery) => Promise<unknown>) {
    documents.on(QueryCommand).resolves({ Items: ids.map((id) => ({ pk: `queue#${id}` })) });
    for (const id of ids) {
      documents.on(UpdateCommand, { Key: { pk: `queue#${id}` }, ReturnValues: 'ALL_NEW' }).resolves({
        Attributes: record(id),
      });
    }
    const published: string[] = [];
    const { lines, ...logger } = recordingLogger();
    return {
      published,
      lines,
      run: (options: Partial<Parameters<typeof redriveQueue>[0]> = {}) =>
        redriveQueue({
          queue: queue(),
          publisher: { publish: (d) => publish(d).then(() => void published.push(d.id)) },
          logger,
          ...options,
        }),
    };
  }

  it('publishes each leased record and deletes it', async () => {
    const { run, published, lines } = setup(['a', 'b', 'c'], async () => undefined);
    expect(await run()).toEqual({
      due: 3,
      published: 3,
      retried: 0,
      dead: 0,
      skipped: 0,
      alreadyPublished: 0,
    });
    expect(published.sort()).toEqual(['a', 'b', 'c']);
    expect(
      documents
        .commandCalls(DeleteCommand)
        .map((call) => call.args[0].input.Key?.pk)
        .sort(),
    ).toEqual(['queue#a', 'queue#b', 'queue#c']);
    expect(lines.filter((line) => line.message === 'queued delivery published')).toHaveLength(3);
  });

  it('reads the dedupe record first: removes unpublished a delivery a later attempt published, skips one held now', async () => {
    const { run, published, lines } = setup(['a', 'b', 'c'], async () => undefined);
    const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
    const future = Math.floor(Date.now() / 1000) + 600;
    documents.on(GetCommand, { Key: { pk: keyOf('a') } }).resolves({
      Item: { pk: keyOf('a'), status: 'COMPLETED', data: { delivery: 'a' }, expiresAt: future },
    });
    documents.on(GetCommand, { Key: { pk: keyOf('b') } }).resolves({
      Item: {
        pk: keyOf('b'),
        status: 'INPROGRESS',
        expiresAt: future,
        in_progress_expiration: Date.now() + 9_000,
      },
    });
    documents.on(GetCommand, { Key: { pk: keyOf('c') } }).resolves({
      Item: { pk: keyOf('c'), status: 'COMPLETED', data: { delivery: 'c', queued: true }, expiresAt: future },
    });
    expect(await run()).toEqual({
      due: 3,
      published: 1,
      retried: 0,
      dead: 0,
      skipped: 1,
      alreadyPublished: 1,
    });
    expect(published).toEqual(['c']);
    expect(documents.commandCalls(DeleteCommand).map((call) => call.args[0].input.Key?.pk)).toEqual(
      expect.arrayContaining(['queue#a', 'queue#c']),
    );
    expect(documents.commandCalls(DeleteCommand)).toHaveLength(2);
    expect(
      documents.commandCalls(GetCommand).every((call) => call.args[0].input.ConsistentRead === true),
    ).toBe(true);
    // "c" had its (queued) completed record: no new one is written.
    expect(documents.commandCalls(PutCommand)).toHaveLength(0);
    expect(
      lines.filter((line) => line.message === 'queued delivery already published by a later attempt'),
    ).toHaveLength(1);
  });

  it('writes the completed dedupe record of a delivery that had none, and of a source under its source key', async () => {
    const { run, published } = setup(['a'], async () => undefined);
    documents
      .on(UpdateCommand, { Key: { pk: 'queue#source#gl#a' }, ReturnValues: 'ALL_NEW' })
      .resolves({ Attributes: record('a', { pk: 'queue#source#gl#a', source: 'gl' }) });
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#a' }, { pk: 'queue#source#gl#a' }] });
    expect(await run()).toMatchObject({ due: 2, published: 2, alreadyPublished: 0 });
    expect(published).toEqual(['a', 'a']);
    const puts = documents.commandCalls(PutCommand).map((call) => call.args[0].input);
    const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
    expect(puts.map((put) => put.Item?.pk).sort()).toEqual([keyOf('a'), keyOf('source#gl#a')].sort());
    expect(puts[0]).toMatchObject({
      Item: { status: 'COMPLETED', data: { delivery: 'a' } },
      ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :now',
    });
  });

  it('treats an expired completed record and the lock of a dead attempt as no record', async () => {
    const { run, published } = setup(['a', 'b'], async () => undefined);
    const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
    documents.on(GetCommand, { Key: { pk: keyOf('a') } }).resolves({
      Item: { pk: keyOf('a'), status: 'COMPLETED', data: { delivery: 'a' }, expiresAt: 1 },
    });
    documents.on(GetCommand, { Key: { pk: keyOf('b') } }).resolves({
      Item: {
        status: 'INPROGRESS',
        expiresAt: Math.floor(Date.now() / 1000) + 60,
        in_progress_expiration: 1,
      },
    });
    expect(await run()).toMatchObject({ due: 2, published: 2, skipped: 0, alreadyPublished: 0 });
    expect(published.sort()).toEqual(['a', 'b']);
  });

  it('skips a record another run leased', async () => {
    const { run, published } = setup(['a'], async () => undefined);
    documents
      .on(UpdateCommand, { Key: { pk: 'queue#a' }, ReturnValues: 'ALL_NEW' })
      .rejects(conditionFailed());
    expect(await run()).toMatchObject({ due: 1, published: 0, skipped: 1 });
    expect(published).toEqual([]);
    expect(documents.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('backs off a failed record (30 s doubling) and ends the run on an outage', async () => {
    const { run } = setup(['a', 'b'], async () => {
      throw new PublishError('publish_failed', 'down');
    });
    const started = Date.now();
    const report = await run({ concurrency: 1 });
    expect(report).toEqual({ due: 2, published: 0, retried: 1, dead: 0, skipped: 1, alreadyPublished: 0 });
    const retry = documents
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input)
      .find((input) => input.ConditionExpression === 'leaseOwner = :owner');
    expect(retry?.ExpressionAttributeValues).toMatchObject({
      ':error': 'publish_failed',
      ':owner': 'lease-1',
    });
    expect(retry?.ExpressionAttributeValues?.[':next']).toBeGreaterThanOrEqual(started + 30_000);
    expect(retry?.ExpressionAttributeValues?.[':next']).toBeLessThanOrEqual(Date.now() + 30_000);
  });

  it('dead-letters a record older than "maxAgeSeconds" with the metric line, and keeps going on a rejection', async () => {
    const { run, lines } = setup(['a', 'b'], async () => {
      throw new PublishError('publish_rejected', 'no');
    });
    documents
      .on(UpdateCommand, { Key: { pk: 'queue#a' }, ReturnValues: 'ALL_NEW' })
      .resolves({ Attributes: record('a', { queuedAt: Date.now() - 90_000, attempts: 5 }) });
    const report = await run({ maxAgeSeconds: 60, metricNamespace: 'forgebridge/test' });
    expect(report).toEqual({ due: 2, published: 0, retried: 1, dead: 1, skipped: 0, alreadyPublished: 0 });
    const bury = documents
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input)
      .find((input) => String(input.UpdateExpression).includes('dead = :true'));
    expect(bury?.Key).toEqual({ pk: 'queue#a' });
    expect(bury?.UpdateExpression).toContain('REMOVE #queue, #dueAt, leaseOwner');
    const dead = lines.find((line) => line.message === 'queued delivery dead-lettered');
    expect(dead?.level).toBe('error');
    expect(dead?.fields[0]).toMatchObject({
      delivery: 'a',
      attempts: 6,
      reason: 'publish_rejected',
      DeadLetteredDeliveries: 1,
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'forgebridge/test',
            Dimensions: [[]],
            Metrics: [{ Name: 'DeadLetteredDeliveries', Unit: 'Count' }],
          },
        ],
      },
    });
  });

  it('takes no record without "reserveMs" of the Lambda left', async () => {
    const { run, published } = setup(['a'], async () => undefined);
    expect(await run({ remainingMs: () => 1_000, reserveMs: 5_000 })).toMatchObject({
      published: 0,
      skipped: 1,
    });
    expect(published).toEqual([]);
    expect(documents.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('counts a published record whose delete failed, and logs it', async () => {
    const { run, lines } = setup(['a'], async () => undefined);
    documents.on(DeleteCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    expect(await run()).toMatchObject({ published: 1 });
    expect(lines.find((line) => line.message === 'queue record delete failed')?.fields[0]).toEqual({
      delivery: 'a',
      errorCode: 'InternalServerError',
    });
  });

  it('refuses bad options', async () => {
    await expect(redriveQueue({ queue: queue(), publisher: {} as never })).rejects.toThrow(
      new TypeError('"publisher" must have a "publish" function'),
    );
    await expect(
      redriveQueue({ queue: queue(), publisher: { publish: async () => undefined }, maxAgeSeconds: 0 }),
    ).rejects.toThrow(new TypeError('"maxAgeSeconds" must be a positive number'));
  });
});
