// OutputsPublisher: the bus, then the ordered stream; a failure names the outputs left, which the queue keeps and the
// retrier writes alone.
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { PublishError } from '../../../../lib/aws/errors.js';
import { OutputsPublishError, OutputsPublisher } from '../../../../lib/aws/publish/outputs.js';
import { DeliveryQueue, type QueuedDelivery } from '../../../../lib/aws/queue/queue.js';
import { redriveQueue } from '../../../../lib/aws/queue/redrive.js';
import type { Delivery } from '../../../../lib/aws/types.js';

const delivery: Delivery = {
  id: 'd-1',
  name: 'pull_request',
  payload: { n: 1 },
  rawBody: Buffer.from('{"n":1}'),
};

/** A publisher that records each call and fails while `failing` is set. */
function output(name: string, calls: string[]) {
  const state = { failing: undefined as unknown };
  return {
    state,
    publisher: {
      async publish(d: Delivery) {
        calls.push(`${name}:${d.id}`);
        if (state.failing !== undefined) throw state.failing;
        return name === 'bus' ? { eventId: 'e-1', attempts: 1 } : { sequenceNumber: '7' };
      },
    },
  };
}

describe('OutputsPublisher', () => {
  it('refuses a bus or a stream without publish', () => {
    expect(() => new OutputsPublisher({} as never)).toThrow('"bus" must have a "publish" function');
    expect(() => new OutputsPublisher({ bus: { publish: async () => ({}) }, stream: {} as never })).toThrow(
      '"stream" must have a "publish" function',
    );
  });

  it('writes the bus, then the stream, and answers the bus result with the stream one beside it', async () => {
    const calls: string[] = [];
    const publisher = new OutputsPublisher({
      bus: output('bus', calls).publisher,
      stream: output('stream', calls).publisher,
    });
    expect(publisher.outputs).toEqual(['bus', 'stream']);
    expect(await publisher.publish(delivery)).toEqual({
      eventId: 'e-1',
      attempts: 1,
      outputs: ['bus', 'stream'],
      stream: { sequenceNumber: '7' },
    });
    expect(calls).toEqual(['bus:d-1', 'stream:d-1']);
  });

  it('without a stream writes the bus alone', async () => {
    const calls: string[] = [];
    const publisher = new OutputsPublisher({ bus: output('bus', calls).publisher });
    expect(publisher.outputs).toEqual(['bus']);
    expect((await publisher.publish(delivery)).outputs).toEqual(['bus']);
    expect(calls).toEqual(['bus:d-1']);
  });

  it("never writes the stream when the bus failed: both remain, with the bus error's code and onBus", async () => {
    const calls: string[] = [];
    const bus = output('bus', calls);
    bus.state.failing = new PublishError('publish_failed', 'bus down', { onBus: 'no', attempts: 3 });
    const publisher = new OutputsPublisher({ bus: bus.publisher, stream: output('stream', calls).publisher });
    const error = (await publisher.publish(delivery).catch((e: unknown) => e)) as OutputsPublishError;
    expect(error).toBeInstanceOf(OutputsPublishError);
    expect(error).toMatchObject({
      code: 'publish_failed',
      output: 'bus',
      remaining: ['bus', 'stream'],
      onBus: 'no',
      attempts: 3,
    });
    expect(calls).toEqual(['bus:d-1']);
  });

  it('leaves the stream alone remaining when the bus took the delivery and the stream did not', async () => {
    const calls: string[] = [];
    const stream = output('stream', calls);
    stream.state.failing = new PublishError('publish_rejected', 'kinesis refused', { onBus: 'no' });
    const publisher = new OutputsPublisher({ bus: output('bus', calls).publisher, stream: stream.publisher });
    await expect(publisher.publish(delivery)).rejects.toMatchObject({
      code: 'publish_rejected',
      output: 'stream',
      remaining: ['stream'],
    });
    // The retrier then writes the stream alone.
    stream.state.failing = undefined;
    calls.length = 0;
    expect((await publisher.publish(delivery, { outputs: ['stream'] })).outputs).toEqual(['stream']);
    expect(calls).toEqual(['stream:d-1']);
  });

  it("hands the stream the bus's claim check of a large delivery, so the object is not stored twice", async () => {
    const payloadRef = { bucket: 'claims', key: 'deliveries/d-1.json', bytes: 2, sha256: 'ab' };
    const seen: unknown[] = [];
    const publisher = new OutputsPublisher({
      bus: { publish: async () => ({ eventId: 'e-1', payloadRef }) },
      stream: { publish: async (_d: Delivery, options?: unknown) => seen.push(options) },
    });
    await publisher.publish(delivery);
    expect(seen).toEqual([{ payloadRef }]);
    // The retrier writing the stream alone has no bus result: the stream stores its own.
    await publisher.publish(delivery, { outputs: ['stream'] });
    expect(seen[1]).toEqual({});
  });

  it('refuses an output it does not know, and skips one no longer configured', async () => {
    const calls: string[] = [];
    const publisher = new OutputsPublisher({ bus: output('bus', calls).publisher });
    await expect(publisher.publish(delivery, { outputs: ['bus', 'sqs'] })).rejects.toThrow(
      'unknown output(s) "sqs"',
    );
    expect((await publisher.publish(delivery, { outputs: ['stream'] })).outputs).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('the queue and the retrier keep the outputs left', () => {
  const documents = mockClient(DynamoDBDocumentClient);
  const queue = () =>
    new DeliveryQueue({ client: new DynamoDBClient({ region: 'us-east-1' }), tableName: 'dedupe' });
  beforeEach(() => {
    documents.reset();
    documents.on(PutCommand).resolves({});
    documents.on(UpdateCommand).resolves({});
    documents.on(GetCommand).resolves({});
  });

  /** One due queue record of d-1 that the retrier lists and leases. */
  const dueRecord = (overrides: Partial<QueuedDelivery>) => {
    const record: QueuedDelivery = {
      pk: 'queue#d-1',
      delivery: 'd-1',
      event: 'pull_request',
      queuedAt: Date.now(),
      attempts: 0,
      body: Buffer.from('{"n":1}'),
      leaseOwner: 'o',
      ...overrides,
    };
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#d-1' }] });
    documents.on(UpdateCommand).resolves({ Attributes: record });
  };

  it('a queue record holds the outputs a failure left; a failure that names none leaves the field out', async () => {
    await queue().enqueue(
      delivery,
      new OutputsPublishError('stream', ['stream'], new PublishError('publish_failed', 'x')),
    );
    expect(documents.commandCalls(PutCommand)[0]?.args[0].input.Item?.outputs).toEqual(['stream']);
    await queue().enqueue({ ...delivery, id: 'd-2' }, new PublishError('publish_failed', 'x'));
    expect(documents.commandCalls(PutCommand)[1]?.args[0].input.Item).not.toHaveProperty('outputs');
  });

  it('the retrier writes only the outputs its record lists, and a retry that got further keeps the rest', async () => {
    dueRecord({ outputs: ['stream'] });
    documents
      .on(GetCommand)
      .resolves({ Item: { pk: 'd-1', status: 'COMPLETED', data: '{"delivery":"d-1","queued":true}' } });
    const asked: unknown[] = [];
    const failing = {
      async publish(_d: Delivery, options?: { outputs?: readonly string[] }) {
        asked.push(options?.outputs);
        throw new OutputsPublishError('stream', ['stream'], new PublishError('publish_failed', 'still down'));
      },
    };
    const report = await redriveQueue({ queue: queue(), publisher: failing });
    expect(report.retried).toBe(1);
    expect(asked).toEqual([['stream']]);
    const retry = documents.commandCalls(UpdateCommand).at(-1)?.args[0].input;
    expect(retry?.UpdateExpression).toContain('outputs = :outputs');
    expect(retry?.ExpressionAttributeValues?.[':outputs']).toEqual(['stream']);
  });

  it('a record queued before the stream existed (no outputs) gets every output of the publisher', async () => {
    dueRecord({});
    documents.on(GetCommand).resolves({});
    documents.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'x', $metadata: {} }));
    const asked: unknown[] = [];
    const report = await redriveQueue({
      queue: queue(),
      publisher: { publish: async (_d: Delivery, options?: unknown) => asked.push(options) },
    });
    expect(report.published).toBe(1);
    expect(asked).toEqual([undefined]);
  });
});
