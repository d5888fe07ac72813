// createIngest through the ingest's real Middy chain (createIngestHandler: verification, the JSON body parser,
// webhookErrors), with the real
// EventPublisher and Powertools Idempotency; DynamoDB and EventBridge mocked with aws-sdk-client-mock.
import { createHash } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { createIngestHandler, EventPublisher, type PublisherLike } from '../../../../lib/aws/index.js';
import { createIngest } from '../../../../lib/aws/ingest/index.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { invoke, lambdaContext, payload, recordingLogger, SECRET, v1Event, v2Event } from './events.js';

const { dynamo, documents, events } = useIngestMocks();
// The queue writes through a DocumentClient on the dedupe client.

/** The dedupe key Powertools writes for a delivery id: fixed prefix, base64 MD5 of the JSON id. */
const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;

function build(options: { publisher?: PublisherLike; lockSeconds?: number } = {}) {
  const logger = recordingLogger();
  const publisher =
    options.publisher ??
    new EventPublisher({
      eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
      eventBusName: 'bus',
      budgetMs: 200,
      baseDelayMs: 1,
      maxDelayMs: 2,
    });
  const handler = createIngestHandler({
    env: {
      FORGEBRIDGE_BUS_NAME: 'bus',
      FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
      ...(options.lockSeconds === undefined
        ? {}
        : { FORGEBRIDGE_DEDUPE_LOCK_SECONDS: `${options.lockSeconds}` }),
    },
    clients: { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) },
    publisher,
    secret: SECRET,
    logger,
  });
  return { handler, logger };
}

function existing(status: 'INPROGRESS' | 'COMPLETED', id = 'delivery-1') {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: marshall({
      pk: keyOf(id),
      status,
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      in_progress_expiration: Date.now() + 10_000,
      ...(status === 'COMPLETED' ? { data: { delivery: id } } : {}),
    }),
  });
}

