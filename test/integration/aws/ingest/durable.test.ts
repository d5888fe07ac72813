// The durable ingest (item 10 of issue 8) against DynamoDB Local and a bus of ours on 127.0.0.1 that answers
// PutEvents 500 while it is "down" and records every entry it accepts: a delivery the bus does not take is
// queued (202), a redelivery is a duplicate (200), and the retrier publishes each queued delivery exactly once
// when the bus is back, also with two runs at once; past the maximum age a delivery is dead-lettered.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricNames } from '../../../../lib/aws/core/index.js';
import { createRedriveHandler, EventPublisher, type LoggerLike } from '../../../../lib/aws/index.js';
import { DeliveryQueue, redriveQueue } from '../../../../lib/aws/queue/index.js';
import { localClientConfig } from '../../../../local-stack/dynamodb.js';
import { signedDelivery, testIngest } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { startFaultDynamoDb } from '../../../helpers/fault-dynamodb.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

const ddb = useDynamoDbLocal();

/** The bus: `down` answers every PutEvents 500; up, it accepts and records each entry's `detail.delivery`. */
const bus = { down: true, requests: 0, received: [] as string[] };
let server: Server;
let busUrl = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bus.requests += 1;
      if (bus.down) {
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify({ __type: 'InternalException', message: 'down' }));
        return;
      }
      const { Entries } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        Entries: { Detail: string }[];
      };
      const ids = Entries.map((entry) => {
        bus.received.push((JSON.parse(entry.Detail) as { delivery: string }).delivery);
        return { EventId: `event-${bus.received.length}` };
      });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ FailedEntryCount: 0, Entries: ids }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  busUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const context = { getRemainingTimeInMillis: () => 20_000 } as Context;

function publisherClient() {
  return new EventBridgeClient({
    endpoint: busUrl,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

function publisher() {
  return new EventPublisher({
    eventBridge: publisherClient(),
    eventBusName: 'forge',
    budgetMs: 300,
    baseDelayMs: 20,
  });
}

function ingest(tableName: string) {
  return testIngest({ tableName, dynamodb: ddb.client(), publisher: publisher() });
}

async function post(handler: ReturnType<typeof ingest>, id: string) {
  const { headers, body } = signedDelivery({ action: 'opened', issue: { id } }, { id });
  const event = { version: '2.0', headers, body, requestContext: { http: { method: 'POST' } } };
  const answer = (await handler(event as never, context)) as { statusCode: number; body: string };
  return { status: answer.statusCode, body: JSON.parse(answer.body) as unknown };
}

function redrive(tableName: string, options: { maxAgeSeconds?: number; logger?: LoggerLike } = {}) {
  return redriveQueue({
    queue: new DeliveryQueue({ client: ddb.client(), tableName }),
    publisher: publisher(),
    retryBaseSeconds: 0.05,
    ...options,
  });
}

async function queueRecord(tableName: string, id: string) {
  const { Item } = await ddb
    .documentClient()
    .send(new GetCommand({ TableName: tableName, Key: { pk: `queue#${id}` } }));
  return Item;
}

async function dueKeys(tableName: string) {
  const { Items } = await ddb.documentClient().send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'queue-due',
      KeyConditionExpression: '#q = :due',
      ExpressionAttributeNames: { '#q': 'queue' },
      ExpressionAttributeValues: { ':due': 'due' },
    }),
  );
  return (Items ?? []).map((item) => String(item.pk));
}

function count(ids: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const id of ids) counts[id] = (counts[id] ?? 0) + 1;
  return counts;
}

