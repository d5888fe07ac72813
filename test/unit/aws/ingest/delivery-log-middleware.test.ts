// deliveryLog() in the ingest's real Middy chain as createIngestHandler assembles it (deliveryLog,
// forgeWebhookSources, the JSON body parser, webhookErrors) with the real createIngest, EventPublisher, Powertools Idempotency and DeliveryLog; every AWS
// client mocked with aws-sdk-client-mock. Each answered request must leave exactly one PutItem on the log table.
import { ConditionalCheckFailedException, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { createIngestHandler, EventPublisher } from '../../../../lib/aws/index.js';
import { deliveryLog } from '../../../../lib/aws/ingest/index.js';
import { sign } from '../../../../lib/webhooks/index.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { type Answer, invoke, payload, recordingLogger, SECRET, v2Event } from './events.js';

const { dynamo, documents, events } = useIngestMocks();

const LOG_TABLE = 'deliveries';
const MAX_ENTRY_BYTES = 4_096;

// The default source is mid-rotation: its forge's current secret first, the new one second.
const ROTATED = 'unit-test-secret-rotated';
const SOURCE_SECRETS: Record<string, string | string[]> = {
  default: [SECRET, ROTATED],
  gitlab: 'gitlab-secret',
};

function build(options: { storePayload?: boolean; maxBodyBytes?: number; log?: boolean } = {}) {
  const logger = recordingLogger();
  const handler = createIngestHandler({
    env: {
      FORGEBRIDGE_BUS_NAME: 'bus',
      FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
      FORGEBRIDGE_BUCKET: 'claims',
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: 'default' }, { name: 'gitlab', forge: 'gitlab' }]),
      ...(options.log === false ? {} : { FORGEBRIDGE_DELIVERIES_TABLE: LOG_TABLE }),
      ...(options.storePayload === true ? { FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'true' } : {}),
      ...(options.maxBodyBytes === undefined
        ? {}
        : { FORGEBRIDGE_MAX_BODY_BYTES: `${options.maxBodyBytes}` }),
    },
    clients: { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) },
    publisher: new EventPublisher({
      eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
      eventBusName: 'bus',
      maxEntryBytes: MAX_ENTRY_BYTES,
      s3: new S3Client({ region: 'us-east-1' }),
      bucket: 'claims',
      budgetMs: 100,
      baseDelayMs: 1,
      maxDelayMs: 2,
    }),
    sourceSecret: ({ name }) => SOURCE_SECRETS[name] ?? '',
    logger,
  });
  return { handler, logger };
}

/** The items the log was asked to put. */
function logged(): Record<string, unknown>[] {
  return documents
    .commandCalls(PutCommand)
    .map((call) => call.args[0].input)
    .filter((input) => input.TableName === LOG_TABLE)
    .map((input) => input.Item as Record<string, unknown>);
}

function only(): Record<string, unknown> {
  const items = logged();
  expect(items).toHaveLength(1);
  return items[0] as Record<string, unknown>;
}

function existing(status: 'INPROGRESS' | 'COMPLETED') {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: marshall({
      pk: 'delivery#x',
      status,
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      in_progress_expiration: Date.now() + 10_000,
      ...(status === 'COMPLETED' ? { data: { delivery: 'delivery-1' } } : {}),
    }),
  });
}

function errorCode(answer: Answer): string {
  return (JSON.parse(answer.body) as { error: { code: string } }).error.code;
}

