// The composition roots of lib/aws (createIngestHandler and its siblings) with options instead of the process
// environment: what each reads, which clients it uses, what it refuses at construction. AWS is mocked with
// aws-sdk-client-mock; the one-line functions/*/handler.ts files are tested through their modules in
// test/unit/functions.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { KinesisClient, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createIngestHandler,
  createRedriveHandler,
  createRefreshHandler,
  createSubscriberHandler,
  TokenRefreshError,
  type TokenSource,
} from '../../../../lib/aws/index.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { invoke, lambdaContext, recordingLogger, SECRET, v2Event } from '../ingest/events.js';

const { dynamo, documents, events } = useIngestMocks();
const ssm = mockClient(SSMClient);

const BASE = { FORGEBRIDGE_BUS_NAME: 'bus', FORGEBRIDGE_DEDUPE_TABLE: 'dedupe' };
const region = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const clients = () => ({ dynamodb: new DynamoDBClient(region), eventBridge: new EventBridgeClient(region) });

beforeEach(() => {
  ssm.reset();
  documents.on(UpdateCommand).resolves({});
});

describe('createIngestHandler()', () => {
  it('refuses a missing variable at construction, naming it', () => {
    expect(() => createIngestHandler({ env: { FORGEBRIDGE_BUS_NAME: 'bus' } })).toThrow(
      'environment variable "FORGEBRIDGE_DEDUPE_TABLE" is required',
    );
  });

  it('refuses a source without its secret parameter outside serverless-offline, naming the source', () => {
    const env = {
      ...BASE,
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: 'gitea', forge: 'gitea' }]),
    };
    expect(() => createIngestHandler({ env })).toThrow('webhook source "gitea" has no "secretParameter"');
  });

  it("reads each source's secret from its own SSM parameter on that source's first delivery only", async () => {
    ssm.on(GetParameterCommand, { Name: '/fb/default' }).resolves({ Parameter: { Value: SECRET } });
    const handler = createIngestHandler({
      env: { ...BASE, FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/fb/default' },
      clients: { ...clients(), ssm: new SSMClient(region) },
      logger: recordingLogger(),
    });
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    expect((await invoke(handler, v2Event({ id: 'ssm-1' }))).statusCode).toBe(202);
    expect((await invoke(handler, v2Event({ id: 'ssm-2' }))).statusCode).toBe(202);
    // Cached by Powertools: one read for both deliveries.
    expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input)).toEqual([
      { Name: '/fb/default', WithDecryption: true },
    ]);
  });

  it("reads an offline source's secret from the given environment, not the process's", async () => {
    const handler = createIngestHandler({
      env: { ...BASE, IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET },
      clients: clients(),
      logger: recordingLogger(),
    });
    expect((await invoke(handler, v2Event({ id: 'offline-1' }))).statusCode).toBe(202);
    expect((await invoke(handler, v2Event({ id: 'offline-2', secret: 'other' }))).statusCode).toBe(401);
    expect(ssm.calls()).toHaveLength(0);
  });

  it('publishes on the configured bus through the client it was given', async () => {
    const handler = createIngestHandler({
      env: { ...BASE, FORGEBRIDGE_SOURCE: 'acme.forge' },
      clients: clients(),
      secret: SECRET,
      logger: recordingLogger(),
    });
    expect((await invoke(handler, v2Event({ id: 'bus-1' }))).statusCode).toBe(202);
    const entry = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0];
    expect(entry).toMatchObject({ EventBusName: 'bus', Source: 'acme.forge', DetailType: 'issues.opened' });
  });

  it('with FORGEBRIDGE_STREAM_NAME writes each delivery to the ordered stream after the bus, under its resource key', async () => {
    const kinesis = mockClient(KinesisClient);
    kinesis.on(PutRecordCommand).resolves({ SequenceNumber: '1', ShardId: 'shardId-000000000000' });
    const handler = createIngestHandler({
      env: { ...BASE, FORGEBRIDGE_STREAM_NAME: 'ordered', FORGEBRIDGE_STREAM_ORDER_BY: 'repository' },
      clients: { ...clients(), kinesis: new KinesisClient(region) },
      secret: SECRET,
      logger: recordingLogger(),
    });
    expect((await invoke(handler, v2Event({ id: 'stream-1' }))).statusCode).toBe(202);
    const put = kinesis.commandCalls(PutRecordCommand)[0]?.args[0].input;
    expect(put?.StreamName).toBe('ordered');
    // The default source is generic: its payloads name no forge resource, so the key is the source's `-`.
    expect(put?.PartitionKey).toBe('default|-');
    expect(JSON.parse(Buffer.from(put?.Data as Uint8Array).toString('utf8'))).toMatchObject({
      id: 'stream-1',
      'detail-type': 'issues.opened',
    });
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(1);
    // Refused by Kinesis after the bus took it: queued for the stream alone.
    kinesis
      .on(PutRecordCommand)
      .rejects(Object.assign(new Error('no such stream'), { name: 'ResourceNotFoundException' }));
    const answer = await invoke(handler, v2Event({ id: 'stream-2' }));
    expect(JSON.parse(answer.body)).toEqual({ delivery: 'stream-2', queued: true });
    const queued = documents
      .commandCalls(PutCommand)
      .find((call) => call.args[0].input.Item?.delivery === 'stream-2');
    expect(queued?.args[0].input.Item).toMatchObject({ outputs: ['stream'], lastError: 'publish_rejected' });
    kinesis.restore();
  });

  it('refuses a stream order it does not know, naming the variable', () => {
    expect(() =>
      createIngestHandler({
        env: { ...BASE, FORGEBRIDGE_STREAM_NAME: 's', FORGEBRIDGE_STREAM_ORDER_BY: 'branch' },
      }),
    ).toThrow(
      'environment variable "FORGEBRIDGE_STREAM_ORDER_BY": must be "resource", "repository" or a JSONPath',
    );
  });

  it('writes the delivery log when its table is set, and not with deliveryLog: false', async () => {
    const env = { ...BASE, FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries' };
    const logged = () => documents.commandCalls(PutCommand, { TableName: 'deliveries' }).length;
    const withLog = createIngestHandler({
      env,
      clients: clients(),
      secret: SECRET,
      logger: recordingLogger(),
    });
    await invoke(withLog, v2Event({ id: 'log-1' }));
    expect(logged()).toBe(1);
    const without = createIngestHandler({
      env,
      clients: clients(),
      secret: SECRET,
      deliveryLog: false,
      logger: recordingLogger(),
    });
    await invoke(without, v2Event({ id: 'log-2' }));
    expect(logged()).toBe(1);
  });

  it("verifies each source with sourceSecret when given, and refuses another source's secret", async () => {
    const handler = createIngestHandler({
      env: {
        ...BASE,
        FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: 'default' }, { name: 'acme' }]),
      },
      clients: clients(),
      sourceSecret: ({ name }) => `${name}-secret`,
      logger: recordingLogger(),
    });
    const routed = (secret: string) => {
      const event = v2Event({ id: `acme-${secret}`, secret });
      return { ...event, rawPath: '/webhooks/acme', pathParameters: { source: 'acme' } };
    };
    expect((await invoke(handler, routed('acme-secret'))).statusCode).toBe(202);
    expect((await invoke(handler, routed('default-secret'))).statusCode).toBe(401);
  });
});

