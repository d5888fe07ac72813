// The ordered failure queue's messages below any server: the pointer Lambda's Kinesis mapping sends (read, or
// refused with why), the stream's name in its ARN, the batch event built from records read back, a read that
// stops at the batch's end or at the shard's tip, and an invocation answered with `batchItemFailures` counted
// as not taken.
import { GetRecordsCommand, GetShardIteratorCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { replayToFunction } from '../../../lib/cli/bulk-replay.js';
import {
  kinesisEventOf,
  type OrderedPointer,
  orderedLetterOf,
  orderedPointerOf,
  readBatch,
  streamNameOf,
  withRecords,
} from '../../../lib/cli/ordered-failures.js';

const STREAM_ARN = 'arn:aws:kinesis:eu-west-1:123456789012:stream/forgebridge-prod-ordered';
const body = (batch: Record<string, unknown> = {}) =>
  JSON.stringify({
    requestContext: {
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:forgebridge-prod-onPullRequestOrdered',
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 3,
    },
    responseContext: { functionError: 'Unhandled' },
    KinesisBatchInfo: {
      shardId: 'shardId-000000000001',
      startSequenceNumber: '100',
      endSequenceNumber: '102',
      batchSize: 3,
      streamArn: STREAM_ARN,
      ...batch,
    },
  });

describe('orderedPointerOf() and orderedLetterOf()', () => {
  it('reads the function, why, and where the batch is', () => {
    expect(orderedPointerOf(body())).toEqual({
      functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:forgebridge-prod-onPullRequestOrdered',
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 3,
      functionError: 'Unhandled',
      shardId: 'shardId-000000000001',
      startSequenceNumber: '100',
      endSequenceNumber: '102',
      streamArn: STREAM_ARN,
    });
    const letter = orderedLetterOf({
      MessageId: 'm-1',
      ReceiptHandle: 'r-1',
      Body: body(),
      Attributes: { SentTimestamp: '1796580000000' },
    });
    expect(letter).toMatchObject({
      messageId: 'm-1',
      subscriber: 'forgebridge-prod-onPullRequestOrdered',
      errorCode: 'RetryAttemptsExhausted',
      errorMessage: 'Unhandled',
      retryAttempts: 3,
      sentAt: 1796580000000,
      event: undefined,
      problem: undefined,
    });
  });

  it('says why a body is not a pointer', () => {
    expect(orderedPointerOf('{')).toBe('the body is not JSON');
    expect(orderedPointerOf(undefined)).toBe('the body is not JSON');
    for (const bad of [
      '[]',
      'null',
      body({ shardId: '' }),
      body({ startSequenceNumber: '1e9' }),
      body({ streamArn: 7 }),
    ]) {
      expect(orderedPointerOf(bad)).toMatch(/^the body is not a Kinesis on-failure record/);
    }
    expect(orderedLetterOf({ MessageId: 'm', ReceiptHandle: 'r', Body: '[]' })).toMatchObject({
      subscriber: undefined,
      problem: expect.stringMatching(/^the body is not a Kinesis on-failure record/),
    });
  });

  it('names the stream of an ARN, and nothing of another ARN', () => {
    expect(streamNameOf(STREAM_ARN)).toBe('forgebridge-prod-ordered');
    expect(streamNameOf('arn:aws:sqs:eu-west-1:123456789012:queue')).toBeUndefined();
  });
});

describe('readBatch(), kinesisEventOf() and withRecords()', () => {
  const kinesis = mockClient(KinesisClient);
  afterEach(() => kinesis.reset());
  const pointer = orderedPointerOf(body()) as OrderedPointer;
  const data = (delivery: string) =>
    Buffer.from(
      JSON.stringify({ 'detail-type': 'pull_request.opened', detail: { delivery, source: 'github' } }),
    );

  it('reads from the start sequence to the end one, both included, and hands them on as the mapping does', async () => {
    kinesis.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-1' });
    kinesis
      .on(GetRecordsCommand, { ShardIterator: 'it-1' })
      .resolves({
        Records: [
          {
            SequenceNumber: '100',
            PartitionKey: 'acme/web#1',
            Data: data('d-1'),
            ApproximateArrivalTimestamp: new Date(1_000_000),
          },
          { SequenceNumber: '101', PartitionKey: 'acme/web#1', Data: data('d-2') },
        ],
        NextShardIterator: 'it-2',
        MillisBehindLatest: 10,
      })
      .on(GetRecordsCommand, { ShardIterator: 'it-2' })
      .resolves({
        Records: [
          { SequenceNumber: '102', PartitionKey: 'acme/web#1', Data: data('d-3') },
          { SequenceNumber: '103', PartitionKey: 'acme/web#2', Data: data('d-4') },
        ],
        NextShardIterator: 'it-3',
      });
    const records = await readBatch(new KinesisClient({ region: 'eu-west-1' }), pointer);
    expect(records.map((record) => record.SequenceNumber)).toEqual(['100', '101', '102']);
    expect(kinesis.commandCalls(GetShardIteratorCommand)[0]?.args[0].input).toEqual({
      StreamName: 'forgebridge-prod-ordered',
      ShardId: 'shardId-000000000001',
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      StartingSequenceNumber: '100',
    });
    const event = kinesisEventOf(records, pointer) as { Records: Record<string, unknown>[] };
    expect(event.Records).toHaveLength(3);
    expect(event.Records[0]).toEqual({
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: 'acme/web#1',
        sequenceNumber: '100',
        data: data('d-1').toString('base64'),
        approximateArrivalTimestamp: 1000,
      },
      eventSource: 'aws:kinesis',
      eventVersion: '1.0',
      eventID: 'shardId-000000000001:100',
      eventName: 'aws:kinesis:record',
      awsRegion: 'eu-west-1',
      eventSourceARN: STREAM_ARN,
    });
  });

  it('says so when the records are gone or cannot be read, and keeps a letter without a pointer', async () => {
    kinesis.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it-1' });
    kinesis.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'it-1', MillisBehindLatest: 0 });
    const client = new KinesisClient({ region: 'eu-west-1' });
    const letter = orderedLetterOf({ MessageId: 'm', ReceiptHandle: 'r', Body: body() });
    const [gone] = await withRecords([letter], client);
    expect(gone?.problem).toBe("its records are no longer in the stream (past the stream's retention)");
    expect(gone).not.toHaveProperty('pointer');
    kinesis
      .on(GetShardIteratorCommand)
      .rejects(Object.assign(new Error('x'), { name: 'ResourceNotFoundException' }));
    const [unread] = await withRecords([letter], client);
    expect(unread?.problem).toBe('its records could not be read back: ResourceNotFoundException');
    const plain = orderedLetterOf({ MessageId: 'm', ReceiptHandle: 'r', Body: 'nope' });
    expect(await withRecords([plain], client)).toEqual([plain]);
    await expect(readBatch(client, { ...pointer, streamArn: 'arn:aws:sqs:x' })).rejects.toThrow(
      'is not a Kinesis stream ARN',
    );
  });
});