describe('deliveryLog(): one record per answered request', () => {
  it('202 published: the names, size, verdict, status, event id and masked headers, no body by default', async () => {
    const before = Date.now();
    const event = v2Event({ id: 'log-published' });
    const sent = event.body as string;
    const answer = await invoke(build().handler, event);
    expect(answer.statusCode).toBe(202);
    const item = only();
    expect(item).toMatchObject({
      deliveryId: 'log-published',
      event: 'issues',
      action: 'opened',
      forge: 'generic',
      source: 'default',
      bodyBytes: Buffer.byteLength(sent),
      verdict: 'verified',
      httpStatus: 202,
      outcome: 'published',
      eventId: 'event-1',
      payloadOmitted: 'disabled',
    });
    expect(item.receivedAt).toBeGreaterThanOrEqual(before);
    expect(item.body).toBeUndefined();
    const signature = event.headers['x-hub-signature-256'] as string;
    expect((item.headers as Record<string, string>)['x-hub-signature-256']).toBe('sha256=[masked]');
    expect(JSON.stringify(item)).not.toContain(signature.slice('sha256='.length));
    expect(JSON.stringify(item)).not.toContain(SECRET);
  });

  it('records which secret of the list verified the delivery, by position, never the secret', async () => {
    await invoke(build().handler, v2Event({ id: 'log-old-secret' }));
    await invoke(build().handler, v2Event({ id: 'log-new-secret', secret: ROTATED }));
    await invoke(build().handler, v2Event({ id: 'log-no-secret', secret: 'neither' }));
    const [old, fresh, refused] = logged();
    expect(old).toMatchObject({ deliveryId: 'log-old-secret', secretIndex: 0 });
    expect(fresh).toMatchObject({ deliveryId: 'log-new-secret', secretIndex: 1 });
    expect(refused).toMatchObject({ deliveryId: 'log-no-secret', verdict: 'bad_signature' });
    expect(refused).not.toHaveProperty('secretIndex');
    expect(JSON.stringify(logged())).not.toContain(ROTATED);
  });

  it('stores the raw body when the log keeps payloads', async () => {
    const event = v2Event({ id: 'log-payload' });
    const sent = event.body as string;
    await invoke(build({ storePayload: true }).handler, event);
    expect(Buffer.from(only().body as Uint8Array).toString('utf8')).toBe(sent);
  });

  it('202 published over the entry limit: the claim-check reference', async () => {
    const body = JSON.stringify({ ...payload, issue: { number: 2, body: 'x'.repeat(MAX_ENTRY_BYTES) } });
    const answer = await invoke(build().handler, v2Event({ id: 'log-large', body }));
    expect(answer.statusCode).toBe(202);
    expect(only()).toMatchObject({
      outcome: 'published',
      bodyBytes: Buffer.byteLength(body),
      payloadRef: { bucket: 'claims', bytes: Buffer.byteLength(body) },
    });
  });

  it('202 queued when the bus does not take it', async () => {
    events.on(PutEventsCommand).rejects(Object.assign(new Error('down'), { name: 'InternalException' }));
    const answer = await invoke(build().handler, v2Event({ id: 'log-queued' }));
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ queued: true });
    expect(only()).toMatchObject({ outcome: 'queued', httpStatus: 202, verdict: 'verified' });
    expect(only().eventId).toBeUndefined();
  });

  it('200 duplicate', async () => {
    dynamo.on(PutItemCommand).rejects(existing('COMPLETED'));
    const answer = await invoke(build().handler, v2Event());
    expect(answer.statusCode).toBe(200);
    expect(only()).toMatchObject({ deliveryId: 'delivery-1', outcome: 'duplicate', httpStatus: 200 });
  });

  it('409 in_progress', async () => {
    dynamo.on(PutItemCommand).rejects(existing('INPROGRESS'));
    const answer = await invoke(build().handler, v2Event());
    expect(answer.statusCode).toBe(409);
    expect(only()).toMatchObject({
      deliveryId: 'delivery-1',
      verdict: 'verified',
      outcome: 'in_progress',
      httpStatus: 409,
      errorCode: 'in_progress',
    });
  });

  it('503 failed when neither the bus nor the queue takes it', async () => {
    events.on(PutEventsCommand).rejects(Object.assign(new Error('down'), { name: 'InternalException' }));
    documents.on(PutCommand, { TableName: 'dedupe' }).rejects(new Error('queue down'));
    const answer = await invoke(build().handler, v2Event({ id: 'log-failed' }));
    expect(answer.statusCode).toBe(503);
    expect(only()).toMatchObject({
      deliveryId: 'log-failed',
      verdict: 'verified',
      outcome: 'failed',
      httpStatus: 503,
      errorCode: 'service_unavailable',
      reason: 'delivery not accepted, retry later',
    });
  });

  it('401 bad_signature with the diagnosis, the claimed names, and no secret or signature value', async () => {
    const event = v2Event({ id: 'log-bad', secret: 'not-the-secret' });
    const signature = event.headers['x-hub-signature-256'] as string;
    const answer = await invoke(build().handler, event);
    expect(answer.statusCode).toBe(401);
    const item = only();
    expect(item).toMatchObject({
      deliveryId: 'log-bad',
      event: 'issues',
      action: 'opened',
      forge: 'generic',
      source: 'default',
      verdict: 'bad_signature',
      outcome: 'rejected',
      httpStatus: 401,
      errorCode: 'invalid_signature',
    });
    const diagnosis = item.diagnosis as { code: string; message: string }[];
    expect(diagnosis.map((reason) => reason.code)).toContain('wrong_secret');
    expect(item.reason).toBe(diagnosis[0]?.message);
    const text = JSON.stringify(item);
    expect(text).not.toContain(signature.slice('sha256='.length));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('not-the-secret');
  });

  it('401 bad_signature of a pretty-printed body says it was re-serialized', async () => {
    const compact = JSON.stringify(payload);
    const event = v2Event({
      id: 'log-reserialized',
      body: JSON.stringify(payload, null, 2),
      signature: sign(SECRET, compact),
    });
    expect((await invoke(build().handler, event)).statusCode).toBe(401);
    const diagnosis = only().diagnosis as { code: string }[];
    expect(diagnosis[0]?.code).toBe('reserialized');
  });

  it('400 missing_header (no signature) with its diagnosis', async () => {
    const event = v2Event({ id: 'log-unsigned' });
    delete event.headers['x-hub-signature-256'];
    const answer = await invoke(build().handler, event);
    expect(answer.statusCode).toBe(400);
    const item = only();
    expect(item).toMatchObject({
      deliveryId: 'log-unsigned',
      verdict: 'missing_header',
      outcome: 'rejected',
    });
    expect((item.diagnosis as { code: string }[])[0]?.code).toBe('missing_header');
  });

  it('400 missing_header (no event header) without a signature diagnosis', async () => {
    const event = v2Event({ id: 'log-no-event' });
    delete event.headers['x-forge-event'];
    expect((await invoke(build().handler, event)).statusCode).toBe(400);
    const item = only();
    expect(item).toMatchObject({ verdict: 'missing_header', httpStatus: 400 });
    expect(item.diagnosis).toBeUndefined();
    expect(item.event).toBeUndefined();
  });

  it('400 invalid_delivery_id: refused by the ingest after the signature verified', async () => {
    const answer = await invoke(build().handler, v2Event({ id: 'bad id with spaces' }));
    expect(answer.statusCode).toBe(400);
    expect(errorCode(answer)).toBe('invalid_delivery_id');
    const item = only();
    expect(item).toMatchObject({
      verdict: 'invalid_delivery_id',
      outcome: 'rejected',
      deliveryIdInvalid: true,
    });
    expect(item.deliveryId).toBeUndefined();
  });

  it('404 unknown_source, and 404 not_found for another method', async () => {
    const event = v2Event({ id: 'log-unknown' });
    const unknown = { ...event, rawPath: '/webhooks/nope', pathParameters: { source: 'nope' } };
    expect((await invoke(build().handler, unknown)).statusCode).toBe(404);
    expect(only()).toMatchObject({ verdict: 'unknown_source', source: 'nope', httpStatus: 404 });
    documents.resetHistory();
    expect((await invoke(build().handler, v2Event({ method: 'GET' }))).statusCode).toBe(404);
    expect(only()).toMatchObject({ verdict: 'not_checked', errorCode: 'not_found', outcome: 'rejected' });
  });

  it('415 unsupported_media_type and 413 payload_too_large', async () => {
    const form = v2Event({ headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect((await invoke(build().handler, form)).statusCode).toBe(415);
    expect(only()).toMatchObject({ verdict: 'unsupported_media_type', httpStatus: 415 });
    documents.resetHistory();
    const big = v2Event({ id: 'log-big' });
    expect((await invoke(build({ maxBodyBytes: 10 }).handler, big)).statusCode).toBe(413);
    expect(only()).toMatchObject({
      verdict: 'payload_too_large',
      httpStatus: 413,
      bodyBytes: Buffer.byteLength(big.body as string),
    });
  });

  it('a source with another forge: its preset names the claimed delivery of a refused token', async () => {
    const body = JSON.stringify({ object_kind: 'issue', object_attributes: { action: 'open' } });
    const event = {
      ...v2Event({ body }),
      rawPath: '/webhooks/gitlab',
      pathParameters: { source: 'gitlab' },
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': 'Issue Hook',
        'x-gitlab-event-uuid': 'log-gitlab',
        'x-gitlab-token': 'wrong-token-value',
      },
    };
    expect((await invoke(build().handler, event)).statusCode).toBe(401);
    const item = only();
    expect(item).toMatchObject({
      source: 'gitlab',
      forge: 'gitlab',
      deliveryId: 'log-gitlab',
      event: 'issues',
      action: 'opened',
      nativeEvent: 'Issue Hook',
      verdict: 'bad_signature',
    });
    expect((item.diagnosis as { code: string }[])[0]?.code).toBe('wrong_token');
    expect(JSON.stringify(item)).not.toContain('wrong-token-value');
  });
});

