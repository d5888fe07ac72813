// A secret rotation while deliveries flow, through the ingest's real Middy chain (createIngestHandler) and the
// real `forgebridge secret rotate` / `finish`, every AWS client mocked (aws-sdk-client-mock): the source's secrets
// are read from the mocked SSM parameter on each delivery (no cache here). The forge signs with the old secret,
// the rotation adds the new one, the forge switches, the log shows the new position, finish drops the old one:
// 0 deliveries refused, every one published, and the old secret refused after the end.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createIngestHandler, type DeliveryRecord, EventPublisher } from '../../../../lib/aws/index.js';
import { parseSecretList } from '../../../../lib/aws/secrets.js';
import { checkRecords } from '../../../../lib/cli/secret-rotation.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { runMain } from '../../../helpers/cli-in-process.js';
import { invoke, recordingLogger, v2Event } from './events.js';

const { documents, events } = useIngestMocks();
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);

const PARAMETER = '/forgebridge/prod/webhook-secret';
const OLD = 'the-forge-secret-before-rotation';
const ENV = {
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries',
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: 'default', secretParameter: PARAMETER }]),
};
let parameter: string;

beforeEach(() => {
  for (const mock of [ssm, lambda]) mock.reset();
  parameter = OLD;
  events.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
    FailedEntryCount: 0,
    Entries: input.Entries.map((_, index) => ({ EventId: `event-${index}` })),
  }));
  lambda.on(GetFunctionConfigurationCommand).resolves({ Environment: { Variables: ENV } });
  ssm.on(GetParameterCommand).callsFake(() => ({ Parameter: { Value: parameter } }));
  ssm.on(PutParameterCommand).callsFake((input: { Value: string }) => {
    parameter = input.Value;
    return {};
  });
});

/** The log's records, newest first, as the ingest wrote them. */
function logRecords(): DeliveryRecord[] {
  return documents
    .commandCalls(PutCommand)
    .map((call) => call.args[0].input)
    .filter((input) => input.TableName === 'deliveries')
    .map((input) => input.Item as unknown as DeliveryRecord)
    .reverse();
}

describe('a rotation while deliveries flow', () => {
  it('refuses none, publishes every one, and refuses the old secret once finished', async () => {
    const handler = createIngestHandler({
      env: ENV,
      clients: { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) },
      publisher: new EventPublisher({
        eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
        eventBusName: 'bus',
        budgetMs: 100,
        baseDelayMs: 1,
        maxDelayMs: 2,
      }),
      // As the SSM provider reads it, without the cache.
      sourceSecret: () => async () => parseSecretList(parameter),
      logger: recordingLogger(),
    });
    let sent = 0;
    const statuses: number[] = [];
    const deliver = async (secret: string, count: number) => {
      for (let i = 0; i < count; i++) {
        sent++;
        statuses.push((await invoke(handler, v2Event({ id: `rotation-${sent}`, secret }))).statusCode);
      }
    };
    const stage = ['--source', 'default', '--stage', 'prod', '--region', 'eu-west-1'];

    await deliver(OLD, 3);
    const rotated = await runMain(['secret', 'rotate', ...stage]);
    expect(rotated.code).toBe(0);
    const fresh = /^ {2}([0-9a-f]{64})$/m.exec(rotated.stdout)?.[1] as string;
    expect(parameter).toBe(`${OLD},${fresh}`);
    await deliver(OLD, 3); // the forge still signs with the old secret
    expect(checkRecords(logRecords(), 5).ok).toBe(false);
    await deliver(fresh, 5); // the user pasted the new one into the forge
    expect(checkRecords(logRecords(), 5)).toMatchObject({ ok: true, withNew: 5 });
    const finished = await runMain(['secret', 'finish', ...stage, '--force']);
    expect(finished.code).toBe(0);
    expect(parameter).toBe(fresh);
    await deliver(fresh, 3);

    expect(statuses).toEqual(Array.from({ length: sent }, () => 202));
    const published = events
      .commandCalls(PutEventsCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(published).toHaveLength(sent);
    expect(logRecords().map((record) => record.secretIndex)).toEqual([
      0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    ]);
    expect((await invoke(handler, v2Event({ id: 'rotation-old', secret: OLD }))).statusCode).toBe(401);
  });
});
