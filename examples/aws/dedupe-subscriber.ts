// A subscriber that acts once per delivery although the bus can bring it twice (a publish whose reply was lost and
// was retried; EventBridge's own at-least-once delivery): Powertools Idempotency keyed on `detail.delivery`, the
// forge's delivery id. The table: partition key `id` (S), TTL on `expiration` (Powertools' defaults).
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { createSubscriber, type DeliveryDetail, requireEnv, sdkTimeouts } from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';

const logger = new Logger({ serviceName: 'dedupe-subscriber' });

const events = createEventHandler();
events.on('issues.opened', async ({ id, payload }) => {
  /* your side effect: it runs once per delivery id */
  logger.info('issue opened', { delivery: id, repository: payload.repository.full_name });
});
const receive = createSubscriber({ events, logger, s3: new S3Client(sdkTimeouts()) });

const persistenceStore = new DynamoDBPersistenceLayer({
  tableName: requireEnv('IDEMPOTENCY_TABLE'),
  awsSdkV3Client: new DynamoDBClient(sdkTimeouts()),
});
// Keyed per function (Powertools prefixes the function name): every subscriber acts once. A second copy can come
// days later (EventBridge retries a target for 24 h, the ingest's retrier as long): records live 7 days, as the
// ingest's own dedupe records do.
const config = new IdempotencyConfig({
  eventKeyJmesPath: 'detail.delivery',
  throwOnNoIdempotencyKey: true,
  expiresAfterSeconds: 7 * 24 * 60 * 60,
});

/** The Lambda entry point: a second event with the same `detail.delivery` returns the first one's result. */
export const handler = makeIdempotent(
  async (event: EventBridgeEvent<string, DeliveryDetail>, _context: Context) => {
    const { id, name } = await receive(event);
    return { delivery: id, event: name };
  },
  { persistenceStore, config },
);
