// The ingest chain (delivery log, forgeWebhookSources, the JSON body parser, createIngest, webhookErrors) with a
// `standard`, a `svix` and a signed-only `gitlab` source, against DynamoDB Local and our PutEvents endpoint on
// 127.0.0.1: deliveries signed by the real standardwebhooks and svix packages are published once; stale, future,
// tampered and wrong-secret ones are refused 401 with their reason and recorded with the diagnosis.
import { randomBytes, randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Context } from 'aws-lambda';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../../infra/tables.js';
import { DeliveryLog, EventPublisher, webhookErrors } from '../../../../lib/aws/index.js';
import { createIngest, deliveryLog, forgeWebhookSources } from '../../../../lib/aws/ingest/index.js';
import { createTable } from '../../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../../helpers/fault-eventbridge.js';
import { registerSecret } from '../../../helpers/secrets.js';

const ddb = useDynamoDbLocal();
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER = `whsec_${randomBytes(32).toString('base64')}`;
const GITLAB_TOKEN = `gitlab-token-${randomUUID()}`;
registerSecret(SECRET, OTHER, GITLAB_TOKEN);
const context = { getRemainingTimeInMillis: () => 20_000 } as Context;

let bus: FaultEventBridge;
let eventBridge: EventBridgeClient;
let handler: (event: unknown) => Promise<{ statusCode: number; body: string }>;
let log: DeliveryLog;

beforeAll(async () => {
  bus = await startFaultEventBridge();
  eventBridge = new EventBridgeClient({
    endpoint: bus.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const { dedupe } = await ddb.tables();
  const deliveries = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, deliveries);
  log = new DeliveryLog({ client: ddb.client(), tableName: deliveries, storePayload: true });
  const publisher = new EventPublisher({
    eventBridge,
    eventBusName: 'forge',
    budgetMs: 2_000,
    baseDelayMs: 20,
  });
  const chain = middy(createIngest({ publisher, dedupe: { client: ddb.client(), tableName: dedupe } }))
    .use(deliveryLog({ log }))
    .use(
      forgeWebhookSources({
        sources: [
          { name: 'standard', forge: 'standard', secret: async () => [SECRET] },
          { name: 'svix', forge: 'svix', secret: [OTHER, SECRET], toleranceSeconds: 60 },
          { name: 'gitlab', forge: 'gitlab', secret: [GITLAB_TOKEN, SECRET], verifyWith: 'signature' },
        ],
      }),
    )
    .use(httpJsonBodyParser())
    .use(webhookErrors());
  handler = (event) => chain(event as never, context) as Promise<{ statusCode: number; body: string }>;
});

afterAll(async () => {
  eventBridge?.destroy();
  await bus?.close();
});

const now = () => Math.floor(Date.now() / 1000);

function event(source: string, headers: Record<string, string>, body: string) {
  return {
    version: '2.0',
    rawPath: `/webhooks/${source}`,
    pathParameters: { source },
    headers,
    body: Buffer.from(body).toString('base64'),
    isBase64Encoded: true,
    requestContext: { http: { method: 'POST', path: `/webhooks/${source}` } },
  };
}

function standardHeaders(id: string, body: string, options: { offset?: number; secret?: string } = {}) {
  const timestamp = now() + (options.offset ?? 0);
  const signature = new StandardWebhook(options.secret ?? SECRET).sign(id, new Date(timestamp * 1000), body);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  };
}