describe('an ordered subscriber that answers batchItemFailures', () => {
  const lambda = mockClient(LambdaClient);
  afterEach(() => lambda.reset());

  it('did not take its batch: counted failed, with the first record it failed', async () => {
    lambda
      .on(InvokeCommand)
      .resolvesOnce({
        StatusCode: 200,
        Payload: Buffer.from('{"batchItemFailures":[{"itemIdentifier":"101"}]}') as never,
      })
      .resolvesOnce({ StatusCode: 200, Payload: Buffer.from('{"batchItemFailures":[]}') as never })
      .resolvesOnce({ StatusCode: 200, Payload: Buffer.from('not json') as never })
      // serverless-offline's answer for a function that returned nothing.
      .resolvesOnce({ StatusCode: 200, Payload: null as never });
    const run = await replayToFunction({
      lambda: new LambdaClient({ region: 'eu-west-1' }),
      functionName: 'forgebridge-prod-onPullRequestOrdered',
      deliveries: ['d-1', 'd-2', 'd-3', 'd-4'].map((deliveryId, n) => ({
        deliveryId,
        event: 'pull_request',
        receivedAt: n,
        outcome: 'error' as const,
      })),
      ratePerSecond: 1_000,
      concurrency: 1,
      eventOf: async () => ({ Records: [] }),
    });
    expect(run).toMatchObject({ sent: 3, failed: 1 });
    expect(run.failures).toEqual([
      { deliveryId: 'd-1', error: 'the function did not take 1 record of the batch (from 101)' },
    ]);
  });
});
