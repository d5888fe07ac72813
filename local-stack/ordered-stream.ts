// The ordered stream of the local stack (docs/ordering.md): kinesalite, the Kinesis Data Streams server from npm,
// holds the stream the ingest writes to, and a poller in the stack's process does what Lambda's Kinesis
// event-source mapping does on AWS for each ordered subscriber of config/local.yml: it reads every shard in order,
// keeps the records the subscriber's filter matches, spreads them over `parallelizationFactor` slots by their
// partition key (records of one key always share a slot), and invokes the function through serverless-offline's
// Lambda API with one batch per slot at a time. A batch that fails (the function threw, or answered a
// `batchItemFailures` sequence number) is retried from the failed record, split in two while it holds more than
// one record (bisect on error), and once the single failing record has used `maximumRetryAttempts` retries its batch
// details go to the failure destination (a JSON-lines file here, the SQS queue on AWS) and the slot goes on.
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import {
  type _Record,
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';
import { SendMessageCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import kinesalite from 'kinesalite';
import type { OrderedSubscriberConfig } from '../lib/aws/stage/index.js';
import { matchesPattern } from '../lib/inspector/index.js';

/** The account and region of the local stack's ARNs. */
const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

/**
 * How long a poller waits after an empty read, and before it retries a failed batch, in ms (Lambda backs off between a
 * stream batch's retries as well, by seconds).
 */
const IDLE_MS = 100;
const RETRY_MS = 800;

/** One message of the failure destination: what Lambda sends to an on-failure destination of a Kinesis mapping. */
export interface OrderedFailure {
  requestContext: {
    functionArn: string;
    condition: 'RetryAttemptsExhausted';
    approximateInvokeCount: number;
  };
  responseContext: { functionError: string };
  version: '1.0';
  timestamp: string;
  KinesisBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    batchSize: number;
    streamArn: string;
  };
  /** Local only: the partition key and the delivery of the record given up on, for a reader of the file. */
  partitionKey: string;
  delivery: string | undefined;
}

/** Options of {@link startOrderedStream}. */
export interface OrderedStreamOptions {
  streamName: string;
  shards: number;
  /** The JSON-lines file the failure destination appends to. */
  failureFile: string;
  /**
   * The failure destination's SQS queue (fauxqs), as on AWS: each failure is also sent there, as Lambda sends it
   * (without the local-only `partitionKey` and `delivery`), for `forgebridge dlq --queue ordered`.
   */
  failureQueue?: { clientConfig: SQSClientConfig; queueUrl: string } | undefined;
}

/** A running kinesalite with the stream created. */
export interface OrderedStream {
  /** Where the functions reach it (AWS_ENDPOINT_URL_KINESIS). */
  readonly endpoint: string;
  readonly streamArn: string;
  /**
   * Starts one poller per subscriber and shard, invoking `forgebridge-<stage>-<function>` at `lambdaEndpoint`
   * (serverless-offline's Lambda API).
   */
  startPollers(options: {
    lambdaEndpoint: string;
    stage: string;
    subscribers: readonly OrderedSubscriberConfig[];
  }): void;
  /** Stops the pollers (waiting for the invocations under way) and the server. */
  stop(): Promise<void>;
}

/** A record read from the shard, decoded. */
interface ShardRecord {
  sequenceNumber: string;
  partitionKey: string;
  data: Buffer;
  arrivalSeconds: number;
  /** The data as JSON, when it is a JSON object (the stream event the ingest wrote). */
  event: Record<string, unknown> | undefined;
  delivery: string | undefined;
}

/** The Kinesis client of the poller, on kinesalite's HTTP/1.1 port. */
function clientOf(endpoint: string): KinesisClient {
  return new KinesisClient({
    endpoint,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: new NodeHttpHandler({ connectionTimeout: 1_000, requestTimeout: 10_000 }),
    maxAttempts: 3,
  });
}

/** The slot of a partition key among `slots`: from its MD5, as Kinesis hashes keys to shards. */
export function slotOf(partitionKey: string, slots: number): number {
  const digest = createHash('md5').update(partitionKey, 'utf8').digest();
  return digest.readUInt32BE(0) % slots;
}

function decoded(record: _Record): ShardRecord {
  const data = Buffer.from(record.Data ?? new Uint8Array());
  let event: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(data.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) event = parsed as Record<string, unknown>;
  } catch {
    // Not a stream event: the subscriber fails it, as it would on AWS.
  }
  const id = (event?.detail as { delivery?: unknown } | undefined)?.delivery;
  return {
    sequenceNumber: record.SequenceNumber ?? '',
    partitionKey: record.PartitionKey ?? '',
    data,
    event,
    delivery: typeof id === 'string' ? id : undefined,
    arrivalSeconds: (record.ApproximateArrivalTimestamp ?? new Date()).getTime() / 1000,
  };
}