const body = (type: string) => JSON.stringify({ type, timestamp: new Date().toISOString(), data: { n: 1 } });
const errorOf = (answer: { body: string }) =>
  (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;

describe('a standard source on the ingest', () => {
  it('publishes a delivery signed by the standardwebhooks package once, as event contact / action created', async () => {
    const id = `msg_${randomUUID()}`;
    const payload = body('contact.created');
    const answer = await handler(event('standard', standardHeaders(id, payload), payload));
    expect(answer.statusCode).toBeGreaterThanOrEqual(200);
    expect(answer.statusCode).toBeLessThan(300);
    expect(bus.received.get(id)).toBe(1);
    const again = await handler(event('standard', standardHeaders(id, payload), payload));
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });
    expect(bus.received.get(id)).toBe(1);
    const record = await log.get(id, { source: 'standard' });
    expect(record?.records.at(-1)).toMatchObject({
      verdict: 'verified',
      event: 'contact',
      action: 'created',
      forge: 'standard',
    });
  });

  it.each([
    ['stale', { offset: -900 }, 'stale_timestamp', /is 90\d s \(15 min \d+ s\) old/],
    [
      'future',
      { offset: 900 },
      'future_timestamp',
      /is (899 s \(14 min 59 s\)|90\d s \(15 min \d+ s\)) in the future/,
    ],
    ['wrong-secret', { secret: OTHER }, 'invalid_signature', /does not match/],
  ] as const)(
    'refuses a %s delivery 401 with its reason, and logs the diagnosis',
    async (_label, options, code, message) => {
      const id = `msg_${randomUUID()}`;
      const payload = body('contact.deleted');
      const answer = await handler(event('standard', standardHeaders(id, payload, options), payload));
      expect(answer.statusCode).toBe(401);
      expect(errorOf(answer)).toMatchObject({ code });
      expect(errorOf(answer).message).toMatch(message);
      expect(bus.received.get(id)).toBeUndefined();
      const record = await log.get(id, { source: 'standard' });
      const request = record?.records.at(-1);
      expect(request?.verdict).toBe(code === 'invalid_signature' ? 'bad_signature' : code);
      expect(request?.diagnosis?.[0]?.code).toBe(code === 'invalid_signature' ? 'wrong_secret' : code);
    },
  );

  it('refuses a tampered body 401 and publishes nothing', async () => {
    const id = `msg_${randomUUID()}`;
    const payload = body('contact.updated');
    const answer = await handler(
      event('standard', standardHeaders(id, payload), payload.replace('"n":1', '"n":2')),
    );
    expect(answer.statusCode).toBe(401);
    expect(errorOf(answer).code).toBe('invalid_signature');
    expect(bus.received.get(id)).toBeUndefined();
  });
});

describe('a svix source with a 60 s tolerance and a gitlab source that requires the signature', () => {
  it('publishes a delivery signed by the svix package, and refuses one 2 minutes old', async () => {
    const sign = (id: string, payload: string, offset: number) => {
      const timestamp = now() + offset;
      return {
        'content-type': 'application/json',
        'svix-id': id,
        'svix-timestamp': String(timestamp),
        'svix-signature': new SvixWebhook(SECRET).sign(id, new Date(timestamp * 1000), payload),
      };
    };
    const id = `msg_${randomUUID()}`;
    const payload = body('invoice.payment.failed');
    const answer = await handler(event('svix', sign(id, payload, 0), payload));
    expect(answer.statusCode).toBeLessThan(300);
    expect(bus.received.get(id)).toBe(1);
    const late = `msg_${randomUUID()}`;
    const refused = await handler(event('svix', sign(late, payload, -120), payload));
    expect(refused.statusCode).toBe(401);
    expect(errorOf(refused).message).toMatch(/beyond the tolerance of 60 s/);
  });

  it('takes a GitLab delivery with a signing token and refuses one carrying only the shared token', async () => {
    const id = randomUUID();
    const payload = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main' });
    const signed = { ...standardHeaders(id, payload), 'x-gitlab-event': 'Push Hook', 'idempotency-key': id };
    const answer = await handler(event('gitlab', signed, payload));
    expect(answer.statusCode).toBeLessThan(300);
    expect(bus.received.get(id)).toBe(1);
    const tokenOnly = {
      'content-type': 'application/json',
      'x-gitlab-event': 'Push Hook',
      'idempotency-key': randomUUID(),
      'x-gitlab-token': GITLAB_TOKEN,
    };
    const refused = await handler(event('gitlab', tokenOnly, payload));
    expect(refused.statusCode).toBe(400);
    expect(errorOf(refused)).toEqual({
      code: 'missing_header',
      message: 'missing "webhook-signature" header',
    });
  });
});
