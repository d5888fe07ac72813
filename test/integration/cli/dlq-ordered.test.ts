// `forgebridge dlq --queue ordered` against kinesalite (the local stack's ordered stream) and fauxqs (its failure
// queue), both real servers: pull_request deliveries written to the stream as the ingest writes them, and for two
// of them the pointer Lambda's Kinesis mapping sends its on-failure destination (the function, why, the shard and
// sequence numbers; never the record). Listing reads each record back (its delivery id, event and the error);
// the replay hands the real ordered subscriber handler (in this process) the batch the mapping would, deletes the
// message once it took it, and leaves one it fails again (its `batchItemFailures` answer) in the queue.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KinesisClient, PutRecordCommand } from '@aws-sdk/client-kinesis';
import type { InvokeCommand } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderedSubscriberHandler } from '../../../lib/aws/handlers/subscriber.js';
import { buildEventEntry, streamEventOf } from '../../../lib/aws/publish/index.js';
import { letGo, replayDeadLetters } from '../../../lib/cli/dlq.js';
import { readOrderedFailures } from '../../../lib/cli/ordered-failures.js';
import { type OrderedStream, startOrderedStream } from '../../../local-stack/ordered-stream.js';
import { freePort } from '../../../local-stack/ports.js';
import { type LocalSqs, startSqs } from '../../../local-stack/sqs.js';
import { expectOneLineError } from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';
import { lambdaContext } from '../../helpers/lambda-context.js';

const QUEUE = 'forgebridge-local-ordered-failures';
const STREAM = 'forgebridge-local-ordered';
const FUNCTION = 'forgebridge-local-onPullRequestOrdered';
const FUNCTION_ARN = `arn:aws:lambda:us-east-1:000000000000:function:${FUNCTION}`;

let home: string;
let stream: OrderedStream;
let local: LocalSqs;
let sqs: SQSClient;
let kinesis: KinesisClient;
let queueUrl: string;
const deliveries: string[] = [];

/** Writes one pull_request delivery to the stream as the ingest does; resolves with its shard and sequence number. */
async function write(id: string, number: number) {
  const entry = buildEventEntry(
    {
      id,
      name: 'pull_request',
      action: 'opened',
      forge: 'github',
      source: 'github',
      payload: { action: 'opened', number, repository: { full_name: 'acme/web' } },
    },
    { source: 'forge.webhooks' },
  );
  const put = await kinesis.send(
    new PutRecordCommand({
      StreamName: STREAM,
      PartitionKey: `acme/web#${number}`,
      Data: Buffer.from(JSON.stringify(streamEventOf(entry, new Date()))),
    }),
  );
  return { shardId: put.ShardId as string, sequenceNumber: put.SequenceNumber as string };
}

/** What Lambda sends the on-failure destination for one record given up on. */
const pointer = (at: { shardId: string; sequenceNumber: string }) =>
  JSON.stringify({
    requestContext: {
      functionArn: FUNCTION_ARN,
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 4,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'BatchItemFailure' },
    version: '1.0',
    timestamp: new Date().toISOString(),
    KinesisBatchInfo: {
      shardId: at.shardId,
      startSequenceNumber: at.sequenceNumber,
      endSequenceNumber: at.sequenceNumber,
      approximateArrivalOfFirstRecord: new Date().toISOString(),
      approximateArrivalOfLastRecord: new Date().toISOString(),
      batchSize: 1,
      streamArn: stream.streamArn,
    },
  });

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'forgebridge-dlq-ordered-'));
  [stream, local] = await Promise.all([
    startOrderedStream({
      port: await freePort(),
      streamName: STREAM,
      shards: 2,
      failureFile: join(home, 'f.jsonl'),
    }),
    startSqs({ queues: [QUEUE] }),
  ]);
  sqs = new SQSClient(local.clientConfig);
  kinesis = new KinesisClient({
    endpoint: stream.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // kinesalite speaks HTTP/1.1 (the SDK's Kinesis default is HTTP/2).
    requestHandler: new NodeHttpHandler(),
  });
  queueUrl = local.queueUrls[QUEUE] as string;
  for (let n = 0; n < 6; n += 1) {
    const id = randomUUID();
    deliveries.push(id);
    const at = await write(id, n);
    // Deliveries 1 and 4 were given up on.
    if (n === 1 || n === 4)
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: pointer(at) }));
  }
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"not":"a pointer"}' }));
}, 60_000);