/** Starts kinesalite on `port` of 127.0.0.1 and creates the stream (active at once). */
export async function startOrderedStream(
  options: OrderedStreamOptions & { port: number },
): Promise<OrderedStream> {
  const server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 500 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${options.port}`;
  const kinesis = clientOf(endpoint);
  const { streamName } = options;
  await kinesis.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: options.shards }));
  for (;;) {
    const { StreamDescriptionSummary } = await kinesis.send(
      new DescribeStreamSummaryCommand({ StreamName: streamName }),
    );
    if (StreamDescriptionSummary?.StreamStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const streamArn = `arn:aws:kinesis:${REGION}:${ACCOUNT}:stream/${streamName}`;
  const failureQueue =
    options.failureQueue === undefined ? undefined : new SQSClient(options.failureQueue.clientConfig);
  const aborted = new AbortController();
  const running: Promise<void>[] = [];

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      aborted.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  /** One subscriber on one shard: the reader and its slots. */
  const pollShard = async (
    shardId: string,
    subscriber: OrderedSubscriberConfig,
    functionUrl: string,
    functionArn: string,
  ): Promise<void> => {
    const slots: ShardRecord[][] = Array.from({ length: subscriber.parallelizationFactor }, () => []);
    const wake: (() => void)[] = [];
    const signal = () => {
      for (const resolve of wake.splice(0)) resolve();
    };
    const nextWork = () =>
      new Promise<void>((resolve) => {
        wake.push(resolve);
        aborted.signal.addEventListener('abort', () => resolve());
      });

    const invoke = async (batch: ShardRecord[]): Promise<{ failedAt: number | undefined; error: string }> => {
      const event = {
        Records: batch.map((record) => ({
          kinesis: {
            kinesisSchemaVersion: '1.0',
            partitionKey: record.partitionKey,
            sequenceNumber: record.sequenceNumber,
            data: record.data.toString('base64'),
            approximateArrivalTimestamp: record.arrivalSeconds,
          },
          eventSource: 'aws:kinesis',
          eventVersion: '1.0',
          eventID: `${shardId}:${record.sequenceNumber}`,
          eventName: 'aws:kinesis:record',
          awsRegion: REGION,
          eventSourceARN: streamArn,
        })),
      };
      let response: Response;
      try {
        response = await fetch(functionUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
          signal: AbortSignal.any([aborted.signal, AbortSignal.timeout(120_000)]),
        });
      } catch (error) {
        return { failedAt: 0, error: (error as Error).name };
      }
      const text = await response.text().catch(() => '');
      const functionError =
        response.headers.get('x-amz-function-error') ?? response.headers.get('x-amzn-errortype');
      if (!response.ok || functionError !== null)
        return { failedAt: 0, error: functionError ?? `HTTP ${response.status}` };
      let answer: { batchItemFailures?: { itemIdentifier?: unknown }[] } | null = null;
      try {
        answer = text === '' ? null : JSON.parse(text);
      } catch {
        return { failedAt: 0, error: 'unreadable response' };
      }
      const failed = answer?.batchItemFailures?.[0]?.itemIdentifier;
      if (failed === undefined) return { failedAt: undefined, error: '' };
      const index = batch.findIndex((record) => record.sequenceNumber === failed);
      // An identifier not in the batch fails the whole batch, as Lambda treats it.
      return { failedAt: Math.max(index, 0), error: 'BatchItemFailure' };
    };

    /** Hands `batch` over until it is through, retrying and bisecting as the mapping does. */
    const deliver = async (batch: ShardRecord[]): Promise<void> => {
      let pending = batch;
      let retries = 0;
      let invokes = 0;
      while (pending.length > 0 && !aborted.signal.aborted) {
        invokes += 1;
        const { failedAt, error } = await invoke(pending);
        if (failedAt === undefined) return;
        // The records before the failed one are done (the checkpoint moves to it).
        pending = pending.slice(failedAt);
        if (pending.length > 1) {
          // Bisect: the half with the failing record first; the other half after it, in order.
          const half = Math.ceil(pending.length / 2);
          const [first, second] = [pending.slice(0, half), pending.slice(half)];
          await sleep(RETRY_MS);
          await deliver(first);
          pending = second;
          retries = 0;
          continue;
        }
        if (retries >= subscriber.maximumRetryAttempts) {
          const [record] = pending as [ShardRecord];
          const failure: OrderedFailure = {
            requestContext: {
              functionArn,
              condition: 'RetryAttemptsExhausted',
              approximateInvokeCount: invokes,
            },
            responseContext: { functionError: error },
            version: '1.0',
            timestamp: new Date().toISOString(),
            KinesisBatchInfo: {
              shardId,
              startSequenceNumber: record.sequenceNumber,
              endSequenceNumber: record.sequenceNumber,
              batchSize: 1,
              streamArn,
            },
            partitionKey: record.partitionKey,
            delivery: record.delivery,
          };
          appendFileSync(options.failureFile, `${JSON.stringify(failure)}\n`);
          if (failureQueue !== undefined) {
            const { partitionKey: _key, delivery: _delivery, ...sent } = failure;
            await failureQueue
              .send(
                new SendMessageCommand({
                  QueueUrl: options.failureQueue?.queueUrl,
                  MessageBody: JSON.stringify(sent),
                }),
              )
              .catch((error: unknown) => {
                // The file keeps it: say so in the stack's output, never stop the slot.
                process.stderr.write(
                  `ordered stream: failure not sent to its queue: ${(error as Error).name}\n`,
                );
              });
          }
          return;
        }
        retries += 1;
        await sleep(RETRY_MS);
      }
    };

    const slotWorker = async (slot: ShardRecord[]): Promise<void> => {
      while (!aborted.signal.aborted) {
        if (slot.length === 0) {
          await nextWork();
          continue;
        }
        await deliver(slot.splice(0, subscriber.batchSize));
      }
    };
    const workers = slots.map(slotWorker);

    let iterator = (
      await kinesis.send(
        new GetShardIteratorCommand({
          StreamName: streamName,
          ShardId: shardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (!aborted.signal.aborted && iterator !== undefined) {
      let page: GetRecordsCommandOutput;
      try {
        page = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }), {
          abortSignal: aborted.signal,
        });
      } catch {
        if (aborted.signal.aborted) break;
        await sleep(IDLE_MS);
        continue;
      }
      iterator = page.NextShardIterator;
      const records = (page.Records ?? []).map(decoded);
      for (const record of records) {
        // The mapping's filter criteria: the pattern against the record's data; a record they drop is never handed over.
        const matches =
          Object.keys(subscriber.pattern).length === 0 ||
          (record.event !== undefined && matchesPattern(subscriber.pattern, record.event));
        if (!matches) continue;
        slots[slotOf(record.partitionKey, slots.length)]?.push(record);
      }
      if (records.length > 0) signal();
      else await sleep(IDLE_MS);
    }
    signal();
    await Promise.all(workers);
  };

  return {
    endpoint,
    streamArn,
    startPollers({ lambdaEndpoint, stage, subscribers }) {
      const started = (async () => {
        const { Shards } = await kinesis.send(new ListShardsCommand({ StreamName: streamName }));
        const shardIds = (Shards ?? []).map((shard) => shard.ShardId as string);
        await Promise.all(
          subscribers.flatMap((subscriber) => {
            const name = `forgebridge-${stage}-${subscriber.function}`;
            const url = `${lambdaEndpoint}/2015-03-31/functions/${name}/invocations`;
            const arn = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
            return shardIds.map((shardId) => pollShard(shardId, subscriber, url, arn));
          }),
        );
      })().catch((error: unknown) => {
        if (!aborted.signal.aborted)
          console.error(`ordered stream poller stopped: ${(error as Error).message}`);
      });
      running.push(started);
    },
    async stop() {
      aborted.abort();
      await Promise.all(running);
      kinesis.destroy();
      failureQueue?.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
