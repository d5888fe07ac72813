// The scheduled retrier's handler through its real Middy chain: its configuration from the environment, one Query
// on the queue's index, and a due record published and removed. DynamoDB (DocumentClient) and EventBridge are
// mocked; the retrier runs end to end in test/integration/stack/suites/routing.ts and the fault-injection suite.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const documents = mockClient(DynamoDBDocumentClient);
const eventBridge = mockClient(EventBridgeClient);
const context = {
  functionName: 'forgebridge-test-redrive',
  awsRequestId: 'request-1',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;

interface Report {
  due: number;
  published: number;
  retried: number;
  dead: number;
  skipped: number;
  alreadyPublished: number;
}
type Handler = (event: unknown, context: Context) => Promise<Report>;

async function loadRedrive(env: Record<string, string> = {}): Promise<Handler> {
  vi.resetModules();
  for (const [name, value] of Object.entries({
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
    FORGEBRIDGE_BUS_NAME: 'forge-bus',
    ...env,
  })) {
    vi.stubEnv(name, value);
  }
  return ((await import('../../../functions/redrive/handler.js')) as { handler: Handler }).handler;
}

beforeEach(() => {
  documents.reset();
  eventBridge.reset();
});
afterEach(() => vi.unstubAllEnvs());

describe('functions/redrive handler', { timeout: 30_000 }, () => {
  // The first test imports the handler (and its whole graph) cold: give it room on a busy machine.
  it('lists the due records with one Query on the sparse index (one more for the depth metric) and publishes nothing when none is due', async () => {
    documents.on(QueryCommand).resolves({ Items: [] });
    const handler = await loadRedrive();
    await expect(handler({}, context)).resolves.toEqual({
      due: 0,
      published: 0,
      retried: 0,
      dead: 0,
      skipped: 0,
      alreadyPublished: 0,
    });
    const queries = documents.commandCalls(QueryCommand);
    expect(queries).toHaveLength(2);
    for (const query of queries)
      expect(query.args[0].input).toMatchObject({ TableName: 'dedupe', IndexName: 'queue-due' });
    expect(eventBridge.calls()).toHaveLength(0);
  });

  it('leases a due record, publishes it on the configured bus with its delivery id, and removes it', async () => {
    documents.on(QueryCommand).resolves({ Items: [{ pk: 'queue#d-1' }] });
    documents.on(UpdateCommand).resolves({
      Attributes: {
        pk: 'queue#d-1',
        delivery: 'd-1',
        event: 'push',
        queuedAt: Date.now() - 5_000,
        attempts: 1,
        body: Buffer.from('{"ref":"refs/heads/main"}'),
      },
    });
    documents.on(DeleteCommand).resolves({});
    // No dedupe record (the ingest answered 503 for a queue write whose reply was lost): published, then recorded.
    documents.on(GetCommand).resolves({});
    documents.on(PutCommand).resolves({});
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] });
    const handler = await loadRedrive({ FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS: '3600' });
    await expect(handler({}, context)).resolves.toEqual({
      due: 1,
      published: 1,
      retried: 0,
      dead: 0,
      skipped: 0,
      alreadyPublished: 0,
    });
    expect(documents.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'dedupe',
      ConsistentRead: true,
    });
    expect(documents.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({ status: 'COMPLETED' });
    const [put] = eventBridge.commandCalls(PutEventsCommand);
    const entry = put?.args[0].input.Entries?.[0];
    expect(entry?.EventBusName).toBe('forge-bus');
    expect(entry?.DetailType).toBe('push');
    expect(JSON.parse(entry?.Detail ?? '{}')).toMatchObject({
      delivery: 'd-1',
      event: 'push',
      payload: { ref: 'refs/heads/main' },
    });
    expect(documents.commandCalls(DeleteCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'dedupe',
      Key: { pk: 'queue#d-1' },
    });
  });

  it('fails at load without the dedupe table', async () => {
    await expect(loadRedrive({ FORGEBRIDGE_DEDUPE_TABLE: '' })).rejects.toThrow('FORGEBRIDGE_DEDUPE_TABLE');
  });
});
