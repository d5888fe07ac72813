import { once } from 'node:events';
import { createServer } from 'node:net';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSecretsProvider,
  DedupeStore,
  EventPublisher,
  fromApiGatewayEvent,
  handleDelivery,
} from '../../../../lib/aws/index.js';
import { signedDelivery, TEST_SECRET } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
let deadBus: string;
let eventBridge: EventBridgeClient;

beforeAll(async () => {
  // A port nothing listens on: the bus endpoint is down (connection refused), for real.
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  deadBus = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  await new Promise((resolve) => server.close(resolve));
  eventBridge = new EventBridgeClient({
    endpoint: deadBus,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
});
afterAll(() => eventBridge?.destroy());

async function deps(tableName: string) {
  return {
    getSecrets: createSecretsProvider({ offline: true, env: { FORGEBRIDGE_WEBHOOK_SECRET: TEST_SECRET } })
      .getSecrets,
    dedupe: new DedupeStore({ client: ddb.documentClient(), tableName }),
    publisher: new EventPublisher({ eventBridge, eventBusName: 'forge', budgetMs: 600, baseDelayMs: 20 }),
  };
}

function httpApiEvent(delivery: { headers: Record<string, string>; body: string }) {
  return fromApiGatewayEvent({
    version: '2.0',
    headers: delivery.headers,
    body: Buffer.from(delivery.body).toString('base64'),
    isBase64Encoded: true,
    requestContext: { http: { method: 'POST' } },
  } as never);
}

describe('handleDelivery() with DynamoDB Local and an unreachable bus', () => {
  it('answers 503 when the bus stays down, and releases the lock so the redelivery is new', async () => {
    const { dedupe } = await ddb.tables();
    const delivery = signedDelivery({ action: 'opened', issue: {} }, { id: 'd-down' });
    const started = Date.now();
    const response = await handleDelivery(httpApiEvent(delivery), await deps(dedupe));
    expect(response.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
    const { Item } = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: dedupe, Key: { pk: 'd-down' } }));
    expect(Item).toBeUndefined();
    expect(await new DedupeStore({ client: ddb.documentClient(), tableName: dedupe }).begin('d-down')).toBe(
      'new',
    );
  });

  it('answers 200 {"duplicate":true} for a delivery already done, without trying the bus', async () => {
    const { dedupe } = await ddb.tables();
    const earlier = new DedupeStore({ client: ddb.documentClient(), tableName: dedupe });
    await earlier.begin('d-done');
    await earlier.complete('d-done');
    const response = await handleDelivery(
      httpApiEvent(signedDelivery({ action: 'opened' }, { id: 'd-done' })),
      await deps(dedupe),
    );
    expect(response).toMatchObject({ statusCode: 200, body: '{"duplicate":true}' });
  });

  it('answers 409 while another invocation holds the delivery, and leaves its lock alone', async () => {
    const { dedupe } = await ddb.tables();
    await new DedupeStore({ client: ddb.documentClient(), tableName: dedupe }).begin('d-busy');
    const response = await handleDelivery(
      httpApiEvent(signedDelivery({ action: 'opened' }, { id: 'd-busy' })),
      await deps(dedupe),
    );
    expect(response.statusCode).toBe(409);
    const { Item } = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: dedupe, Key: { pk: 'd-busy' } }));
    expect(Item?.status).toBe('in_progress');
  });

  it('answers 401 for a bad signature and writes nothing to the table', async () => {
    const { dedupe } = await ddb.tables();
    const response = await handleDelivery(
      httpApiEvent(signedDelivery({ action: 'opened' }, { id: 'd-forged', secret: 'not-the-secret' })),
      await deps(dedupe),
    );
    expect(response.statusCode).toBe(401);
    const { Item } = await ddb
      .documentClient()
      .send(new GetCommand({ TableName: dedupe, Key: { pk: 'd-forged' } }));
    expect(Item).toBeUndefined();
  });
});
