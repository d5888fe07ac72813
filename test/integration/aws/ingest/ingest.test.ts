// The ingest as createIngestHandler assembles it (verification, the JSON body parser, createIngest,
// webhookErrors) against DynamoDB Local, with a bus endpoint that refuses connections for real.
import { createHash } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher } from '../../../../lib/aws/index.js';
import { createDedupedPublish } from '../../../../lib/aws/ingest/dedupe.js';
import { DeliveryQueue } from '../../../../lib/aws/queue/index.js';
import { freePort } from '../../../../local-stack/ports.js';
import { signedDelivery, testIngest } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
let eventBridge: EventBridgeClient;

beforeAll(async () => {
  // A port nothing listens on: the bus endpoint is down (connection refused), for real.
  const port = await freePort();
  eventBridge = new EventBridgeClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
});
afterAll(() => eventBridge?.destroy());

const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
const context = { getRemainingTimeInMillis: () => 20_000 } as Context;
const delivery = (id: string) => ({ id, name: 'push', payload: {}, rawBody: Buffer.from('{}') });

function ingest(tableName: string) {
  const publisher = new EventPublisher({
    eventBridge,
    eventBusName: 'forge',
    budgetMs: 600,
    baseDelayMs: 20,
  });
  return testIngest({ tableName, dynamodb: ddb.client(), publisher });
}

async function post(tableName: string, options: { id: string; secret?: string }) {
  const { headers, body } = signedDelivery({ action: 'opened', issue: {} }, options);
  const event = {
    version: '2.0',
    headers,
    body: Buffer.from(body).toString('base64'),
    isBase64Encoded: true,
    requestContext: { http: { method: 'POST' } },
  };
  return (await ingest(tableName)(event as never, context)) as { statusCode: number; body: string };
}

async function item(tableName: string, id: string) {
  const { Item } = await ddb
    .documentClient()
    .send(new GetCommand({ TableName: tableName, Key: { pk: keyOf(id) } }));
  return Item;
}

describe('the ingest chain with DynamoDB Local and an unreachable bus', () => {
  it('queues the delivery when the bus stays down (202 queued) and answers its redelivery 200 duplicate', async () => {
    const { dedupe } = await ddb.tables();
    const started = Date.now();
    const answer = await post(dedupe, { id: 'd-down' });
    expect(answer).toMatchObject({ statusCode: 202, body: '{"delivery":"d-down","queued":true}' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await item(dedupe, 'd-down')).toMatchObject({ status: 'COMPLETED' });
    const { Item } = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: dedupe, Key: { pk: 'queue#d-down' } }));
    expect(Item).toMatchObject({
      delivery: 'd-down',
      event: 'issues',
      queue: 'due',
      lastError: 'publish_failed',
    });
    expect((await post(dedupe, { id: 'd-down' })).body).toBe('{"duplicate":true}');
  });

  it('answers 503 when the bus stays down and the queue write fails too, releasing the lock', async () => {
    const { dedupe } = await ddb.tables();
    // A queue on a table that does not exist: DynamoDB Local refuses the write for real.
    const queue = new DeliveryQueue({ client: ddb.client(), tableName: 'no-such-table' });
    const publisher = new EventPublisher({
      eventBridge,
      eventBusName: 'forge',
      budgetMs: 300,
      baseDelayMs: 20,
    });
    const handler = testIngest({ tableName: dedupe, dynamodb: ddb.client(), publisher, queue });
    const { headers, body } = signedDelivery({ action: 'opened', issue: {} }, { id: 'd-lost' });
    const event = { version: '2.0', headers, body, requestContext: { http: { method: 'POST' } } };
    const answer = (await handler(event as never, context)) as { statusCode: number };
    expect(answer.statusCode).toBe(503);
    expect(await item(dedupe, 'd-lost')).toBeUndefined();
  });

  it('answers 200 {"duplicate":true} for a delivery already published, without trying the bus', async () => {
    const { dedupe } = await ddb.tables();
    await createDedupedPublish({ client: ddb.client(), tableName: dedupe, publish: async () => {} })(
      delivery('d-done'),
      context,
    );
    const started = Date.now();
    const answer = await post(dedupe, { id: 'd-done' });
    expect(answer).toMatchObject({ statusCode: 200, body: '{"duplicate":true}' });
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('answers 409 while another invocation holds the delivery, and leaves its lock alone', async () => {
    const { dedupe } = await ddb.tables();
    void createDedupedPublish({
      client: ddb.client(),
      tableName: dedupe,
      publish: () => new Promise(() => {}),
    })(delivery('d-busy'), context);
    await expect
      .poll(() => item(dedupe, 'd-busy'), { timeout: 10_000 })
      .toMatchObject({ status: 'INPROGRESS' });
    const answer = await post(dedupe, { id: 'd-busy' });
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body).error.code).toBe('in_progress');
    expect(await item(dedupe, 'd-busy')).toMatchObject({ status: 'INPROGRESS' });
  });

  it('answers 401 for a bad signature and writes nothing to the table', async () => {
    const { dedupe } = await ddb.tables();
    const answer = await post(dedupe, { id: 'd-forged', secret: 'not-the-secret' });
    expect(answer.statusCode).toBe(401);
    const { Items } = await ddb.documentClient().send(new ScanCommand({ TableName: dedupe }));
    expect(Items).toEqual([]);
  });
});
