import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type BeginResult,
  DedupeStore,
  EventPublisher,
  handleDelivery,
  type IngestDependencies,
  PublishError,
} from '../../../../lib/aws/index.js';
import { signedDelivery, TEST_SECRET } from '../../../helpers/aws-delivery.js';

function fakeDeps(begin: BeginResult = 'new') {
  const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const deps = {
    getSecrets: vi.fn(async () => [TEST_SECRET]),
    dedupe: {
      begin: vi.fn(async () => begin),
      complete: vi.fn(async () => {}),
      release: vi.fn(async () => {}),
    },
    publisher: { publish: vi.fn(async () => ({})) },
    logger,
  } satisfies IngestDependencies;
  return deps;
}

const payload = { action: 'opened', issue: { number: 1 }, repository: { full_name: 'o/r' } };

function allLogged(logger: ReturnType<typeof fakeDeps>['logger']): string {
  return JSON.stringify([...logger.info.mock.calls, ...logger.warn.mock.calls, ...logger.error.mock.calls]);
}

describe('handleDelivery()', () => {
  it('publishes a verified delivery, marks it done, and answers 202 with the delivery id', async () => {
    const deps = fakeDeps();
    const response = await handleDelivery({ ...signedDelivery(payload, { id: 'd-7' }) }, deps);
    expect(response).toEqual({
      statusCode: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"delivery":"d-7"}',
    });
    expect(deps.dedupe.begin).toHaveBeenCalledWith('d-7');
    expect(deps.publisher.publish).toHaveBeenCalledTimes(1);
    const published = deps.publisher.publish.mock.calls[0]! as unknown as [
      { id: string; name: string; payload: unknown; rawBody: Buffer },
    ];
    expect(published[0]).toMatchObject({ id: 'd-7', name: 'issues', payload });
    expect(Buffer.from(published[0].rawBody).toString()).toBe(JSON.stringify(payload));
    expect(deps.dedupe.complete).toHaveBeenCalledWith('d-7');
    expect(deps.publisher.publish.mock.invocationCallOrder[0]!).toBeLessThan(
      deps.dedupe.complete.mock.invocationCallOrder[0]!,
    );
  });

  it('decodes a base64 body before verifying the signature over its bytes', async () => {
    const deps = fakeDeps();
    const { headers, body } = signedDelivery({ action: 'opened', text: 'ünïcödé \u001b' });
    const response = await handleDelivery(
      { headers, body: Buffer.from(body).toString('base64'), isBase64Encoded: true },
      deps,
    );
    expect(response.statusCode).toBe(202);
    const published = deps.publisher.publish.mock.calls[0]! as unknown as [{ payload: unknown }];
    expect(published[0].payload).toEqual({ action: 'opened', text: 'ünïcödé \u001b' });
  });

  it('rejects a base64 body that is verified as if it were text', async () => {
    const deps = fakeDeps();
    const { headers, body } = signedDelivery(payload);
    const response = await handleDelivery({ headers, body: Buffer.from(body).toString('base64') }, deps);
    expect(response.statusCode).toBe(401);
    expect(deps.publisher.publish).not.toHaveBeenCalled();
  });

  it('answers 200 {"duplicate":true} for a delivery already published, publishing nothing', async () => {
    const deps = fakeDeps('duplicate');
    const response = await handleDelivery(signedDelivery(payload), deps);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ duplicate: true });
    expect(deps.publisher.publish).not.toHaveBeenCalled();
    expect(deps.dedupe.complete).not.toHaveBeenCalled();
  });

  it('answers 409 for a delivery still in progress, publishing nothing', async () => {
    const deps = fakeDeps('in_progress');
    const response = await handleDelivery(signedDelivery(payload), deps);
    expect(response.statusCode).toBe(409);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'in_progress', message: 'delivery is being processed, retry later' },
    });
    expect(deps.publisher.publish).not.toHaveBeenCalled();
    expect(deps.dedupe.release).not.toHaveBeenCalled();
  });

  it('answers 401 for a bad signature, touching neither the dedupe table nor the bus', async () => {
    const deps = fakeDeps();
    const response = await handleDelivery(signedDelivery(payload, { secret: 'wrong' }), deps);
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body).error.code).toBe('invalid_signature');
    expect(deps.dedupe.begin).not.toHaveBeenCalled();
    expect(deps.publisher.publish).not.toHaveBeenCalled();
    expect(response.body).not.toContain(TEST_SECRET);
  });

  it('accepts a signature made with any of the rotated secrets', async () => {
    const deps = fakeDeps();
    deps.getSecrets.mockResolvedValue(['new-secret', TEST_SECRET]);
    expect((await handleDelivery(signedDelivery(payload), deps)).statusCode).toBe(202);
  });

  it('answers 400 without a delivery id header', async () => {
    const deps = fakeDeps();
    const { headers, body } = signedDelivery(payload);
    delete headers['x-forge-delivery'];
    const response = await handleDelivery({ headers, body }, deps);
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body).error.code).toBe('missing_header');
  });

  it('answers 415 for a non-JSON content type and 404 for another method, as the middleware', async () => {
    const deps = fakeDeps();
    const { headers, body } = signedDelivery(payload);
    expect(
      (await handleDelivery({ headers: { ...headers, 'content-type': 'text/plain' }, body }, deps))
        .statusCode,
    ).toBe(415);
    expect((await handleDelivery({ method: 'GET', headers, body }, deps)).statusCode).toBe(404);
  });

  it('answers 413 for a body over the configured limit', async () => {
    const deps = fakeDeps();
    const response = await handleDelivery(signedDelivery(payload), deps, { maxBodyBytes: 10 });
    expect(response.statusCode).toBe(413);
  });

  it('reads configured header names of a real forge', async () => {
    const deps = fakeDeps();
    const { headers, body } = signedDelivery(payload);
    const forgeHeaders = {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': 'gh-1',
      'x-hub-signature-256': headers['x-hub-signature-256'],
    };
    const response = await handleDelivery({ headers: forgeHeaders, body }, deps, {
      headers: { event: 'x-github-event', delivery: 'x-github-delivery' },
    });
    expect(response.statusCode).toBe(202);
    expect(deps.dedupe.begin).toHaveBeenCalledWith('gh-1');
  });

  it('answers 400 for an absurdly long delivery id, or one with spaces or control characters', async () => {
    for (const id of ['x'.repeat(257), '   ', 'a b', 'a\u0000b', 'é']) {
      const deps = fakeDeps();
      const response = await handleDelivery(signedDelivery(payload, { id }), deps);
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body).error).toEqual({
        code: 'invalid_delivery_id',
        message: '"delivery" id must be 1 to 256 visible ascii characters',
      });
      expect(deps.dedupe.begin).not.toHaveBeenCalled();
    }
    const deps = fakeDeps();
    expect((await handleDelivery(signedDelivery(payload, { id: 'x'.repeat(256) }), deps)).statusCode).toBe(
      202,
    );
  });

  it('answers 503 without details when the secrets cannot be loaded', async () => {
    const deps = fakeDeps();
    deps.getSecrets.mockRejectedValue(new Error('parameter "/x" could not be read'));
    const response = await handleDelivery(signedDelivery(payload), deps);
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: 'service_unavailable', message: 'delivery not accepted, retry later' },
    });
  });

  it('answers 503 when the dedupe table is unreachable, publishing nothing', async () => {
    const deps = fakeDeps();
    deps.dedupe.begin.mockRejectedValue(new Error('connect ECONNREFUSED'));
    const response = await handleDelivery(signedDelivery(payload), deps);
    expect(response.statusCode).toBe(503);
    expect(deps.publisher.publish).not.toHaveBeenCalled();
  });

  it('answers 503 and releases the lock when publishing fails', async () => {
    const deps = fakeDeps();
    deps.publisher.publish.mockRejectedValue(
      new PublishError('publish_failed', 'delivery not published after 5 attempts'),
    );
    const response = await handleDelivery(signedDelivery(payload, { id: 'd-9' }), deps);
    expect(response.statusCode).toBe(503);
    expect(response.body).not.toContain('attempts');
    expect(deps.dedupe.release).toHaveBeenCalledWith('d-9');
    expect(deps.dedupe.complete).not.toHaveBeenCalled();
    expect(deps.logger.error).toHaveBeenCalledWith('publish failed', {
      delivery: 'd-9',
      event: 'issues',
      errorCode: 'publish_failed',
    });
  });

  it('still answers 503 when releasing the lock fails too', async () => {
    const deps = fakeDeps();
    deps.publisher.publish.mockRejectedValue(new Error('down'));
    deps.dedupe.release.mockRejectedValue(new Error('also down'));
    expect((await handleDelivery(signedDelivery(payload), deps)).statusCode).toBe(503);
    expect(deps.logger.error).toHaveBeenCalledWith('dedupe release failed', expect.anything());
  });

  it('answers 202 when the delivery is on the bus but marking it done fails', async () => {
    const deps = fakeDeps();
    deps.dedupe.complete.mockRejectedValue(new Error('throttled'));
    expect((await handleDelivery(signedDelivery(payload), deps)).statusCode).toBe(202);
    expect(deps.logger.error).toHaveBeenCalledWith('dedupe complete failed', expect.anything());
  });

  it('never logs the secret or the payload', async () => {
    const deps = fakeDeps();
    await handleDelivery(signedDelivery({ ...payload, marker: 'PAYLOAD-MARKER' }), deps);
    await handleDelivery(signedDelivery(payload, { secret: 'wrong' }), deps);
    const logged = allLogged(deps.logger);
    expect(logged).not.toContain(TEST_SECRET);
    expect(logged).not.toContain('PAYLOAD-MARKER');
    expect(logged).toContain('delivery published');
  });
});

