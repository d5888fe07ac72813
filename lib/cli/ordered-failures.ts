/**
 * `forgebridge dlq --queue ordered`: the ordered subscribers' failure queue. When an ordered subscriber has used
 * up its retries on a record of the stream, Lambda's Kinesis mapping sends its on-failure destination (this SQS
 * queue) a pointer, not the record: the function, why it gave up, and the shard and sequence numbers of the batch
 * (`KinesisBatchInfo`). The records are read back from the stream (they stay for its retention) and handed to the
 * function as the batch the mapping would have handed it; the message is deleted once the function took the batch
 * (no error and no `batchItemFailures`).
 *
 * @see https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html
 */
import {
  type _Record,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
} from '@aws-sdk/client-kinesis';
import type { Message } from '@aws-sdk/client-sqs';
import { type DeadLetter, functionNameOf, type ReadDeadLettersOptions, readDeadLetters } from './dlq.js';

/** What the pointer of one failure message says. */
export interface OrderedPointer {
  functionArn: string;
  condition: string | undefined;
  approximateInvokeCount: number | undefined;
  functionError: string | undefined;
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  streamArn: string;
}

/** Most GetRecords reads for one pointer: its batch is a few records, never more than the mapping's batch size. */
const MAX_READS = 20;
/** Records asked for per GetRecords. */
const READ_LIMIT = 100;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The pointer in a failure message's body, or why the body is not one. */
export function orderedPointerOf(body: string | undefined): OrderedPointer | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return 'the body is not JSON';
  }
  const request = record(record(parsed).requestContext);
  const batch = record(record(parsed).KinesisBatchInfo);
  const functionArn = text(request.functionArn);
  const shardId = text(batch.shardId);
  const startSequenceNumber = text(batch.startSequenceNumber);
  const endSequenceNumber = text(batch.endSequenceNumber);
  const streamArn = text(batch.streamArn);
  if (
    functionArn === undefined ||
    shardId === undefined ||
    startSequenceNumber === undefined ||
    endSequenceNumber === undefined ||
    streamArn === undefined ||
    !/^\d+$/.test(startSequenceNumber) ||
    !/^\d+$/.test(endSequenceNumber)
  ) {
    return 'the body is not a Kinesis on-failure record (requestContext.functionArn and KinesisBatchInfo)';
  }
  const invokes = Number(request.approximateInvokeCount);
  return {
    functionArn,
    condition: text(request.condition),
    approximateInvokeCount: Number.isInteger(invokes) && invokes >= 0 ? invokes : undefined,
    functionError: text(record(record(parsed).responseContext).functionError),
    shardId,
    startSequenceNumber,
    endSequenceNumber,
    streamArn,
  };
}

/**
 * One failure message as a {@link DeadLetter}: its subscriber, why it was given up, when; `event` is filled by
 * {@link withRecords} once the records are read back.
 */
export function orderedLetterOf(message: Message): DeadLetter & { pointer?: OrderedPointer } {
  const pointer = orderedPointerOf(message.Body);
  const sent = Number(message.Attributes?.SentTimestamp);
  const base = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    ruleArn: undefined,
    sentAt: Number.isFinite(sent) && sent > 0 ? sent : undefined,
    deliveryId: undefined,
    source: undefined,
    hook: undefined,
    detailType: undefined,
    event: undefined,
  };
  if (typeof pointer === 'string') {
    return {
      ...base,
      subscriber: undefined,
      targetArn: undefined,
      errorCode: undefined,
      errorMessage: undefined,
      retryAttempts: undefined,
      problem: pointer,
    };
  }
  return {
    ...base,
    subscriber: functionNameOf(pointer.functionArn),
    targetArn: pointer.functionArn,
    errorCode: pointer.condition,
    errorMessage: pointer.functionError,
    retryAttempts: pointer.approximateInvokeCount,
    problem: undefined,
    pointer,
  };
}

/** The stream's name in its ARN (`arn:aws:kinesis:<region>:<account>:stream/<name>`). */
export function streamNameOf(streamArn: string): string | undefined {
  const match = /^arn:[^:]+:kinesis:[^:]*:\d*:stream\/([A-Za-z0-9_.-]{1,128})$/.exec(streamArn);
  return match?.[1];
}