describe('createIngest()', () => {
  it('publishes a verified delivery once, records it done, and answers 202 with the delivery id', async () => {
    const order: string[] = [];
    dynamo.on(PutItemCommand).callsFake(() => order.push('PutItem') && {});
    dynamo.on(UpdateItemCommand).callsFake(() => order.push('UpdateItem') && {});
    events.on(PutEventsCommand).callsFake(() => {
      order.push('PutEvents');
      return { FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] };
    });
    const { handler, logger } = build();
    const started = Date.now();
    const answer = await invoke(handler, v2Event(), lambdaContext(7_000));
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toEqual({ delivery: 'delivery-1' });
    const entries = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries ?? [];
    expect(entries).toHaveLength(1);
    expect(JSON.parse(entries[0]?.Detail ?? '{}')).toEqual({
      delivery: 'delivery-1',
      event: 'issues',
      action: 'opened',
      forge: 'generic',
      source: 'default',
      nativeEvent: 'issues',
      nativeAction: 'opened',
      payload,
    });
    const put = dynamo.commandCalls(PutItemCommand)[0]?.args[0].input;
    expect(put?.TableName).toBe('dedupe');
    expect(put?.Item?.pk).toEqual({ S: keyOf('delivery-1') });
    expect(put?.Item?.status).toEqual({ S: 'INPROGRESS' });
    // The lock expires with the Lambda's remaining time; the record lives 7 days.
    const lockUntil = Number(put?.Item?.in_progress_expiration?.N);
    expect(lockUntil).toBeGreaterThanOrEqual(started + 7_000);
    expect(lockUntil).toBeLessThanOrEqual(Date.now() + 7_000);
    expect(Number(put?.Item?.expiresAt?.N)).toBeCloseTo(started / 1000 + 7 * 24 * 3600, -1);
    const update = dynamo.commandCalls(UpdateItemCommand)[0]?.args[0].input;
    expect(update?.Key).toEqual({ pk: { S: keyOf('delivery-1') } });
    expect(update?.ExpressionAttributeValues?.[':status']).toEqual({ S: 'COMPLETED' });
    // The done record is written only after the bus accepted the entry.
    expect(order).toEqual(['PutItem', 'PutEvents', 'UpdateItem']);
    expect(logger.lines.map((line) => line.message)).toEqual(['delivery published']);
  });

  it('handles a REST API (1.0) event with a base64 body alike', async () => {
    const { handler } = build();
    const answer = await invoke(handler, v1Event({ base64: true, id: 'rest-1' }));
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toEqual({ delivery: 'rest-1' });
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(1);
  });

  it('locks for "lockSeconds" when the context gives no remaining time', async () => {
    const { handler } = build({ lockSeconds: 12 });
    const started = Date.now();
    await invoke(handler, v2Event(), {} as never);
    const lockUntil = Number(
      dynamo.commandCalls(PutItemCommand)[0]?.args[0].input.Item?.in_progress_expiration?.N,
    );
    expect(lockUntil).toBeGreaterThanOrEqual(started + 12_000);
    expect(lockUntil).toBeLessThanOrEqual(Date.now() + 12_000);
  });

  it('answers 200 {"duplicate":true} for a delivery already published, publishing nothing', async () => {
    dynamo.on(PutItemCommand).rejects(existing('COMPLETED'));
    const { handler, logger } = build();
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ duplicate: true });
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(0);
    expect(logger.lines.map((line) => line.message)).toEqual(['duplicate delivery']);
  });

  it('answers 409 in_progress while another invocation holds the delivery, publishing nothing', async () => {
    dynamo.on(PutItemCommand).rejects(existing('INPROGRESS'));
    const { handler } = build();
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'in_progress', message: 'delivery is being processed, retry later' },
    });
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(DeleteItemCommand)).toHaveLength(0);
  });

  it('answers 401 for a bad signature, touching neither the table nor the bus', async () => {
    const { handler } = build();
    expect((await invoke(handler, v2Event({ secret: 'wrong' }))).statusCode).toBe(401);
    expect(dynamo.calls()).toHaveLength(0);
    expect(events.calls()).toHaveLength(0);
  });

  it('answers 400 invalid_delivery_id for an absurdly long id, or one with spaces or control characters', async () => {
    const { handler } = build();
    for (const id of ['x'.repeat(257), 'has space', 'tab\there']) {
      const answer = await invoke(handler, v2Event({ id }));
      expect(answer.statusCode).toBe(400);
      expect(JSON.parse(answer.body).error).toEqual({
        code: 'invalid_delivery_id',
        message: '"delivery" id must be 1 to 256 visible ascii characters',
      });
    }
    expect((await invoke(handler, v2Event({ id: 'x'.repeat(256) }))).statusCode).toBe(202);
    expect(dynamo.commandCalls(PutItemCommand)).toHaveLength(1);
  });

  it('queues the delivery when the bus keeps failing: 202 queued, the record completed, no release', async () => {
    events
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] });
    const order: string[] = [];
    dynamo.on(PutItemCommand).callsFake(() => order.push('PutItem') && {});
    documents.on(PutCommand).callsFake(() => order.push('Put queue') && {});
    dynamo.on(UpdateItemCommand).callsFake(() => order.push('UpdateItem') && {});
    const { handler, logger } = build();
    const event = v2Event();
    const sent = event.body;
    const started = Date.now();
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toEqual({ delivery: 'delivery-1', queued: true });
    expect(events.commandCalls(PutEventsCommand).length).toBeGreaterThan(1);
    // Lock, queue record, then the dedupe record completed: a redelivery is a duplicate.
    expect(order).toEqual(['PutItem', 'Put queue', 'UpdateItem']);
    const queued = documents.commandCalls(PutCommand)[0]?.args[0].input;
    expect(queued?.TableName).toBe('dedupe');
    expect(queued?.ConditionExpression).toBe('attribute_not_exists(#pk)');
    expect(queued?.Item).toMatchObject({
      pk: 'queue#delivery-1',
      queue: 'due',
      delivery: 'delivery-1',
      event: 'issues',
      attempts: 0,
      lastError: 'publish_failed',
    });
    expect(Buffer.from(queued?.Item?.body as Uint8Array).toString('utf8')).toBe(sent);
    expect(queued?.Item?.dueAt).toBeGreaterThanOrEqual(started);
    expect(queued?.Item?.expiresAt).toBeCloseTo(started / 1000 + 7 * 24 * 3600, -1);
    const update = dynamo.commandCalls(UpdateItemCommand)[0]?.args[0].input;
    expect(update?.ExpressionAttributeValues?.[':status']).toEqual({ S: 'COMPLETED' });
    expect(JSON.stringify(update?.ExpressionAttributeValues)).toContain('queued');
    expect(dynamo.commandCalls(DeleteItemCommand)).toHaveLength(0);
    expect(logger.lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'publish failed, delivery queued'],
      ['info', 'delivery queued'],
    ]);
    expect(logger.lines[0]?.fields).toEqual([
      { delivery: 'delivery-1', event: 'issues', errorCode: 'publish_failed' },
    ]);
  });

  it('answers 202 queued when the queue record is already there (a write retried after its lost reply)', async () => {
    events.on(PutEventsCommand).rejects(Object.assign(new Error('down'), { name: 'InternalException' }));
    documents
      .on(PutCommand)
      .rejects(
        new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
      );
    const { handler } = build();
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toEqual({ delivery: 'delivery-1', queued: true });
  });

  it('answers 503 and releases the lock only when the queue write fails too, so the redelivery is new', async () => {
    events
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] });
    documents.on(PutCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    const { handler, logger } = build();
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'service_unavailable', message: 'delivery not accepted, retry later' },
    });
    expect(dynamo.commandCalls(DeleteItemCommand)[0]?.args[0].input.Key).toEqual({
      pk: { S: keyOf('delivery-1') },
    });
    expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(0);
    expect(logger.lines.slice(0, 2)).toMatchObject([
      {
        level: 'error',
        message: 'publish failed',
        fields: [{ delivery: 'delivery-1', event: 'issues', errorCode: 'publish_failed' }],
      },
      {
        level: 'error',
        message: 'queue write failed',
        fields: [{ delivery: 'delivery-1', event: 'issues', errorCode: 'InternalServerError' }],
      },
    ]);
  });

  it('still answers 503 when releasing the lock fails too, and logs all three', async () => {
    events
      .on(PutEventsCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    documents.on(PutCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    dynamo.on(DeleteItemCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    const { handler, logger } = build();
    expect((await invoke(handler, v2Event())).statusCode).toBe(503);
    expect(logger.lines.map((line) => line.message)).toEqual([
      'publish failed',
      'queue write failed',
      'dedupe release failed',
      'delivery failed',
    ]);
  });

  it('answers 503 when the dedupe table is unreachable, publishing nothing', async () => {
    dynamo.on(PutItemCommand).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
    const { handler, logger } = build();
    expect((await invoke(handler, v2Event())).statusCode).toBe(503);
    expect(events.calls()).toHaveLength(0);
    expect(logger.lines[0]).toMatchObject({ message: 'dedupe begin failed' });
  });

  it('answers 202 when the delivery is on the bus but recording it done fails', async () => {
    dynamo.on(UpdateItemCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
    const { handler, logger } = build();
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(202);
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(DeleteItemCommand)).toHaveLength(0);
    expect(logger.lines.map((line) => line.message)).toEqual([
      'dedupe complete failed',
      'delivery published',
    ]);
  });

  it('never logs the secret, the signature or the payload', async () => {
    const { handler, logger } = build();
    const event = v2Event();
    await invoke(handler, event);
    await invoke(handler, v2Event({ secret: 'wrong' }));
    const logged = JSON.stringify(logger.lines);
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain(event.headers['x-hub-signature-256']);
    expect(logged).not.toContain('octo/hello');
  });

  it('refuses a publisher without a publish function', () => {
    expect(() =>
      createIngest({ publisher: {} as never, dedupe: { client: new DynamoDBClient({}), tableName: 't' } }),
    ).toThrow(new TypeError('"publisher" must have a "publish" function'));
  });
});
