import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ResolveDeliveryError, resolveDelivery } from '../../../../lib/aws/index.js';

const s3Mock = mockClient(S3Client);
beforeEach(() => s3Mock.reset());

/** The SDK's streaming body, reduced to the one method resolveDelivery reads. */
function body(bytes: Buffer) {
  return { transformToByteArray: async () => new Uint8Array(bytes) } as never;
}

const payload = { action: 'opened', issue: { body: 'x'.repeat(100) }, repository: { full_name: 'o/r' } };
const raw = Buffer.from(JSON.stringify(payload));
const ref = {
  bucket: 'claims',
  key: 'deliveries/2026/11/21/d-1.json',
  bytes: raw.byteLength,
  sha256: createHash('sha256').update(raw).digest('hex'),
};

describe('resolveDelivery()', () => {
  it('returns { id, name, payload } from an inline event', async () => {
    const event = { detail: { delivery: 'd-1', event: 'issues', action: 'opened', payload } };
    expect(await resolveDelivery(event)).toEqual({ id: 'd-1', name: 'issues', payload });
  });

  it('accepts a detail handed over as JSON text', async () => {
    const detail = JSON.stringify({ delivery: 'd-1', event: 'push', payload: { ref: 'main' } });
    expect(await resolveDelivery({ detail })).toEqual({ id: 'd-1', name: 'push', payload: { ref: 'main' } });
    await expect(resolveDelivery({ detail: '{not json' })).rejects.toMatchObject({ code: 'invalid_event' });
  });

  it('fetches a claim-checked payload from S3 and checks it', async () => {
    s3Mock.on(GetObjectCommand).resolves({ Body: body(raw) });
    const event = {
      detail: {
        delivery: 'd-1',
        event: 'issues',
        action: 'opened',
        payload: { action: 'opened' },
        payloadRef: ref,
      },
    };
    expect(await resolveDelivery(event, { s3: new S3Client({ region: 'us-east-1' }) })).toEqual({
      id: 'd-1',
      name: 'issues',
      payload,
    });
    expect(s3Mock.commandCalls(GetObjectCommand)[0]!.args[0].input).toEqual({
      Bucket: 'claims',
      Key: ref.key,
    });
  });

  it('rejects an object whose sha256 does not match', async () => {
    const altered = Buffer.from(raw);
    altered[10] = 0x41;
    s3Mock.on(GetObjectCommand).resolves({ Body: body(altered) });
    const event = { detail: { delivery: 'd-1', event: 'issues', payload: {}, payloadRef: ref } };
    await expect(resolveDelivery(event, { s3: new S3Client({ region: 'us-east-1' }) })).rejects.toMatchObject(
      {
        name: 'ResolveDeliveryError',
        code: 'payload_integrity',
        message: `claim-check object "${ref.key}" does not match "detail.payloadRef" (bytes or sha256)`,
      },
    );
  });

  it('rejects a missing object with payload_unavailable', async () => {
    s3Mock.on(GetObjectCommand).rejects(Object.assign(new Error('gone'), { name: 'NoSuchKey' }));
    const event = { detail: { delivery: 'd-1', event: 'issues', payload: {}, payloadRef: ref } };
    const error = await resolveDelivery(event, { s3: new S3Client({ region: 'us-east-1' }) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResolveDeliveryError);
    expect((error as ResolveDeliveryError).code).toBe('payload_unavailable');
  });

  it('needs an s3 client for a claim-checked event', async () => {
    const event = { detail: { delivery: 'd-1', event: 'issues', payload: {}, payloadRef: ref } };
    await expect(resolveDelivery(event)).rejects.toMatchObject({ code: 'payload_unavailable' });
  });

  it('rejects an event that is not a delivery, or a malformed reference', async () => {
    await expect(resolveDelivery({ detail: { foo: 1 } })).rejects.toMatchObject({ code: 'invalid_event' });
    await expect(resolveDelivery({ detail: null } as never)).rejects.toMatchObject({ code: 'invalid_event' });
    await expect(
      resolveDelivery({ detail: { delivery: 'd', event: 'e', payloadRef: { bucket: 'b' } } }),
    ).rejects.toMatchObject({ code: 'invalid_event', message: 'event has a malformed "detail.payloadRef"' });
  });

  it('rejects a matching object that is not JSON', async () => {
    const text = Buffer.from('not json');
    s3Mock.on(GetObjectCommand).resolves({ Body: body(text) });
    const textRef = {
      ...ref,
      bytes: text.byteLength,
      sha256: createHash('sha256').update(text).digest('hex'),
    };
    const event = { detail: { delivery: 'd-1', event: 'issues', payload: {}, payloadRef: textRef } };
    await expect(resolveDelivery(event, { s3: new S3Client({ region: 'us-east-1' }) })).rejects.toMatchObject(
      {
        code: 'invalid_payload',
      },
    );
  });
});

describe('resolveDelivery() of a delivery replayed to the bus', () => {
  const mark = { run: 'run-1', at: '2026-12-06T10:00:00.000Z', ok: ['forgebridge-local-onPush', 'audit'] };
  const replayed = (replay: unknown) => ({
    detail: { delivery: 'd-9', event: 'push', payload: { ref: 'main' }, replay },
  });

  it('tells a subscriber that had reported it ok from one that had not', async () => {
    expect((await resolveDelivery(replayed(mark), { subscriber: 'audit' })).replay).toEqual({
      ...mark,
      alreadyOk: true,
    });
    expect((await resolveDelivery(replayed(mark), { subscriber: 'onIssues' })).replay).toEqual({
      ...mark,
      alreadyOk: false,
    });
    // Without a name it cannot be one of them.
    expect((await resolveDelivery(replayed(mark))).replay?.alreadyOk).toBe(false);
  });

  it('drops names that are not text, and ignores a mark that is not one', async () => {
    const loose = { ...mark, ok: ['audit', 7, '', null] };
    expect((await resolveDelivery(replayed(loose), { subscriber: 'audit' })).replay?.ok).toEqual(['audit']);
    for (const bad of [
      null,
      'run-1',
      [],
      { run: '', at: mark.at, ok: [] },
      { run: 'r', ok: [] },
      { run: 'r', at: 'x' },
    ]) {
      expect(await resolveDelivery(replayed(bad), { subscriber: 'audit' })).not.toHaveProperty('replay');
    }
  });

  it('has no replay for a first delivery', async () => {
    const event = { detail: { delivery: 'd-1', event: 'push', payload: {} } };
    expect(await resolveDelivery(event, { subscriber: 'audit' })).not.toHaveProperty('replay');
  });
});
