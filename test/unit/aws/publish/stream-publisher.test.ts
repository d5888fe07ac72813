import { KinesisClient, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PublishError } from '../../../../lib/aws/index.js';
import {
  StreamPublisher,
  type StreamPublisherOptions,
} from '../../../../lib/aws/publish/stream-publisher.js';
import { streamEventOfRecord } from '../../../../lib/aws/publish/stream-record.js';

// Time is vitest's fake clock and the jitter Math.random pinned to 0.5: budgets and waits are exact.
const kinesisMock = mockClient(KinesisClient);
const s3Mock = mockClient(S3Client);
const START = Date.UTC(2026, 11, 1, 12);

const PULL_REQUEST = {
  action: 'opened',
  number: 7,
  pull_request: { number: 7 },
  repository: { full_name: 'octo/hello' },
};

function delivery(payload: unknown = PULL_REQUEST, id = 'd-1') {
  const rawBody = Buffer.from(JSON.stringify(payload));
  return {
    id,
    name: 'pull_request',
    payload,
    rawBody,
    forge: 'github',
    action: 'opened',
    nativeEvent: 'pull_request',
    source: 'github',
  };
}

function publisher(options: Partial<StreamPublisherOptions> = {}) {
  return new StreamPublisher({
    kinesis: new KinesisClient({ region: 'us-east-1' }),
    streamName: 'forgebridge-dev-ordered',
    ...options,
  });
}

async function settle<T>(promise: Promise<T>): Promise<T | unknown> {
  const outcome = promise.catch((caught: unknown) => caught);
  await vi.runAllTimersAsync();
  return outcome;
}

function httpError(name: string, status: number): Error {
  return Object.assign(new Error(`${name} answered`), { name, $metadata: { httpStatusCode: status } });
}

beforeEach(() => {
  kinesisMock.reset();
  s3Mock.reset();
  vi.useFakeTimers({ now: START });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('StreamPublisher', () => {
  it("writes one record under the source and the pull request's key, holding the event the rules get", async () => {
    kinesisMock.on(PutRecordCommand).resolves({ SequenceNumber: '4959', ShardId: 'shardId-000000000000' });
    const result = await publisher().publish(delivery());
    expect(result).toMatchObject({
      sequenceNumber: '4959',
      shardId: 'shardId-000000000000',
      partitionKey: 'github|octo/hello#pr:7',
      attempts: 1,
    });
    const input = kinesisMock.commandCalls(PutRecordCommand)[0]?.args[0].input;
    if (input === undefined) throw new Error('no PutRecord call');
    const data = input.Data as Uint8Array;
    expect(input.StreamName).toBe('forgebridge-dev-ordered');
    expect(input.PartitionKey).toBe('github|octo/hello#pr:7');
    const event = streamEventOfRecord({
      kinesis: {
        data: Buffer.from(data).toString('base64'),
        partitionKey: 'k',
        sequenceNumber: '1',
      },
    });
    expect(event).toMatchObject({
      'detail-type': 'pull_request.opened',
      source: 'forge.webhooks',
      detail: {
        delivery: 'd-1',
        event: 'pull_request',
        forge: 'github',
        source: 'github',
        payload: PULL_REQUEST,
      },
    });
    expect(result.recordBytes).toBe(data.byteLength + 'github|octo/hello#pr:7'.length);
  });

  it('orders by the repository when asked', async () => {
    kinesisMock.on(PutRecordCommand).resolves({ SequenceNumber: '1', ShardId: 's' });
    const result = await publisher({ orderBy: 'repository' }).publish(delivery());
    expect(result.partitionKey).toBe('github|octo/hello');
  });

  it('retries throttling within the budget, then says how many attempts and the last error', async () => {
    kinesisMock
      .on(PutRecordCommand)
      .rejectsOnce(httpError('ProvisionedThroughputExceededException', 400))
      .resolves({ SequenceNumber: '2', ShardId: 's' });
    const result = await settle(publisher().publish(delivery()));
    expect(result).toMatchObject({ attempts: 2, sequenceNumber: '2' });

    kinesisMock.reset();
    kinesisMock.on(PutRecordCommand).rejects(httpError('ProvisionedThroughputExceededException', 400));
    const failed = await settle(publisher({ budgetMs: 500 }).publish(delivery()));
    expect(failed).toBeInstanceOf(PublishError);
    expect(failed).toMatchObject({
      code: 'publish_failed',
      lastErrorCode: 'ProvisionedThroughputExceededException',
      onBus: 'no',
    });
    expect((failed as PublishError).attempts).toBeGreaterThan(2);
  });

  it('stops at once on a permanent refusal, and a timed-out write may have landed', async () => {
    kinesisMock.on(PutRecordCommand).rejects(httpError('ResourceNotFoundException', 400));
    const refused = await settle(publisher().publish(delivery()));
    expect(refused).toMatchObject({ code: 'publish_rejected', attempts: 1, onBus: 'no' });
    expect((refused as Error).message).toBe('kinesis refused the record with "ResourceNotFoundException"');

    kinesisMock.reset();
    kinesisMock
      .on(PutRecordCommand)
      .rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
    const unknown = await settle(publisher({ budgetMs: 200 }).publish(delivery()));
    expect(unknown).toMatchObject({
      code: 'publish_failed',
      onBus: 'unknown',
      lastErrorCode: 'TimeoutError',
    });
  });

  it('sends a delivery over the record limit through the claim check: the record names the object', async () => {
    kinesisMock.on(PutRecordCommand).resolves({ SequenceNumber: '3', ShardId: 's' });
    s3Mock.on(PutObjectCommand).resolves({});
    const big = { ...PULL_REQUEST, body: 'x'.repeat(2_000) };
    const result = await publisher({ maxRecordBytes: 1_000, s3: new S3Client({}), bucket: 'claims' }).publish(
      delivery(big),
    );
    expect(result.payloadRef).toMatchObject({ bucket: 'claims' });
    expect(result.recordBytes).toBeLessThanOrEqual(1_000);
    const data = kinesisMock.commandCalls(PutRecordCommand)[0]?.args[0].input.Data as Uint8Array;
    expect(Buffer.from(data).toString('utf8')).not.toContain('xxxx');
    expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(1);
  });

  it('refuses a record over the limit without a bucket, and bad options, in words', async () => {
    const big = { ...PULL_REQUEST, body: 'x'.repeat(2_000) };
    await expect(publisher({ maxRecordBytes: 1_000 }).publish(delivery(big))).rejects.toMatchObject({
      code: 'entry_too_large',
      onBus: 'no',
    });
    expect(kinesisMock.commandCalls(PutRecordCommand)).toHaveLength(0);
    expect(() => publisher({ streamName: '' })).toThrow('"streamName" must be a non-empty string');
    expect(() => publisher({ maxRecordBytes: 2_000_000 })).toThrow('must be at most 1048576');
  });
});
