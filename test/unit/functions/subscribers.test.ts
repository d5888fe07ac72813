// The catch-all subscriber through its real Middy chain: it rebuilds `{ id, name, payload }` from an
// EventBridge event (inline, or through the S3 claim check) and writes one Powertools `delivery received` line
// with the Lambda context's function name. S3 is mocked; the log line is read from stdout.
import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { lambdaContext } from '../../helpers/lambda-context.js';

const s3 = mockClient(S3Client);
let stdout: MockInstance<typeof process.stdout.write>;

const context = lambdaContext('forgebridge-test-onEverything');

type Handler = (event: unknown, context: Context) => Promise<void>;

async function loadCatchAll(): Promise<Handler> {
  vi.resetModules();
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('POWERTOOLS_DEV', '');
  return ((await import('../../../functions/catch-all/handler.js')) as { handler: Handler }).handler;
}

/** The JSON log lines written so far. */
function logLines(): Record<string, unknown>[] {
  return stdout.mock.calls
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const payload = { action: 'opened', issue: { number: 7 }, repository: { full_name: 'octo/hello' } };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

beforeEach(() => {
  s3.reset();
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});

describe('functions/catch-all handler', { timeout: 30_000 }, () => {
  // The first test of each file imports a handler (and its whole graph) cold: give it room on a busy machine.
  it('logs one "delivery received" line for an inline delivery, with the function name', async () => {
    const handler = await loadCatchAll();
    await handler(
      {
        source: 'forge.webhooks',
        'detail-type': 'issues.opened',
        detail: { delivery: 'd-1', event: 'issues', action: 'opened', payload },
      },
      context,
    );
    const lines = logLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'INFO',
      message: 'delivery received',
      function_name: 'forgebridge-test-onEverything',
      delivery: 'd-1',
      event: 'issues',
      action: 'opened',
      detailType: 'issues.opened',
      claimCheck: false,
    });
    expect(JSON.stringify(lines)).not.toContain('octo/hello');
    expect(s3.calls()).toHaveLength(0);
  });

  it('resolves a claim-checked delivery from S3 and says so', async () => {
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
    expect(s3.commandCalls(GetObjectCommand)).toHaveLength(1);
    expect(logLines()).toEqual([
      expect.objectContaining({ message: 'delivery received', delivery: 'd-2', claimCheck: true }),
    ]);
  });

  it('fails the invocation (so EventBridge retries) when the claim-check object is missing, and logs no delivery', async () => {
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
    expect(logLines().filter((line) => line.message === 'delivery received')).toEqual([]);
  });
});
