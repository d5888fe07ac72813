// The ingest handler through its real Middy chain, with API Gateway events whose bodies are signed by our own
// `sign()`. AWS is mocked with aws-sdk-client-mock: no network. The cases in between live in
// test/unit/aws/ingest/ingest.test.ts; these check the wiring (environment, clients, secrets).
import { createHash } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sign } from '../../../lib/webhooks/index.js';
import { useIngestMocks } from '../../helpers/aws-mocks.js';
import { lambdaContext } from '../aws/ingest/events.js';

const { dynamo, documents, events } = useIngestMocks();
const ssm = mockClient(SSMClient);
// The delivery queue writes through a DocumentClient on the ingest's DynamoDB client.

const SECRET = 'unit-test-secret';
const BASE_ENV = {
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_BUCKET: 'claims',
  FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/forgebridge/test/webhook-secret',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

const context = lambdaContext();

type Handler = (event: unknown, context: Context) => Promise<{ statusCode: number; body: string }>;

async function loadHandler(env: Record<string, string> = {}): Promise<Handler> {
  vi.resetModules();
  for (const [name, value] of Object.entries({ ...BASE_ENV, ...env })) vi.stubEnv(name, value);
  const module = (await import('../../../functions/ingest/handler.js')) as { handler: Handler };
  return module.handler;
}

const payload = { action: 'opened', issue: { number: 1 }, repository: { full_name: 'octo/hello' } };
const body = JSON.stringify(payload);

function v2Event(
  overrides: Partial<APIGatewayProxyEventV2> = {},
  signature = sign(SECRET, body),
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      'x-forge-event': 'issues',
      'x-forge-delivery': 'delivery-1',
      'x-hub-signature-256': signature,
    },
    requestContext: {
      http: { method: 'POST', path: '/webhooks' },
    } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded: false,
    ...overrides,
  };
}

