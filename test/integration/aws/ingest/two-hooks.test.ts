// Two GitHub Apps (or an App and a repository hook) pointed at one URL: GitHub delivers one event to both under one
// X-GitHub-Delivery GUID, each with its own payload (its installation) and its own X-GitHub-Hook-ID. Through the
// ingest chain (delivery log, forgeWebhookSources, the JSON body parser, createIngest, webhookErrors) against
// DynamoDB Local, s3rver and our PutEvents endpoint on 127.0.0.1: both are published, each with its hook in
// `detail`; a redelivery of either is a duplicate; the log holds both hooks' records under the one GUID, and a
// claim-checked one of each keeps its own S3 object.
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../../infra/tables.js';
import { DeliveryLog, EventPublisher, webhookErrors } from '../../../../lib/aws/index.js';
import { createIngest, deliveryLog, forgeWebhookSources } from '../../../../lib/aws/ingest/index.js';
import { sign } from '../../../../lib/webhooks/index.js';
import { createTable } from '../../../../local-stack/dynamodb.js';
import { type LocalS3, startS3 } from '../../../../local-stack/s3.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../../helpers/fault-eventbridge.js';
import { registerSecret } from '../../../helpers/secrets.js';

const ddb = useDynamoDbLocal();
const SECRET = `two-hooks-${randomUUID()}`;
registerSecret(SECRET);
const context = { getRemainingTimeInMillis: () => 20_000 } as Context;
const BUCKET = 'two-hooks-claim-checks';

let bus: FaultEventBridge;
let s3: LocalS3;
let eventBridge: EventBridgeClient;
let handler: (event: unknown) => Promise<{ statusCode: number; body: string }>;
let log: DeliveryLog;

beforeAll(async () => {
  bus = await startFaultEventBridge();
  s3 = await startS3({ buckets: [BUCKET] });
  eventBridge = new EventBridgeClient({
    endpoint: bus.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const { dedupe } = await ddb.tables();
  const deliveries = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, deliveries);
  log = new DeliveryLog({ client: ddb.client(), tableName: deliveries });
  const publisher = new EventPublisher({
    eventBridge,
    eventBusName: 'forge',
    budgetMs: 2_000,
    baseDelayMs: 20,
    s3: new S3Client(s3.clientConfig),
    bucket: BUCKET,
    // Small enough that the large deliveries below go through the claim check.
    maxEntryBytes: 4_096,
  });
  const chain = middy(createIngest({ publisher, dedupe: { client: ddb.client(), tableName: dedupe } }))
    .use(deliveryLog({ log }))
    .use(forgeWebhookSources({ sources: [{ name: 'github', forge: 'github', secret: [SECRET] }] }))
    .use(httpJsonBodyParser())
    .use(webhookErrors());
  handler = (event) => chain(event as never, context) as Promise<{ statusCode: number; body: string }>;
}, 60_000);

afterAll(async () => {
  eventBridge?.destroy();
  await bus?.close();
  await s3?.stop();
});

/** One hook's delivery of an `issues.opened` event, as GitHub posts it. */
function delivery(guid: string, hook: string, installation: number, padding = 0) {
  const body = JSON.stringify({
    action: 'opened',
    issue: { number: 7, title: 'Two apps, one event' },
    repository: { id: 9, name: 'web', full_name: 'acme/web', owner: { login: 'acme' } },
    installation: { id: installation },
    ...(padding > 0 ? { padding: 'x'.repeat(padding) } : {}),
  });
  return {
    version: '2.0',
    rawPath: '/webhooks/github',
    pathParameters: { source: 'github' },
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': guid,
      'x-github-hook-id': hook,
      'x-hub-signature-256': sign(SECRET, body),
    },
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST', path: '/webhooks/github' } },
  };
}

describe('two hooks, one GitHub event', () => {
  it("publishes both hooks' deliveries, each with its hook in detail; a redelivery of either is a duplicate", async () => {
    const guid = randomUUID();
    const a = await handler(delivery(guid, '1101', 501));
    expect(a.statusCode).toBe(202);
    const detailA = JSON.parse(bus.details.get(guid) as string);
    expect(detailA).toMatchObject({ delivery: guid, source: 'github', hook: '1101' });
    expect(detailA.payload.installation).toEqual({ id: 501 });

    const b = await handler(delivery(guid, '2202', 502));
    expect(b.statusCode).toBe(202);
    expect(JSON.parse(b.body)).not.toHaveProperty('duplicate');
    expect(bus.received.get(guid)).toBe(2);
    const detailB = JSON.parse(bus.details.get(guid) as string);
    expect(detailB).toMatchObject({ delivery: guid, source: 'github', hook: '2202' });
    expect(detailB.payload.installation).toEqual({ id: 502 });

    // GitHub's redelivery keeps both the GUID and the hook.
    for (const [hook, installation] of [
      ['1101', 501],
      ['2202', 502],
    ] as const) {
      const again = await handler(delivery(guid, hook, installation));
      expect(again.statusCode).toBe(200);
      expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });
    }
    expect(bus.received.get(guid)).toBe(2);

    // The log keeps every record of the GUID together, each naming its hook.
    const details = await log.get(guid, { source: 'github' });
    expect(details?.hooks?.sort()).toEqual(['1101', '2202']);
    const byHook = (hook: string) =>
      details?.records.filter((record) => record.hook === hook).map((record) => record.outcome);
    expect(byHook('1101')?.sort()).toEqual(['duplicate', 'published']);
    expect(byHook('2202')?.sort()).toEqual(['duplicate', 'published']);
    // The list shows the hook too (the list index does not hold it: read beside the page).
    const listed = await log.list({ since: Date.now() - 60_000, limit: 20 });
    const ofGuid = listed.records.filter((record) => record.deliveryId === guid);
    expect(ofGuid.map((record) => record.hook).sort()).toEqual(['1101', '1101', '2202', '2202']);
  });

  it('keeps a claim-checked delivery of each hook in its own S3 object', async () => {
    const guid = randomUUID();
    expect((await handler(delivery(guid, '1101', 501, 8_000))).statusCode).toBe(202);
    const refA = JSON.parse(bus.details.get(guid) as string).payloadRef;
    expect((await handler(delivery(guid, '2202', 502, 8_000))).statusCode).toBe(202);
    const refB = JSON.parse(bus.details.get(guid) as string).payloadRef;
    expect(refA.key).not.toBe(refB.key);
    const objects = new S3Client(s3.clientConfig);
    for (const [ref, installation] of [
      [refA, 501],
      [refB, 502],
    ] as const) {
      const object = await objects.send(new GetObjectCommand({ Bucket: BUCKET, Key: ref.key }));
      const stored = JSON.parse(
        await (object.Body as { transformToString(): Promise<string> }).transformToString(),
      );
      expect(stored.installation).toEqual({ id: installation });
    }
    objects.destroy();
  });

  it('refuses a hook header that is no hook id with a 400, publishing nothing', async () => {
    const guid = randomUUID();
    const answer = await handler(delivery(guid, '11 01', 501));
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: 'invalid_header' });
    expect(bus.received.get(guid)).toBeUndefined();
  });
});
