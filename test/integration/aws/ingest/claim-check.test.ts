import { createHash, randomBytes } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsDefaults } from '../../../../lib/aws/core/index.js';
import { EventPublisher, resolveDelivery } from '../../../../lib/aws/index.js';
import { ClaimCheck } from '../../../../lib/aws/publish/claim-check.js';
import { buildEventEntry, eventEntrySize, routingFieldsOf } from '../../../../lib/aws/publish/event-entry.js';
import { DeliveryQueue, redriveQueue } from '../../../../lib/aws/queue/index.js';
import { type LocalS3, startS3 } from '../../../../local-stack/s3.js';
import { signedDelivery, testIngest } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { type FaultEventBridge, startFaultEventBridge } from '../../../helpers/fault-eventbridge.js';
import { recordingLogger } from '../../../helpers/recording-logger.js';

let local: LocalS3;
let s3: S3Client;
let bus: FaultEventBridge;
const BUCKET = 'forgebridge-claims';
/** A bus that still stops at 256 KB, as EventBridge did before January 2026 (and some regions may still). */
const OLD_LIMIT = 256 * 1024;
const ddb = useDynamoDbLocal();

beforeAll(async () => {
  local = await startS3({ buckets: [BUCKET] });
  s3 = new S3Client(local.clientConfig);
  bus = await startFaultEventBridge({ entryLimitBytes: OLD_LIMIT });
});
afterAll(async () => {
  s3?.destroy();
  await local?.stop();
  await bus?.close();
});

/** A 2 MB issues.opened delivery with multi-byte text, as the forge would send it. */
function bigDelivery(id: string) {
  const payload = {
    action: 'opened',
    issue: { number: 7, title: 'Grand log ü €', body: `${randomBytes(1_000_000).toString('hex')}ü€😀` },
    repository: { id: 42, name: 'r', full_name: 'octo/r', owner: { login: 'octo' }, private: false },
    organization: { login: 'octo' },
    sender: { login: 'alice' },
    installation: { id: 99 },
  };
  const rawBody = Buffer.from(JSON.stringify(payload, null, 2));
  return { id, name: 'issues', payload, rawBody };
}

describe('claim check through s3rver', () => {
  it('round-trips a 2 MB delivery: stored whole, referenced in a small entry, resolved intact', async () => {
    const delivery = bigDelivery('d-2mb');
    expect(delivery.rawBody.byteLength).toBeGreaterThan(2_000_000);
    const full = buildEventEntry(delivery, { source: AwsDefaults.source });
    expect(eventEntrySize(full)).toBeGreaterThan(AwsDefaults.maxEntryBytes);

    const payloadRef = await new ClaimCheck({ s3, bucket: BUCKET }).store(delivery);
    expect(payloadRef).toMatchObject({
      bucket: BUCKET,
      bytes: delivery.rawBody.byteLength,
      sha256: createHash('sha256').update(delivery.rawBody).digest('hex'),
    });
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: payloadRef.key }));
    expect(head.ContentLength).toBe(delivery.rawBody.byteLength);
    expect(head.Metadata?.sha256).toBe(payloadRef.sha256);

    const entry = buildEventEntry(delivery, { source: AwsDefaults.source, payloadRef });
    expect(eventEntrySize(entry)).toBeLessThan(1_024);
    const detail = JSON.parse(entry.Detail);
    expect(detail.payload).toEqual(routingFieldsOf(delivery.payload));
    expect(detail.payload.repository.full_name).toBe('octo/r');

    const resolved = await resolveDelivery({ detail }, { s3: new S3Client(local.clientConfig) });
    expect(resolved.id).toBe('d-2mb');
    expect(resolved.name).toBe('issues');
    expect(resolved.payload).toEqual(delivery.payload);
  });

  it('refuses a stored object that was altered after the event was published', async () => {
    const delivery = bigDelivery('d-tampered');
    const payloadRef = await new ClaimCheck({ s3, bucket: BUCKET }).store(delivery);
    const altered = Buffer.from(delivery.rawBody);
    altered[100] = altered[100] === 0x61 ? 0x62 : 0x61;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: payloadRef.key, Body: altered }));
    const detail = JSON.parse(buildEventEntry(delivery, { source: 's', payloadRef }).Detail);
    await expect(resolveDelivery({ detail }, { s3 })).rejects.toMatchObject({
      name: 'ResolveDeliveryError',
      code: 'payload_integrity',
    });
  });

  it('reports a reference to a missing object as payload_unavailable', async () => {
    const detail = {
      delivery: 'd-gone',
      event: 'issues',
      payload: {},
      payloadRef: { bucket: BUCKET, key: 'deliveries/1999/01/01/none.json', bytes: 1, sha256: '00' },
    };
    await expect(resolveDelivery({ detail }, { s3 })).rejects.toMatchObject({ code: 'payload_unavailable' });
  });

  it('a redelivery overwrites the same object instead of leaving a second one', async () => {
    const claims = new ClaimCheck({ s3, bucket: BUCKET });
    const first = await claims.store(bigDelivery('d-again'));
    const second = await claims.store(bigDelivery('d-again'));
    expect(second.key).toBe(first.key);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: second.key }));
    expect(head.Metadata?.sha256).toBe(second.sha256);
  });
});

