import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { S3Client } from '@aws-sdk/client-s3';
import { sdkHttp1Timeouts, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { EventPublisher, OutputsPublisher, type PublisherLike, StreamPublisher } from '../publish/index.js';
import { DeliveryQueue } from '../queue/index.js';
import type { IngestConfig } from '../stage/function-config.js';
import type { LoggerLike } from '../types.js';

/** What the ingest and the retrier share: the way onto the bus and the queue beside it, and their clients. */
export interface DeliveryPathOptions<Q> {
  publisher: IngestConfig['publisher'];
  /** The dedupe table, which holds the queue records. */
  tableName: string;
  ttlSeconds?: number | undefined;
  requestTimeoutMs: number;
  clients: {
    dynamodb?: DynamoDBClient | undefined;
    eventBridge?: EventBridgeClient | undefined;
    /** Built with `maxAttempts: 1` when an ordered stream is configured: the stream publisher retries itself. */
    kinesis?: KinesisClient | undefined;
    s3?: S3Client | undefined;
  };
  logger: LoggerLike;
  /** Given instead of the ones built here. */
  given: { publisher?: PublisherLike | undefined; queue?: Q | undefined };
}

/**
 * Builds the publisher (its `PutEvents` client with `maxAttempts: 1`: it retries within its own budget) and the
 * durable queue on the dedupe table, both claim-checking through one S3 client; each client not given is built
 * with the caller's socket timeouts, so a stalled call fails within the forge's ~10 s.
 */
export function deliveryPath<Q = DeliveryQueue>(options: DeliveryPathOptions<Q>) {
  const { clients, requestTimeoutMs, logger } = options;
  const quick = sdkTimeouts(requestTimeoutMs);
  const dynamodb = clients.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(quick));
  const s3 = clients.s3 ?? withoutSdkCallLog(new S3Client(sdkTimeouts(Math.max(requestTimeoutMs, 5_000))));
  const { stream, ...busOptions } = options.publisher;
  let publisher = options.given.publisher;
  if (publisher === undefined) {
    const bus = new EventPublisher({
      ...busOptions,
      eventBridge:
        clients.eventBridge ?? withoutSdkCallLog(new EventBridgeClient({ ...quick, maxAttempts: 1 })),
      s3,
      logger,
    });
    // The ordered stream, after the bus, when an ordered subscriber is configured (FORGEBRIDGE_STREAM_NAME).
    publisher =
      stream === undefined
        ? new OutputsPublisher({ bus })
        : new OutputsPublisher({
            bus,
            stream: new StreamPublisher({
              ...busOptions,
              ...stream,
              kinesis:
                clients.kinesis ??
                withoutSdkCallLog(
                  new KinesisClient({ ...sdkHttp1Timeouts(requestTimeoutMs), maxAttempts: 1 }),
                ),
              s3,
              logger,
            }),
          });
  }
  const queue: Q | DeliveryQueue =
    options.given.queue ??
    new DeliveryQueue({
      client: dynamodb,
      tableName: options.tableName,
      ttlSeconds: options.ttlSeconds,
      s3,
      bucket: options.publisher.bucket,
    });
  return { dynamodb, publisher, queue };
}
