// The example ordered subscriber and its twin on the bus through their real handlers: every pull_request delivery
// logged `ordered delivery handled` (the twin: `delivery handled`) with its resource and its start and end, after the
// configured work; a payload with a wrong `pull_request.updated_at` refused (the stream's batch stops at it). The
// log lines are read from stdout.
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { lambdaContext } from '../../helpers/lambda-context.js';

let stdout: MockInstance<typeof process.stdout.write>;

const context = lambdaContext('forgebridge-test-onPullRequestOrdered', '256');

type Handler = (event: unknown, context: Context) => Promise<unknown>;

async function load(module: 'ordered' | 'ordered-on-bus', workMs: string): Promise<Handler> {
  vi.resetModules();
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.stubEnv('FORGEBRIDGE_DELIVERIES_TABLE', '');
  vi.stubEnv('FORGEBRIDGE_EXAMPLE_WORK_MS', workMs);
  const path =
    module === 'ordered'
      ? '../../../functions/ordered/handler.js'
      : '../../../functions/ordered-on-bus/handler.js';
  return ((await import(path)) as { handler: Handler }).handler;
}

function logLines(): Record<string, unknown>[] {
  return stdout.mock.calls
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const event = (delivery: string, pullRequest: Record<string, unknown>) => ({
  version: '0',
  id: delivery,
  'detail-type': 'pull_request.synchronize',
  source: 'forge.webhooks',
  time: '2026-12-01T00:00:00.000Z',
  detail: {
    delivery,
    event: 'pull_request',
    action: 'synchronize',
    forge: 'github',
    payload: {
      action: 'synchronize',
      number: 42,
      pull_request: pullRequest,
      repository: { full_name: 'octo/hello' },
    },
  },
});
const record = (sequenceNumber: string, body: unknown) => ({
  kinesis: {
    sequenceNumber,
    partitionKey: 'github|octo/hello#pr:42',
    data: Buffer.from(JSON.stringify(body)).toString('base64'),
  },
});

beforeEach(() => {
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});

describe('the example ordered subscriber', () => {
  it('handles each record after its work, logs its resource and span, and stops at a malformed one', async () => {
    const handler = await load('ordered', '20');
    const answer = await handler(
      {
        Records: [
          record('1', event('d-1', { number: 42, updated_at: '2026-12-01T00:00:00Z' })),
          // No updated_at: handled (a payload that leaves the field out is not malformed).
          record('2', event('d-2', { number: 42 })),
          record('3', event('d-3', { number: 42, updated_at: 'not a date' })),
          record('4', event('d-4', { number: 42 })),
        ],
      },
      context,
    );
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: '3' }] });
    const handled = logLines().filter((line) => line.message === 'ordered delivery handled');
    expect(handled.map((line) => [line.delivery, line.resource])).toEqual([
      ['d-1', 'octo/hello#pr:42'],
      ['d-2', 'octo/hello#pr:42'],
    ]);
    for (const line of handled) {
      expect((line.endedAt as number) - (line.startedAt as number)).toBeGreaterThanOrEqual(19);
    }
    // One after the other: the second started once the first had ended.
    expect(handled[1]?.startedAt as number).toBeGreaterThanOrEqual(handled[0]?.endedAt as number);
  });

  it('refuses a work time outside 0 to 60000 ms at its cold start', async () => {
    await expect(load('ordered', '-1')).rejects.toThrow(
      '"FORGEBRIDGE_EXAMPLE_WORK_MS" must be a whole number',
    );
    await expect(load('ordered', '60001')).rejects.toThrow('from 0 to 60000');
  });

  it('on the bus: the same work as a rule target, logged as "delivery handled"; a malformed payload fails it', async () => {
    const handler = await load('ordered-on-bus', '0');
    await handler(event('b-1', { number: 42 }), context);
    expect(
      logLines()
        .filter((line) => line.message === 'delivery handled')
        .map((line) => line.delivery),
    ).toEqual(['b-1']);
    await expect(handler(event('b-2', { number: 42, updated_at: 7 }), context)).rejects.toThrow();
  });
});