afterAll(async () => {
  sqs?.destroy();
  kinesis?.destroy();
  await Promise.all([stream?.stop(), local?.stop()]);
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({
  FORGEBRIDGE_SQS_ENDPOINT: local.endpoint,
  FORGEBRIDGE_KINESIS_ENDPOINT: stream.endpoint,
  FORGEBRIDGE_STATE_FILE: join(home, 'no-state.json'),
});

const visible = async () =>
  Number(
    (
      await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      )
    ).Attributes?.ApproximateNumberOfMessages,
  );

describe('forgebridge dlq --queue ordered', () => {
  it('lists each failure with its record read back from the stream, taking nothing out', async () => {
    const listed = await runMain(['dlq', 'list', '--queue', 'ordered', '--json'], env());
    expect(listed.stderr).toBe('');
    const { count, messages } = JSON.parse(listed.stdout);
    expect(count).toBe(3);
    const found = messages.filter((message: { deliveryId?: string }) => message.deliveryId !== undefined);
    expect(found.map((message: { deliveryId: string }) => message.deliveryId).sort()).toEqual(
      [deliveries[1], deliveries[4]].sort(),
    );
    expect(found[0]).toMatchObject({
      subscriber: FUNCTION,
      detailType: 'pull_request.opened',
      source: 'github',
      errorCode: 'RetryAttemptsExhausted',
      errorMessage: 'BatchItemFailure',
      retryAttempts: 4,
    });
    expect(messages.find((message: { problem?: string }) => message.problem !== undefined)?.problem).toMatch(
      /^the body is not a Kinesis on-failure record/,
    );
    const text = await runMain(['dlq', 'list', '--queue', 'ordered'], env());
    expect(text.stdout).toMatch(/^3 messages in the ordered failure queue {2}local stack/);
    await expect.poll(visible).toBe(3);
    const dry = await runMain(
      ['dlq', 'replay', '--queue', 'ordered', '--subscriber', 'onPullRequestOrdered', '--dry-run', '--json'],
      env(),
    );
    expect(JSON.parse(dry.stdout)).toMatchObject({ subscriber: FUNCTION, selected: 2, dryRun: true });
  });

  it('refuses an unknown queue and a stack without an ordered stream', async () => {
    expectOneLineError(await runMain(['dlq', 'list', '--queue', 'streams'], env()), 2, '--queue');
    const { FORGEBRIDGE_KINESIS_ENDPOINT: _, ...noStream } = env();
    expectOneLineError(
      await runMain(['dlq', 'list', '--queue', 'ordered'], noStream),
      3,
      'the local stack runs no ordered stream',
    );
  });

  it('replays each to the ordered subscriber, deletes what it took and leaves what it fails again', async () => {
    const handled: string[] = [];
    const handler = createOrderedSubscriberHandler({
      name: FUNCTION,
      env: {},
      metrics: false,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      register: (events) =>
        events.on('pull_request', ({ id }) => {
          // Still failing for delivery 4: the fix is only half deployed.
          if (id === deliveries[4]) throw new Error('still failing');
          handled.push(id);
        }),
    });
    const lambda = {
      send: async (command: InvokeCommand) => {
        expect(command.input.FunctionName).toBe(FUNCTION);
        const event = JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString('utf8'));
        const answer = await handler(event, lambdaContext(FUNCTION));
        return { StatusCode: 200, Payload: Buffer.from(JSON.stringify(answer)) };
      },
    };
    const read = await readOrderedFailures({ sqs, queueUrl, holdSeconds: 120, limit: 100, kinesis });
    const letters = read.filter((letter) => letter.event !== undefined);
    expect(letters).toHaveLength(2);
    // The message that is no pointer is let go at once, as the command does.
    await letGo(
      sqs,
      queueUrl,
      read.filter((letter) => letter.event === undefined),
    );
    const run = await replayDeadLetters({
      sqs,
      queueUrl,
      lambda: lambda as never,
      functionName: FUNCTION,
      letters,
      ratePerSecond: 100,
    });
    expect(handled).toEqual([deliveries[1]]);
    expect(run).toMatchObject({ sent: 1, failed: 1, deleted: 1 });
    expect(run.failures).toEqual([
      {
        deliveryId: deliveries[4],
        error: expect.stringMatching(/^the function did not take 1 record of the batch/),
      },
    ]);
    // The failing one and the unreadable one are still there; the one taken is gone.
    await expect.poll(visible).toBe(2);
    const again = await readOrderedFailures({ sqs, queueUrl, holdSeconds: 1, limit: 100, kinesis });
    expect(again.map((letter) => letter.deliveryId).filter(Boolean)).toEqual([deliveries[4]]);
  });
});
