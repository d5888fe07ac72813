import { createHash } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClaimCheck, claimCheckKey } from '../../../../lib/aws/publish/claim-check.js';

const s3Mock = mockClient(S3Client);
beforeEach(() => s3Mock.reset());
afterEach(() => {
  vi.useRealTimers();
});

describe('claimCheckKey()', () => {
  it('files the object under the UTC date and the url-encoded delivery id', () => {
    expect(claimCheckKey('deliveries/', 'a b/../c', new Date('2026-01-02T23:59:59Z'))).toBe(
      'deliveries/2026/01/02/a%20b%2F..%2Fc.json',
    );
  });
});

describe('ClaimCheck', () => {
  it('fails fast naming the missing field', () => {
    expect(() => new ClaimCheck({ s3: new S3Client({}), bucket: '' })).toThrow(
      new TypeError('"bucket" is required'),
    );
    expect(() => new ClaimCheck({ bucket: 'b' } as never)).toThrow(new TypeError('"s3" is required'));
  });

  it('stores the exact bytes with their sha256 and returns the reference', async () => {
    s3Mock.on(PutObjectCommand).resolves({});
    const rawBody = Buffer.from('{"zen":"Keep it logically awesome."}');
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 21, 23, 59), toFake: ['Date'] });
    const claims = new ClaimCheck({
      s3: new S3Client({ region: 'us-east-1' }),
      bucket: 'claims',
      prefix: 'p/',
    });
    const ref = await claims.store({ id: 'd-1', name: 'ping', payload: {}, rawBody });
    expect(ref).toEqual({
      bucket: 'claims',
      key: 'p/2026/11/21/d-1.json',
      bytes: rawBody.byteLength,
      sha256: createHash('sha256').update(rawBody).digest('hex'),
    });
    const input = s3Mock.commandCalls(PutObjectCommand)[0]!.args[0].input;
    expect(input.Metadata?.sha256).toBe(ref.sha256);
    expect(input.ContentLength).toBe(rawBody.byteLength);
  });
});