describe('handleDelivery() with the real publisher and dedupe store', () => {
  const eventBridgeMock = mockClient(EventBridgeClient);
  const ddbMock = mockClient(DynamoDBDocumentClient);
  beforeEach(() => {
    eventBridgeMock.reset();
    ddbMock.reset();
  });

  function realDeps() {
    let now = Date.UTC(2026, 10, 21);
    const publisher = new EventPublisher({
      eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
      eventBusName: 'forge',
      budgetMs: 2_000,
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    });
    const dedupe = new DedupeStore({
      client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
      tableName: 'dedupe',
    });
    return { getSecrets: async () => [TEST_SECRET], publisher, dedupe };
  }

  it('retries a partial failure, then answers 202 and marks the delivery done', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    eventBridgeMock
      .on(PutEventsCommand)
      .resolvesOnce({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure' }] })
      .resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] });
    const response = await handleDelivery(signedDelivery(payload, { id: 'd-r' }), realDeps());
    expect(response.statusCode).toBe(202);
    expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(2);
    expect(ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input.ExpressionAttributeValues?.[':done']).toBe(
      'done',
    );
    expect(ddbMock.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('answers 503 once the retries are exhausted and deletes the lock so a redelivery goes through', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(DeleteCommand).resolves({});
    eventBridgeMock
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException' }] });
    const response = await handleDelivery(signedDelivery(payload, { id: 'd-x' }), realDeps());
    expect(response.statusCode).toBe(503);
    expect(eventBridgeMock.commandCalls(PutEventsCommand).length).toBeGreaterThan(2);
    const deleted = ddbMock.commandCalls(DeleteCommand);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.args[0].input.Key).toEqual({ pk: 'd-x' });
    expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
