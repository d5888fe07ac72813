// examples/aws/dedupe-subscriber.ts against DynamoDB Local: the same delivery on two EventBridge events (a publish
// whose reply was lost, sent again) runs the handler body once; Powertools' records are real, in a table with its
// default key `id`. The example's own DynamoDBClient reaches DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB.
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { lambdaContext } from '../../unit/aws/ingest/events.js';

const ddb = useDynamoDbLocal();
let stdout: MockInstance<typeof process.stdout.write>;

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

async function load(tableName: string): Promise<Handler> {
  vi.resetModules();
  vi.stubEnv('IDEMPOTENCY_TABLE', tableName);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', ddb.endpoint);
  return ((await import('../../../examples/aws/dedupe-subscriber.js')) as { handler: Handler }).handler;
}

async function table(): Promise<string> {
  const name = `idempotency-${randomUUID().slice(0, 8)}`;
  await ddb.client().send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  return name;
}

function published(delivery: string, eventId: string) {
  return {
    version: '0',
    id: eventId,
    source: 'forge.webhooks',
    'detail-type': 'issues.opened',
    time: new Date().toISOString(),
    detail: {
      delivery,
      event: 'issues',
      action: 'opened',
      payload: { action: 'opened', repository: { full_name: 'octo/hello' } },
    },
  };
}

const bodyRuns = () =>
  stdout.mock.calls
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.message === 'issue opened');

beforeEach(() => {
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('POWERTOOLS_DEV', '');
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => {
  stdout.mockRestore();
  vi.unstubAllEnvs();
});

describe('examples/aws/dedupe-subscriber.ts with DynamoDB Local', { timeout: 60_000 }, () => {
  it('runs the body once for one delivery published twice, again for another delivery', async () => {
    const tableName = await table();
    const handler = await load(tableName);
    const first = await handler(published('d-1', 'event-a'), lambdaContext());
    const again = await handler(published('d-1', 'event-b'), lambdaContext());
    await handler(published('d-2', 'event-c'), lambdaContext());
    expect(again).toEqual(first);
    expect(bodyRuns().map((line) => line.delivery)).toEqual(['d-1', 'd-2']);
    const { Items = [] } = await ddb.client().send(new ScanCommand({ TableName: tableName }));
    expect(Items.map((item) => unmarshall(item).status)).toEqual(['COMPLETED', 'COMPLETED']);
  });
});
