import { createHash, randomBytes } from 'node:crypto';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsDefaults, resolveDelivery } from '../../../../lib/aws/index.js';
import { ClaimCheck } from '../../../../lib/aws/ingest/claim-check.js';
import { buildEventEntry, eventEntrySize, routingFieldsOf } from '../../../../lib/aws/ingest/event-entry.js';
import { type LocalS3, startS3 } from '../../../../local-stack/s3.js';

let local: LocalS3;
let s3: S3Client;
const BUCKET = 'forgebridge-claims';

beforeAll(async () => {
  local = await startS3({ buckets: [BUCKET] });
  s3 = new S3Client(local.clientConfig);
});
afterAll(async () => {
  s3?.destroy();
  await local?.stop();
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