beforeEach(() => {
  ssm.reset();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('functions/ingest handler', { timeout: 30_000 }, () => {
  // The first test of each file imports a handler (and its whole graph) cold: give it room on a busy machine.
  describe('offline (secret from FORGEBRIDGE_WEBHOOK_SECRET)', () => {
    it('publishes a signed payload 2.0 delivery once and answers 202', async () => {
      const handler = await loadHandler({ IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET });
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(202);
      expect(JSON.parse(response.body)).toEqual({ delivery: 'delivery-1' });
      const calls = events.commandCalls(PutEventsCommand);
      expect(calls).toHaveLength(1);
      const [entry] = calls[0]?.args[0].input.Entries ?? [];
      expect(entry).toMatchObject({
        EventBusName: 'bus',
        Source: 'forge.webhooks',
        DetailType: 'issues.opened',
      });
      expect(JSON.parse(entry?.Detail ?? '{}')).toEqual({
        delivery: 'delivery-1',
        event: 'issues',
        action: 'opened',
        forge: 'generic',
        source: 'default',
        nativeEvent: 'issues',
        nativeAction: 'opened',
        payload,
      });
      expect(dynamo.commandCalls(PutItemCommand)[0]?.args[0].input).toMatchObject({
        TableName: 'dedupe',
        Item: { pk: { S: expect.stringMatching(/^delivery#/) }, status: { S: 'INPROGRESS' } },
      });
      expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(1);
      expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    });

    it('with FORGEBRIDGE_DELIVERIES_TABLE, leaves one delivery log record per answer, payload off by default', async () => {
      const handler = await loadHandler({
        IS_OFFLINE: 'true',
        FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
        FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries',
      });
      expect((await handler(v2Event(), context)).statusCode).toBe(202);
      expect((await handler(v2Event({}, sign('wrong-secret', body)), context)).statusCode).toBe(401);
      const records = documents
        .commandCalls(PutCommand)
        .map((call) => call.args[0].input)
        .filter((input) => input.TableName === 'deliveries');
      expect(records).toHaveLength(2);
      expect(records[0]?.Item).toMatchObject({
        deliveryId: 'delivery-1',
        httpStatus: 202,
        outcome: 'published',
      });
      expect(records[1]?.Item).toMatchObject({
        httpStatus: 401,
        verdict: 'bad_signature',
        outcome: 'rejected',
      });
      for (const record of records) {
        expect(record.Item).not.toHaveProperty('payload');
        expect(JSON.stringify(record.Item)).not.toContain(sign(SECRET, body).slice(7));
      }
    });

    it('accepts a REST API (payload 1.0) event with a base64 body', async () => {
      const handler = await loadHandler({ IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET });
      const event = {
        resource: '/webhooks',
        path: '/webhooks',
        httpMethod: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Forge-Event': 'issues',
          'X-Forge-Delivery': 'delivery-rest',
          'X-Hub-Signature-256': sign(SECRET, body),
        },
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        stageVariables: null,
        requestContext: {} as APIGatewayProxyEvent['requestContext'],
        body: Buffer.from(body).toString('base64'),
        isBase64Encoded: true,
      } satisfies APIGatewayProxyEvent;
      const response = await handler(event, context);
      expect(response.statusCode).toBe(202);
      expect(JSON.parse(response.body)).toEqual({ delivery: 'delivery-rest' });
      expect(events.commandCalls(PutEventsCommand)).toHaveLength(1);
    });

    it('answers a bad signature 401 and touches neither the table nor the bus', async () => {
      const handler = await loadHandler({ IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET });
      const response = await handler(v2Event({}, sign('another-secret', body)), context);
      expect(response.statusCode).toBe(401);
      expect(JSON.parse(response.body)).toEqual({
        error: { code: 'invalid_signature', message: 'signature does not match the body' },
      });
      expect(response.body).not.toContain(SECRET);
      expect(dynamo.calls()).toHaveLength(0);
      expect(events.calls()).toHaveLength(0);
    });

    it('answers a redelivery of a published delivery 200 duplicate without publishing', async () => {
      const handler = await loadHandler({ IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET });
      dynamo.on(PutItemCommand).rejects(
        new ConditionalCheckFailedException({
          message: 'conditional request failed',
          $metadata: {},
          Item: marshall({ pk: 'delivery#x', status: 'COMPLETED', expiresAt: Date.now() / 1000 + 60 }),
        }),
      );
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ duplicate: true });
      expect(events.calls()).toHaveLength(0);
    });

    it('queues the delivery in the dedupe table and answers 202 queued when the bus keeps failing', async () => {
      const handler = await loadHandler({
        IS_OFFLINE: 'true',
        FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
        FORGEBRIDGE_PUBLISH_BUDGET_MS: '200',
      });
      events
        .on(PutEventsCommand)
        .rejects(Object.assign(new Error('socket hang up'), { name: 'NetworkingError' }));
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(202);
      expect(JSON.parse(response.body)).toEqual({ delivery: 'delivery-1', queued: true });
      expect(documents.commandCalls(PutCommand)[0]?.args[0].input).toMatchObject({
        TableName: 'dedupe',
        Item: { pk: 'queue#delivery-1', queue: 'due', delivery: 'delivery-1', lastError: 'publish_failed' },
      });
      expect(dynamo.commandCalls(DeleteItemCommand)).toHaveLength(0);
      expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(1);
    });

    it('answers 503 and releases the dedupe record when neither the bus nor the queue takes it', async () => {
      const handler = await loadHandler({
        IS_OFFLINE: 'true',
        FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
        FORGEBRIDGE_PUBLISH_BUDGET_MS: '200',
      });
      events
        .on(PutEventsCommand)
        .rejects(Object.assign(new Error('socket hang up'), { name: 'NetworkingError' }));
      documents.on(PutCommand).rejects(Object.assign(new Error('down'), { name: 'InternalServerError' }));
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(503);
      expect(JSON.parse(response.body)).toEqual({
        error: { code: 'service_unavailable', message: 'delivery not accepted, retry later' },
      });
      expect(dynamo.commandCalls(DeleteItemCommand)).toHaveLength(1);
      expect(dynamo.commandCalls(UpdateItemCommand)).toHaveLength(0);
    });
  });

  describe('deployed (secret from SSM Parameter Store)', () => {
    it('reads the secret from the SecureString parameter, decrypted, and publishes', async () => {
      ssm
        .on(GetParameterCommand)
        .resolves({ Parameter: { Name: '/forgebridge/test/webhook-secret', Value: SECRET } });
      const handler = await loadHandler();
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(202);
      const [call] = ssm.commandCalls(GetParameterCommand);
      expect(call?.args[0].input).toEqual({ Name: '/forgebridge/test/webhook-secret', WithDecryption: true });
    });

    it('answers 503 without the secret in the body when the parameter cannot be read', async () => {
      ssm
        .on(GetParameterCommand)
        .rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
      const handler = await loadHandler();
      const response = await handler(v2Event(), context);
      expect(response.statusCode).toBe(503);
      expect(events.calls()).toHaveLength(0);
    });
  });

  describe('several sources (FORGEBRIDGE_WEBHOOK_SOURCES)', () => {
    const SOURCES = JSON.stringify([
      { name: 'default', forge: 'github', secretParameter: '/forgebridge/test/webhook-secret' },
      { name: 'gitlab-acme', forge: 'gitlab', secretParameter: '/forgebridge/test/gitlab-acme' },
    ]);
    const mergeRequest = JSON.stringify({
      object_kind: 'merge_request',
      object_attributes: { action: 'open' },
    });
    const gitlabEvent = (source: string, token: string): APIGatewayProxyEventV2 =>
      v2Event({
        rawPath: `/webhooks/${source}`,
        routeKey: 'POST /webhooks/{source}',
        pathParameters: { source },
        body: mergeRequest,
        headers: {
          'content-type': 'application/json',
          'x-gitlab-event': 'Merge Request Hook',
          'x-gitlab-event-uuid': 'gl-1',
          'x-gitlab-token': token,
        },
      });

    it("verifies a source with its own forge and parameter, and publishes the catalogue's detail-type", async () => {
      ssm
        .on(GetParameterCommand, { Name: '/forgebridge/test/gitlab-acme' })
        .resolves({ Parameter: { Name: '/forgebridge/test/gitlab-acme', Value: 'gitlab-token' } });
      const handler = await loadHandler({ FORGEBRIDGE_WEBHOOK_SOURCES: SOURCES });
      const response = await handler(gitlabEvent('gitlab-acme', 'gitlab-token'), context);
      expect(response.statusCode).toBe(202);
      expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input.Name)).toEqual([
        '/forgebridge/test/gitlab-acme',
      ]);
      const [entry] = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries ?? [];
      expect(entry?.DetailType).toBe('pull_request.opened');
      expect(JSON.parse(entry?.Detail ?? '{}')).toMatchObject({
        delivery: 'gl-1',
        event: 'pull_request',
        action: 'opened',
        forge: 'gitlab',
        source: 'gitlab-acme',
        nativeEvent: 'Merge Request Hook',
        nativeAction: 'open',
      });
      expect(dynamo.commandCalls(PutItemCommand)[0]?.args[0].input.Item?.pk?.S).toBe(
        `delivery#${createHash('md5').update(JSON.stringify('source#gitlab-acme#gl-1')).digest('base64')}`,
      );
    });

    it('answers an unknown source 404 unknown_source without reading any parameter', async () => {
      const handler = await loadHandler({ FORGEBRIDGE_WEBHOOK_SOURCES: SOURCES });
      const response = await handler(gitlabEvent('gitlab-other', 'gitlab-token'), context);
      expect(response.statusCode).toBe(404);
      expect(JSON.parse(response.body)).toEqual({
        error: { code: 'unknown_source', message: 'unknown webhook source "gitlab-other"' },
      });
      expect(ssm.calls()).toHaveLength(0);
      expect(dynamo.calls()).toHaveLength(0);
      expect(events.calls()).toHaveLength(0);
    });

    it("reads each source's offline secret from its own variable", async () => {
      const handler = await loadHandler({
        FORGEBRIDGE_WEBHOOK_SOURCES: SOURCES,
        IS_OFFLINE: 'true',
        FORGEBRIDGE_WEBHOOK_SECRET: SECRET,
        FORGEBRIDGE_WEBHOOK_SECRET_GITLAB_ACME: 'gitlab-token',
      });
      expect((await handler(gitlabEvent('gitlab-acme', SECRET), context)).statusCode).toBe(401);
      expect((await handler(gitlabEvent('gitlab-acme', 'gitlab-token'), context)).statusCode).toBe(202);
    });

    it('fails at cold start when a source has no parameter (deployed)', async () => {
      vi.resetModules();
      for (const [name, value] of Object.entries(BASE_ENV)) vi.stubEnv(name, value);
      vi.stubEnv('FORGEBRIDGE_WEBHOOK_SOURCES', JSON.stringify([{ name: 'default', forge: 'github' }]));
      await expect(import('../../../functions/ingest/handler.js')).rejects.toThrow(
        'webhook source "default" has no "secretParameter"',
      );
    });
  });

  it('sends PutEvents through a client that makes one attempt (the publisher retries within its budget)', async () => {
    const handler = await loadHandler({ IS_OFFLINE: 'true', FORGEBRIDGE_WEBHOOK_SECRET: SECRET });
    const maxAttempts: number[] = [];
    events.on(PutEventsCommand).callsFake(async (_input, getClient) => {
      maxAttempts.push(await (getClient() as EventBridgeClient).config.maxAttempts());
      return { FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] };
    });
    const response = await handler(v2Event(), context);
    expect(response.statusCode).toBe(202);
    expect(maxAttempts).toEqual([1]);
  });

  it('fails at cold start with a TypeError naming a missing variable', async () => {
    vi.resetModules();
    for (const [name, value] of Object.entries(BASE_ENV)) vi.stubEnv(name, value);
    vi.stubEnv('FORGEBRIDGE_DEDUPE_TABLE', '');
    await expect(import('../../../functions/ingest/handler.js')).rejects.toThrow(
      new TypeError('environment variable "FORGEBRIDGE_DEDUPE_TABLE" is required'),
    );
  });
});
