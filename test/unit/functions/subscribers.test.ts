// The catch-all subscriber through its real Middy chain: it rebuilds `{ id, name, payload }` from an
// EventBridge event (inline, or through the S3 claim check) and writes a receipt. S3 is mocked.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const s3 = mockClient(S3Client);
let dir: string;

const context = {
  functionName: 'forgebridge-test-onEverything',
  awsRequestId: 'request-1',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:forgebridge-test-onEverything',
  memoryLimitInMB: '512',
  functionVersion: '$LATEST',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

type Handler = (event: unknown, context: Context) => Promise<void>;

async function loadCatchAll(): Promise<Handler> {
  vi.resetModules();
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
  vi.stubEnv('FORGEBRIDGE_RECEIPTS_DIR', dir);
  return ((await import('../../../functions/catch-all/handler.js')) as { handler: Handler }).handler;
}

function receipts(): Record<string, unknown>[] {
  return readFileSync(join(dir, 'forgebridge-test-onEverything.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const payload = { action: 'opened', issue: { number: 7 }, repository: { full_name: 'octo/hello' } };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

beforeEach(() => {
  s3.reset();
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-receipts-unit-'));
});

afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

describe('functions/catch-all handler', { timeout: 30_000 }, () => {
  // The first test of each file imports a handler (and its whole graph) cold: give it room on a busy machine.
  it('records an inline delivery with the digest of its payload', async () => {
    const handler = await loadCatchAll();
    await handler(
      {
        source: 'forge.webhooks',
        'detail-type': 'issues.opened',
        detail: { delivery: 'd-1', event: 'issues', action: 'opened', payload },
      },
      context,
    );
    expect(receipts()).toEqual([
      {
        function: 'forgebridge-test-onEverything',
        delivery: 'd-1',
        event: 'issues',
        action: 'opened',
        detailType: 'issues.opened',
        bytes: Buffer.byteLength(JSON.stringify(payload)),
        sha256: sha(JSON.stringify(payload)),
        claimCheck: false,
      },
    ]);
    expect(s3.calls()).toHaveLength(0);
  });

  it('resolves a claim-checked delivery from S3 and records the whole payload', async () => {
    const handler = await loadCatchAll();
    const body = JSON.stringify(payload);
    s3.on(GetObjectCommand, { Bucket: 'claims', Key: 'deliveries/2026/11/21/d-2.json' }).resolves({
      // The part of the SDK's stream mixin that resolveDelivery reads.
      Body: { transformToByteArray: async () => new Uint8Array(Buffer.from(body)) } as never,
    });
    await handler(
      {
        source: 'forge.webhooks',
        'detail-type': 'issues.opened',
        detail: {
          delivery: 'd-2',
          event: 'issues',
          action: 'opened',
          payload: { action: 'opened', repository: { full_name: 'octo/hello' } },
          payloadRef: {
            bucket: 'claims',
            key: 'deliveries/2026/11/21/d-2.json',
            bytes: body.length,
            sha256: sha(body),
          },
        },
      },
      context,
    );
    expect(receipts()).toEqual([
      expect.objectContaining({ delivery: 'd-2', claimCheck: true, sha256: sha(body) }),
    ]);
  });

  it('fails the invocation (so EventBridge retries) when the claim-check object is missing, and records nothing', async () => {
    const handler = await loadCatchAll();
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('no such key'), { name: 'NoSuchKey' }));
    await expect(
      handler(
        {
          detail: {
            delivery: 'd-3',
            event: 'push',
            payload: {},
            payloadRef: { bucket: 'claims', key: 'deliveries/x.json', bytes: 10, sha256: 'ab' },
          },
        },
        context,
      ),
    ).rejects.toMatchObject({ code: 'payload_unavailable' });
    expect(() => receipts()).toThrow(/ENOENT/);
  });
});