describe('the durable ingest with DynamoDB Local and a bus that is down, then back', () => {
  it('queues every delivery the bus refuses (202), answers redeliveries 200, and publishes each once when the bus is back', async () => {
    const { dedupe } = await ddb.tables();
    const handler = ingest(dedupe);
    const ids = Array.from({ length: 8 }, (_, index) => `d-queued-${index}`);
    bus.down = true;
    bus.received.length = 0;
    for (const id of ids) {
      expect(await post(handler, id)).toEqual({ status: 202, body: { delivery: id, queued: true } });
    }
    for (const id of ids) expect(await post(handler, id)).toEqual({ status: 200, body: { duplicate: true } });
    for (const id of ids) {
      expect(await queueRecord(dedupe, id)).toMatchObject({
        delivery: id,
        event: 'issues',
        attempts: 0,
        lastError: 'publish_failed',
      });
    }
    expect((await dueKeys(dedupe)).sort()).toEqual(ids.map((id) => `queue#${id}`).sort());

    // Still down: the first failure ends the run; nothing is lost, nothing published.
    const stillDown = await redrive(dedupe);
    expect(stillDown).toMatchObject({ due: 8, published: 0, dead: 0 });
    expect(stillDown.retried).toBeGreaterThanOrEqual(1);
    expect(stillDown.retried + stillDown.skipped).toBe(8);
    expect(bus.received).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));

    bus.down = false;
    const requestsBefore = bus.requests;
    const back = await redrive(dedupe);
    expect(back).toMatchObject({
      due: 8,
      published: 8,
      retried: 0,
      dead: 0,
      skipped: 0,
      alreadyPublished: 0,
    });
    expect(count(bus.received)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    expect(bus.requests - requestsBefore).toBe(8);
    for (const id of ids) expect(await queueRecord(dedupe, id)).toBeUndefined();
    expect(await dueKeys(dedupe)).toEqual([]);
    // A redelivery after the retrier published it is still a duplicate, and another run finds nothing.
    expect(await post(handler, ids[0] as string)).toEqual({ status: 200, body: { duplicate: true } });
    expect(await redrive(dedupe)).toMatchObject({ due: 0, published: 0 });
    expect(bus.received).toHaveLength(8);
  });

  it('publishes each queued delivery exactly once with two retrier runs at the same time', async () => {
    const { dedupe } = await ddb.tables();
    const handler = ingest(dedupe);
    const ids = Array.from({ length: 24 }, (_, index) => `d-race-${index}`);
    bus.down = true;
    bus.received.length = 0;
    await Promise.all(ids.map(async (id) => expect((await post(handler, id)).status).toBe(202)));
    bus.down = false;
    const [first, second] = await Promise.all([redrive(dedupe), redrive(dedupe)]);
    expect((first?.published ?? 0) + (second?.published ?? 0)).toBe(24);
    // Whatever one run listed and did not publish, the other had leased.
    expect((first?.skipped ?? 0) + (second?.skipped ?? 0)).toBe((first?.due ?? 0) + (second?.due ?? 0) - 24);
    expect(count(bus.received)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    expect(await dueKeys(dedupe)).toEqual([]);
  });

  it('dead-letters a delivery still refused after the maximum age, with the metric line, and keeps its record', async () => {
    const { dedupe } = await ddb.tables();
    bus.down = true;
    bus.received.length = 0;
    expect((await post(ingest(dedupe), 'd-dead')).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const { logger, lines } = recordingLogger();
    const run = await redrive(dedupe, { maxAgeSeconds: 1, logger });
    expect(run).toMatchObject({ due: 1, published: 0, retried: 0, dead: 1 });
    const dead = lines.find((line) => line.message === 'queued delivery dead-lettered');
    expect(dead).toMatchObject({
      level: 'error',
      fields: {
        delivery: 'd-dead',
        reason: 'publish_failed',
        DeadLetteredDeliveries: 1,
        _aws: {
          CloudWatchMetrics: [
            {
              Namespace: 'forgebridge',
              Dimensions: [[]],
              Metrics: [{ Name: 'DeadLetteredDeliveries', Unit: 'Count' }],
            },
          ],
        },
      },
    });
    expect(await queueRecord(dedupe, 'd-dead')).toMatchObject({
      dead: true,
      deadReason: 'publish_failed',
      attempts: 1,
      body: expect.any(Uint8Array),
    });
    expect(await dueKeys(dedupe)).toEqual([]);
    bus.down = false;
    expect(await redrive(dedupe, { maxAgeSeconds: 1 })).toMatchObject({ due: 0, published: 0 });
    expect(bus.received).toEqual([]);
  });

  it('publishes once a queue record whose write reply was lost (answered 503), whichever of the redelivery and the retrier comes first', async () => {
    const { dedupe } = await ddb.tables();
    const handler = ingest(dedupe);
    const queue = new DeliveryQueue({ client: ddb.client(), tableName: dedupe });
    // The write landed, its reply did not: the ingest answered 503 and released the dedupe lock.
    const landed = async (id: string) => {
      const rawBody = Buffer.from(JSON.stringify({ action: 'opened', issue: { id } }));
      const payload = JSON.parse(rawBody.toString('utf8')) as unknown;
      expect(await queue.enqueue({ id, name: 'issues', action: 'opened', payload, rawBody })).toBe('queued');
    };
    bus.down = false;
    bus.received.length = 0;

    await landed('d-amb-redelivery-first');
    expect(await post(handler, 'd-amb-redelivery-first')).toEqual({
      status: 202,
      body: { delivery: 'd-amb-redelivery-first' },
    });
    expect(await redrive(dedupe)).toMatchObject({ due: 1, published: 0, alreadyPublished: 1 });
    expect(await queueRecord(dedupe, 'd-amb-redelivery-first')).toBeUndefined();

    await landed('d-amb-retrier-first');
    expect(await redrive(dedupe)).toMatchObject({ due: 1, published: 1, alreadyPublished: 0 });
    expect(await post(handler, 'd-amb-retrier-first')).toEqual({ status: 200, body: { duplicate: true } });

    expect(count(bus.received)).toEqual({ 'd-amb-redelivery-first': 1, 'd-amb-retrier-first': 1 });
    expect(await dueKeys(dedupe)).toEqual([]);
  });
});

/** The JSON lines the process printed on stdout while `run` ran (Powertools Metrics prints its EMF lines there). */
async function stdoutLines(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    chunks.push(String(chunk));
    return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  try {
    await run();
  } finally {
    process.stdout.write = write;
  }
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the retrier handler on a table whose BatchGetItem it may not call', () => {
  it('prints QueueStatsFailed in place of the depth and age, warns with the code, and still publishes what is due', async () => {
    const { dedupe } = await ddb.tables();
    // DynamoDB Local checks no IAM: a proxy answers BatchGetItem as AWS answers a role without the action.
    const table = await startFaultDynamoDb({ target: ddb.endpoint, faults: { denied: ['BatchGetItem'] } });
    const dynamodb = new DynamoDBClient(localClientConfig(table.url));
    try {
      const queue = new DeliveryQueue({ client: ddb.client(), tableName: dedupe });
      for (const id of ['d-stats-due', 'd-stats-later']) {
        const rawBody = Buffer.from(JSON.stringify({ action: 'opened', issue: { id } }));
        const payload = JSON.parse(rawBody.toString('utf8')) as unknown;
        expect(await queue.enqueue({ id, name: 'issues', action: 'opened', payload, rawBody })).toBe(
          'queued',
        );
      }
      // Held by another run for 10 minutes: still waiting (stats reads it), not due now.
      expect(await queue.lease('queue#d-stats-later', 600_000)).toMatchObject({ delivery: 'd-stats-later' });
      bus.down = false;
      bus.received.length = 0;
      const { logger, lines } = recordingLogger();
      const handler = createRedriveHandler({
        env: {
          FORGEBRIDGE_BUS_NAME: 'forge',
          FORGEBRIDGE_DEDUPE_TABLE: dedupe,
          FORGEBRIDGE_METRIC_NAMESPACE: 'forgebridge/it',
          POWERTOOLS_SERVICE_NAME: 'forgebridge',
        },
        clients: { dynamodb, eventBridge: publisherClient() },
        logger,
      });

      const printed = await stdoutLines(() => handler({}, context));

      expect(bus.received).toEqual(['d-stats-due']);
      expect(table.stats.denied).toBe(1);
      const emf = printed.filter((line) => MetricNames.redrivePublished in line);
      expect(emf).toHaveLength(1);
      expect(emf[0]).toMatchObject({
        service: 'forgebridge',
        [MetricNames.queueStatsFailed]: 1,
        [MetricNames.redrivePublished]: 1,
        _aws: {
          CloudWatchMetrics: [
            {
              Namespace: 'forgebridge/it',
              Dimensions: [['service']],
              Metrics: expect.arrayContaining([{ Name: MetricNames.queueStatsFailed, Unit: 'Count' }]),
            },
          ],
        },
      });
      expect(emf[0]).not.toHaveProperty(MetricNames.queueDepth);
      expect(emf[0]).not.toHaveProperty(MetricNames.queueOldestAgeSeconds);
      expect(lines.filter((line) => line.level === 'warn')).toEqual([
        { level: 'warn', message: 'queue depth not read', fields: { errorCode: 'AccessDeniedException' } },
      ]);
    } finally {
      dynamodb.destroy();
      await table.close();
    }
  });
});