describe('createRedriveHandler()', () => {
  it('refuses a missing bus name at construction', () => {
    expect(() => createRedriveHandler({ env: { FORGEBRIDGE_DEDUPE_TABLE: 'dedupe' } })).toThrow(
      'environment variable "FORGEBRIDGE_BUS_NAME" is required',
    );
  });

  it('runs over the queue of the configured table with the given clients and returns its report', async () => {
    documents.on(QueryCommand).resolves({ Items: [] });
    const handler = createRedriveHandler({ env: BASE, clients: clients(), logger: recordingLogger() });
    const report = await handler({}, lambdaContext());
    expect(report).toMatchObject({ due: 0, published: 0, retried: 0, dead: 0, skipped: 0 });
    expect(documents.commandCalls(QueryCommand)[0]?.args[0].input.TableName).toBe('dedupe');
  });
});

describe('createRefreshHandler()', () => {
  const source = (key: string, fails: boolean): TokenSource =>
    ({
      key,
      store: async () => ({
        refresh: async () => {
          if (fails) throw Object.assign(new Error('token endpoint down'), { name: 'ConnectionError' });
          return { outcome: 'fresh', version: 1, token: { expiresAt: 1_900_000_000 } };
        },
      }),
    }) as unknown as TokenSource;

  it('refreshes every source it is given and fails the invocation when one failed', async () => {
    const ok = createRefreshHandler({ sources: [source('a', false)], logger: recordingLogger() });
    await expect(ok({}, lambdaContext())).resolves.toMatchObject({ failed: 0 });
    const failing = createRefreshHandler({
      sources: [source('a', false), source('b', true)],
      logger: recordingLogger(),
    });
    await expect(failing({}, lambdaContext())).rejects.toBeInstanceOf(TokenRefreshError);
  });

  it('refuses a missing token table at construction', () => {
    expect(() => createRefreshHandler({ env: {} })).toThrow('"FORGEBRIDGE_TOKEN_TABLE" is required');
  });
});

describe('createSubscriberHandler()', () => {
  const busEvent = (delivery: string) => ({
    'detail-type': 'issues.opened',
    detail: { delivery, event: 'issues', action: 'opened', payload: { action: 'opened' } },
  });

  it('dispatches to the handlers register added and reports the outcome under the given name', async () => {
    const seen: string[] = [];
    const reports: { delivery: string; subscriber: string; outcome: string }[] = [];
    const handler = createSubscriberHandler({
      name: 'notify-chat',
      register: (events) => events.on('issues.opened', ({ id }) => void seen.push(id)),
      deliveryLog: {
        recordSubscriber: async (delivery, report) =>
          void reports.push({ delivery, subscriber: report.subscriber, outcome: report.outcome }),
      },
      logger: recordingLogger(),
      env: {},
    });
    await handler(busEvent('sub-1') as never, lambdaContext());
    expect(seen).toEqual(['sub-1']);
    expect(reports).toEqual([{ delivery: 'sub-1', subscriber: 'notify-chat', outcome: 'ok' }]);
  });

  it("reports into the delivery log table of the environment under the function's own name", async () => {
    const handler = createSubscriberHandler({
      env: { FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries', AWS_LAMBDA_FUNCTION_NAME: 'fb-prod-onPush' },
      clients: { dynamodb: new DynamoDBClient(region) },
      logger: recordingLogger(),
    });
    await handler(busEvent('sub-2') as never, lambdaContext());
    const update = documents.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update?.TableName).toBe('deliveries');
    expect(JSON.stringify(update)).toContain('fb-prod-onPush');
  });

  it('runs unreported without the table, and rethrows a handler error', async () => {
    const handler = createSubscriberHandler({
      env: {},
      register: (events) =>
        events.on('issues', () => {
          throw new Error('subscriber failed');
        }),
      logger: recordingLogger(),
    });
    await expect(handler(busEvent('sub-3') as never, lambdaContext())).rejects.toThrow();
    expect(dynamo.calls()).toHaveLength(0);
    expect(documents.calls()).toHaveLength(0);
  });
});
