// Cost per delivery, counted (issue 8, item 12): every AWS command the real wiring sends — the ingest as
// createIngestHandler assembles it: the Middy chain, createIngest, EventPublisher with its claim check, Powertools Idempotency, the delivery queue and, when on, the
// delivery log — with the SDK clients mocked by aws-sdk-client-mock. The integration figure over DynamoDB Local is in faults.test.ts.
import { ConditionalCheckFailedException, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../../lib/aws/index.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { invoke, recordingLogger, SECRET, v2Event } from './events.js';

const { dynamo, documents, events, s3 } = useIngestMocks();

const MAX_ENTRY_BYTES = 4_096;

function build(options: { log?: boolean } = {}) {
  return createIngestHandler({
    env: {
      FORGEBRIDGE_BUS_NAME: 'bus',
      FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
      FORGEBRIDGE_MAX_ENTRY_BYTES: `${MAX_ENTRY_BYTES}`,
      FORGEBRIDGE_BUCKET: 'claims',
      ...(options.log === true ? { FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries' } : {}),
    },
    clients: {
      dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
      eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
      s3: new S3Client({ region: 'us-east-1' }),
    },
    secret: SECRET,
    logger: recordingLogger(),
  });
}

/** Every command sent, by name, across the four clients. */
function sent(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const mock of [dynamo, documents, events, s3]) {
    for (const call of mock.calls()) {
      const name = (call.args[0] as object).constructor.name;
      counts[name] = (counts[name] ?? 0) + 1;
    }
  }
  return counts;
}

const DYNAMODB_WRITES = [
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'PutCommand',
  'UpdateCommand',
  'DeleteCommand',
  'BatchWriteCommand',
  'TransactWriteCommand',
];
const dynamoDbWrites = (counts: Record<string, number>) =>
  DYNAMODB_WRITES.reduce((sum, name) => sum + (counts[name] ?? 0), 0);

describe('cost per delivery on the happy path', () => {
  it('is 1 PutEvents, 2 DynamoDB writes (lock, done) and no S3 call for an entry under the limit', async () => {
    const answer = await invoke(build(), v2Event({ id: 'cost-small' }));
    expect(answer.statusCode).toBe(202);
    const counts = sent();
    expect(counts).toEqual({ PutItemCommand: 1, PutEventsCommand: 1, UpdateItemCommand: 1 });
    expect(dynamoDbWrites(counts)).toBeLessThanOrEqual(2);
    expect(s3.calls()).toHaveLength(0);
  });

  it('adds exactly 1 S3 PutObject for an entry over the limit (claim check), nothing else', async () => {
    const body = JSON.stringify({
      action: 'opened',
      issue: { number: 1, body: 'x'.repeat(MAX_ENTRY_BYTES) },
    });
    const answer = await invoke(build(), v2Event({ id: 'cost-large', body }));
    expect(answer.statusCode).toBe(202);
    const counts = sent();
    expect(counts).toEqual({
      PutItemCommand: 1,
      PutObjectCommand: 1,
      PutEventsCommand: 1,
      UpdateItemCommand: 1,
    });
    expect(dynamoDbWrites(counts)).toBeLessThanOrEqual(2);
    const entry = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0];
    expect(JSON.parse(entry?.Detail ?? '{}').payloadRef).toMatchObject({ bucket: 'claims' });
  });

  it('costs a redelivery of a published delivery one conditional write and no publish', async () => {
    dynamo.on(PutItemCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: marshall({
          pk: 'delivery#x',
          status: 'COMPLETED',
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
          data: { delivery: 'cost-again' },
        }),
      }),
    );
    const answer = await invoke(build(), v2Event({ id: 'cost-again' }));
    expect(answer.statusCode).toBe(200);
    expect(sent()).toEqual({ PutItemCommand: 1 });
  });
});

describe('cost per delivery with the delivery log on', () => {
  it('is 3 DynamoDB writes (lock, done, log record) and 1 PutEvents for a delivery published', async () => {
    const answer = await invoke(build({ log: true }), v2Event({ id: 'cost-logged' }));
    expect(answer.statusCode).toBe(202);
    const counts = sent();
    expect(counts).toEqual({
      PutItemCommand: 1,
      PutEventsCommand: 1,
      UpdateItemCommand: 1,
      PutCommand: 1,
    });
    expect(dynamoDbWrites(counts)).toBe(3);
    expect(documents.commandCalls(PutCommand)[0]?.args[0].input.TableName).toBe('deliveries');
  });

  it('is 2 DynamoDB writes with the log off, for the same delivery', async () => {
    await invoke(build({ log: false }), v2Event({ id: 'cost-unlogged' }));
    expect(dynamoDbWrites(sent())).toBe(2);
  });

  it('costs a refused delivery one write (its record) and nothing else', async () => {
    const answer = await invoke(build({ log: true }), v2Event({ id: 'cost-refused', secret: 'wrong' }));
    expect(answer.statusCode).toBe(401);
    expect(sent()).toEqual({ PutCommand: 1 });
  });

  it('costs a redelivery two writes: the refused lock and its record', async () => {
    dynamo.on(PutItemCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: marshall({
          pk: 'delivery#x',
          status: 'COMPLETED',
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
          data: { delivery: 'cost-again' },
        }),
      }),
    );
    const answer = await invoke(build({ log: true }), v2Event({ id: 'cost-again' }));
    expect(answer.statusCode).toBe(200);
    expect(sent()).toEqual({ PutItemCommand: 1, PutCommand: 1 });
  });
});