describe('deliveryLog(): a log failure never changes the answer', () => {
  it.each([
    ['published', () => v2Event({ id: 'log-down' }), 202],
    ['refused', () => v2Event({ id: 'log-down', secret: 'other' }), 401],
  ])('%s: the same answer when the log write fails, and one warning', async (_, event, status) => {
    documents.on(PutCommand, { TableName: LOG_TABLE }).rejects(new Error('log table down'));
    const { handler, logger } = build();
    const answer = await invoke(handler, event());
    expect(answer.statusCode).toBe(status);
    expect(logged()).toHaveLength(1);
    expect(logger.lines.filter((line) => line.message === 'delivery log write failed')).toHaveLength(1);
  });

  it('answers the same as without the log', async () => {
    const plain = build({ log: false }).handler;
    for (const event of [v2Event({ id: 'same-1' }), v2Event({ id: 'same-2', secret: 'x' })]) {
      const withLog = await invoke(build().handler, structuredClone(event));
      const without = await invoke(plain, structuredClone(event));
      expect(withLog).toEqual(without);
    }
  });

  it('is refused at construction without a log or metrics, or with a log that cannot record', () => {
    expect(() => deliveryLog({} as never)).toThrow('"log" or "metrics" is required');
    expect(() => deliveryLog({ log: {} } as never)).toThrow('"log" must have a "record" function');
  });
});