/** Reads the records of the pointer's batch back from its shard, in order (start to end sequence, both included). */
export async function readBatch(
  kinesis: Pick<KinesisClient, 'send'>,
  pointer: OrderedPointer,
): Promise<_Record[]> {
  const streamName = streamNameOf(pointer.streamArn);
  if (streamName === undefined) throw new Error(`"${pointer.streamArn}" is not a Kinesis stream ARN`);
  const started = await kinesis.send(
    new GetShardIteratorCommand({
      StreamName: streamName,
      ShardId: pointer.shardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      StartingSequenceNumber: pointer.startSequenceNumber,
    }),
  );
  const end = BigInt(pointer.endSequenceNumber);
  const found: _Record[] = [];
  let iterator = started.ShardIterator;
  for (let read = 0; iterator !== undefined && read < MAX_READS; read += 1) {
    const page = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: READ_LIMIT }));
    for (const item of page.Records ?? []) {
      if (item.SequenceNumber === undefined) continue;
      if (BigInt(item.SequenceNumber) > end) return found;
      found.push(item);
    }
    // Caught up with the shard's tip, and the end not seen: the rest is past the stream's retention or never was.
    if ((page.Records ?? []).length === 0 && page.MillisBehindLatest === 0) break;
    iterator = page.NextShardIterator;
  }
  return found;
}

/** The Kinesis event the mapping hands the function for `records` of the pointer's shard. */
export function kinesisEventOf(
  records: readonly _Record[],
  pointer: OrderedPointer,
): Record<string, unknown> {
  const region = pointer.streamArn.split(':')[3] ?? '';
  return {
    Records: records.map((item) => ({
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: item.PartitionKey ?? '',
        sequenceNumber: item.SequenceNumber ?? '',
        data: Buffer.from(item.Data ?? new Uint8Array()).toString('base64'),
        approximateArrivalTimestamp:
          item.ApproximateArrivalTimestamp === undefined
            ? 0
            : item.ApproximateArrivalTimestamp.getTime() / 1000,
      },
      eventSource: 'aws:kinesis',
      eventVersion: '1.0',
      eventID: `${pointer.shardId}:${item.SequenceNumber ?? ''}`,
      eventName: 'aws:kinesis:record',
      awsRegion: region,
      eventSourceARN: pointer.streamArn,
    })),
  };
}

/**
 * Fills each letter's `event` (the batch read back), delivery id, source, hook and event name (of the batch's
 * first record); a pointer whose records are gone, or that is unreadable, says so in `problem`.
 */
export async function withRecords(
  letters: readonly (DeadLetter & { pointer?: OrderedPointer })[],
  kinesis: Pick<KinesisClient, 'send'>,
): Promise<DeadLetter[]> {
  const out: DeadLetter[] = [];
  for (const { pointer, ...letter } of letters) {
    if (pointer === undefined) {
      out.push(letter);
      continue;
    }
    let records: _Record[];
    try {
      records = await readBatch(kinesis, pointer);
    } catch (error) {
      const name = (error as { name?: unknown }).name;
      out.push({
        ...letter,
        problem: `its records could not be read back: ${typeof name === 'string' ? name : 'error'}`,
      });
      continue;
    }
    if (records.length === 0) {
      out.push({
        ...letter,
        problem: "its records are no longer in the stream (past the stream's retention)",
      });
      continue;
    }
    let event: Record<string, unknown> = {};
    try {
      event = record(JSON.parse(Buffer.from(records[0]?.Data ?? new Uint8Array()).toString('utf8')));
    } catch {
      // Not a stream event: the subscriber says so when it gets it.
    }
    const detail = record(event.detail);
    out.push({
      ...letter,
      deliveryId: text(detail.delivery),
      source: text(detail.source),
      hook: text(detail.hook),
      detailType: text(event['detail-type']),
      event: kinesisEventOf(records, pointer),
    });
  }
  return out;
}

/** Reads the failure queue's messages ({@link readDeadLetters}) and their records back from the stream. */
export async function readOrderedFailures(
  options: Omit<ReadDeadLettersOptions, 'parse'> & { kinesis: Pick<KinesisClient, 'send'> },
): Promise<DeadLetter[]> {
  const letters = await readDeadLetters({ ...options, parse: orderedLetterOf });
  return withRecords(letters, options.kinesis);
}
