/**
 * Signed webhook deliveries for the lib/aws tests, as the forge would post them.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  createIngestHandler,
  type IngestHandlerOptions,
  type LoggerLike,
  type PublisherLike,
} from '../../lib/aws/index.js';
import { sign } from '../../lib/webhooks/index.js';

/** The development secret of the aws tests. */
export const TEST_SECRET = 'aws-test-secret';

/**
 * Headers and raw body of a delivery signed with `secret` (sha256).
 *
 * @example
 * ```ts
 * const { headers, body } = signedDelivery({ action: 'opened' }, { event: 'issues', id: 'd-1' });
 * ```
 */
export function signedDelivery(
  payload: unknown,
  options: { event?: string; id?: string; secret?: string; body?: string } = {},
): { headers: Record<string, string>; body: string } {
  const body = options.body ?? JSON.stringify(payload);
  return {
    headers: {
      'content-type': 'application/json',
      'x-forge-event': options.event ?? 'issues',
      'x-forge-delivery': options.id ?? 'd-1',
      'x-hub-signature-256': sign(options.secret ?? TEST_SECRET, body),
    },
    body,
  };
}

/** A logger that drops every line (the tests that need lines keep their own). */
export const quietLogger: LoggerLike = { info() {}, warn() {}, error() {} };

/**
 * The ingest as the function builds it (`createIngestHandler`), on a dedupe table of DynamoDB Local, verifying
 * with {@link TEST_SECRET}; the publisher (and the queue) are the test's.
 */
export function testIngest(options: {
  tableName: string;
  dynamodb: DynamoDBClient;
  publisher: PublisherLike;
  queue?: IngestHandlerOptions['queue'];
  logger?: LoggerLike;
}) {
  return createIngestHandler({
    env: { FORGEBRIDGE_BUS_NAME: 'forge', FORGEBRIDGE_DEDUPE_TABLE: options.tableName },
    clients: { dynamodb: options.dynamodb },
    publisher: options.publisher,
    queue: options.queue,
    secret: TEST_SECRET,
    logger: options.logger ?? quietLogger,
  });
}