describe('an entry the bus refuses for its size (a bus at 256 KB), through s3rver and DynamoDB Local', () => {
  /** A 280 KB issues.opened delivery: over the old 256 KB, well under our 960 KiB `maxEntryBytes`. */
  function midDelivery(id: string) {
    const payload = {
      action: 'opened',
      issue: { number: 8, body: randomBytes(140_000).toString('hex') },
      repository: { id: 42, name: 'r', full_name: 'octo/r', owner: { login: 'octo' } },
      sender: { login: 'alice' },
    };
    return { payload, ...signedDelivery(payload, { id }) };
  }
  const lambda = { getRemainingTimeInMillis: () => 20_000 } as Context;

  function publisher(logger = recordingLogger().logger) {
    const eventBridge = new EventBridgeClient({
      endpoint: bus.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    return new EventPublisher({ eventBridge, eventBusName: 'forge', s3, bucket: BUCKET, logger });
  }

  /** The delivery's one accepted entry: a claim-checked one, whose reference resolves to the payload sent. */
  async function expectClaimChecked(id: string, payload: unknown) {
    expect(bus.received.get(id)).toBe(1);
    const detail = JSON.parse(bus.details.get(id) ?? '{}');
    expect(detail).toMatchObject({
      delivery: id,
      event: 'issues',
      action: 'opened',
      payloadRef: { bucket: BUCKET },
    });
    expect(detail.payload).toEqual(routingFieldsOf(payload));
    expect((await resolveDelivery({ detail }, { s3 })).payload).toEqual(payload);
  }

  it('the ingest publishes it through the claim check (202, one entry) and warns once with the sizes', async () => {
    bus.reset();
    const { dedupe } = await ddb.tables();
    const { logger, lines } = recordingLogger();
    const handler = testIngest({ tableName: dedupe, dynamodb: ddb.client(), publisher: publisher(logger) });
    const { payload, headers, body } = midDelivery('d-size-ingest');
    expect(Buffer.byteLength(body)).toBeGreaterThan(OLD_LIMIT);
    const event = { version: '2.0', headers, body, requestContext: { http: { method: 'POST' } } };
    const answer = (await handler(event as never, lambda)) as { statusCode: number; body: string };

    expect({ status: answer.statusCode, body: JSON.parse(answer.body) }).toEqual({
      status: 202,
      body: { delivery: 'd-size-ingest' },
    });
    expect(bus.stats).toMatchObject({ tooLarge: 1, accepted: 1 });
    await expectClaimChecked('d-size-ingest', payload);
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings).toEqual([
      {
        level: 'warn',
        message: 'eventbridge refused the entry for its size, publishing it through the claim check',
        fields: expect.objectContaining({ delivery: 'd-size-ingest', errorCode: 'ValidationException' }),
      },
    ]);
    expect(warnings[0]?.fields.entryBytes).toBeGreaterThan(OLD_LIMIT);
    expect(JSON.stringify(lines)).not.toContain(payload.issue.body.slice(0, 64));
  });

  it('the retrier publishes a queued one the same way', async () => {
    bus.reset();
    const { dedupe } = await ddb.tables();
    const queue = new DeliveryQueue({ client: ddb.client(), tableName: dedupe, s3, bucket: BUCKET });
    const { payload, body } = midDelivery('d-size-queued');
    const rawBody = Buffer.from(body);
    expect(
      await queue.enqueue({ id: 'd-size-queued', name: 'issues', action: 'opened', payload, rawBody }),
    ).toBe('queued');
    const report = await redriveQueue({ queue, publisher: publisher() });

    expect(report).toMatchObject({ due: 1, published: 1, retried: 0, dead: 0 });
    expect(bus.stats).toMatchObject({ tooLarge: 1, accepted: 1 });
    await expectClaimChecked('d-size-queued', payload);
  });
});
