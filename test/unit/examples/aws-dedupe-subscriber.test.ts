// examples/aws/dedupe-subscriber.ts (shown in docs/aws-queue.md) fed the same delivery twice, as a publish retried after
// a lost reply puts it on the bus twice: two EventBridge events (their own `id` and `time`) with one
// `detail.delivery`. DynamoDB is mocked by an in-memory table that answers Powertools' conditional put and its
// update as DynamoDB does for a live record; the handler body's side effect is read from the log lines on stdout.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  PutItemCommand,
  type PutItemCommandInput,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { lambdaContext } from '../aws/ingest/events.js';

const dynamo = mockClient(DynamoDBClient);
let stdout: MockInstance<typeof process.stdout.write>;
let table: Map<string, Record<string, AttributeValue>>;

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

async function load(): Promise<Handler> {
  vi.resetModules();
  return ((await import('../../../examples/aws/dedupe-subscriber.js')) as { handler: Handler }).handler;
}

/** An EventBridge event of one publish of the delivery: each publish gets its own event id and time. */
function published(delivery: string, eventId: string) {
  return {
    version: '0',
    id: eventId,
    source: 'forge.webhooks',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [],
    'detail-type': 'issues.opened',
    detail: {
      delivery,
      event: 'issues',
      action: 'opened',
      payload: { action: 'opened', issue: { number: 7 }, repository: { full_name: 'octo/hello' } },
    },
  };
}

function logLines(message: string): Record<string, unknown>[] {
  return stdout.mock.calls
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message === message);
}

beforeEach(() => {
  vi.stubEnv('IDEMPOTENCY_TABLE', 'subscriber-idempotency');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('POWERTOOLS_DEV', '');
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  table = new Map();
  dynamo.reset();
  // A live record (in progress or completed) fails the put's condition and comes back with the error.
  dynamo.on(PutItemCommand).callsFake((input: PutItemCommandInput) => {
    const key = input.Item?.id?.S ?? '';
    const existing = table.get(key);
    if (existing !== undefined) {
      throw new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: { httpStatusCode: 400 },
        Item: existing,
      });
    }
    table.set(key, { ...input.Item });
    return {};
  });
  dynamo.on(UpdateItemCommand).callsFake((input: UpdateItemCommandInput) => {
    const key = input.Key?.id?.S ?? '';
    const item = { ...table.get(key) };
    for (const [, name, value] of (input.UpdateExpression ?? '').matchAll(/(#\w+) = (:\w+)/g)) {
      item[input.ExpressionAttributeNames?.[name!] ?? name!] = input.ExpressionAttributeValues![value!]!;
    }
    table.set(key, item);
    return {};
  });
});

afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});

describe('examples/aws/dedupe-subscriber.ts', { timeout: 30_000 }, () => {
  it('runs the handler body once for a delivery published twice, and answers both with its result', async () => {
    const handler = await load();
    const first = await handler(published('d-twice', 'event-a'), lambdaContext());
    const second = await handler(published('d-twice', 'event-b'), lambdaContext());
    expect(first).toEqual({ delivery: 'd-twice', event: 'issues' });
    expect(second).toEqual(first);
    expect(logLines('issue opened')).toEqual([
      expect.objectContaining({ delivery: 'd-twice', repository: 'octo/hello' }),
    ]);
    expect(logLines('delivery received')).toHaveLength(1);
    // One record for the delivery, completed; the second event's put hit it.
    expect(dynamo.commandCalls(PutItemCommand)).toHaveLength(2);
    expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(1);
    const records = [...table.values()];
    expect(records.map((item) => item.status?.S)).toEqual(['COMPLETED']);
    // The record outlives EventBridge's 24 h of target retries: 7 days.
    const expiresIn = Number(records[0]?.expiration?.N) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(7 * 24 * 3600 - 60);
    expect(expiresIn).toBeLessThanOrEqual(7 * 24 * 3600 + 1);
  });

  it('runs it again for another delivery id', async () => {
    const handler = await load();
    await handler(published('d-one', 'event-a'), lambdaContext());
    await handler(published('d-two', 'event-b'), lambdaContext());
    expect(logLines('issue opened').map((line) => line.delivery)).toEqual(['d-one', 'd-two']);
  });

  it('refuses an event without detail.delivery instead of running unguarded', async () => {
    const handler = await load();
    const event = published('d-x', 'event-a');
    const { delivery: _dropped, ...detail } = event.detail;
    await expect(handler({ ...event, detail }, lambdaContext())).rejects.toMatchObject({
      name: 'IdempotencyPersistenceLayerError',
      cause: { name: 'IdempotencyKeyError' },
    });
    expect(logLines('issue opened')).toEqual([]);
  });

  it('fails at load without IDEMPOTENCY_TABLE', async () => {
    vi.stubEnv('IDEMPOTENCY_TABLE', '');
    await expect(load()).rejects.toThrow(
      new TypeError('environment variable "IDEMPOTENCY_TABLE" is required'),
    );
  });
});
