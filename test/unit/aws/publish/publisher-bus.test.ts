// EventPublisher over a real EventBridgeClient whose HTTP handler is ours: the SDK builds, signs and parses every
// request and reply as it does against AWS, so `onBus` is judged on the errors the SDK really throws. Time is
// vitest's fake clock; the jitter Math.random is pinned to 0.5.
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  EventPublisher,
  type EventPublisherOptions,
  type PublishError,
  type PublishResult,
} from '../../../../lib/aws/index.js';

interface Reply {
  statusCode: number;
  body: string;
}

/** What the handler does for one attempt: a reply, or a thrown transport error. */
type Attempt = (signal: AbortSignal | undefined) => Promise<Reply>;

const START = Date.UTC(2026, 10, 21, 12);
const accepted: Reply = {
  statusCode: 200,
  body: JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: 'evt-1' }] }),
};
const internal: Reply = {
  statusCode: 500,
  body: JSON.stringify({ __type: 'InternalException', message: 'x' }),
};
const throttling: Reply = {
  statusCode: 400,
  body: JSON.stringify({ __type: 'ThrottlingException', message: 'Rate exceeded' }),
};

/** A client whose n-th request is answered by `attempts[n]` (the last one repeats); records the abort signals. */
function client(...attempts: Attempt[]) {
  const signals: Array<AbortSignal | undefined> = [];
  const eventBridge = new EventBridgeClient({
    region: 'us-east-1',
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' },
    requestHandler: {
      handle: async (_request: unknown, options?: { abortSignal?: AbortSignal }) => {
        signals.push(options?.abortSignal);
        const attempt = attempts[Math.min(signals.length, attempts.length) - 1]!;
        const reply = await attempt(options?.abortSignal);
        return {
          response: {
            statusCode: reply.statusCode,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: new TextEncoder().encode(reply.body),
          },
        };
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    } as never,
  });
  return { eventBridge, signals };
}

const answer =
  (reply: Reply, afterMs = 0): Attempt =>
  (signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(reply), afterMs);
      // As the SDK's node handler does: an abort destroys the request.
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
      });
    });

const fail =
  (error: Error, afterMs = 0): Attempt =>
  () =>
    new Promise((_resolve, reject) => setTimeout(() => reject(error), afterMs));

/** The node handler's error once `requestTimeout` passed (sent, no answer). */
const timedOut = () =>
  Object.assign(new Error('a request has exceeded the configured 2000 ms requestTimeout'), {
    name: 'TimeoutError',
    code: 'ETIMEDOUT',
  });
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4010'), { code: 'ECONNREFUSED', errno: -111 });

async function publish(
  eventBridge: EventBridgeClient,
  budgetMs = 1_000,
  options: Partial<EventPublisherOptions> = {},
): Promise<PublishResult | PublishError> {
  const rawBody = Buffer.from('{"action":"opened"}');
  const outcome = new EventPublisher({ eventBridge, eventBusName: 'forge', budgetMs, ...options })
    .publish({ id: 'd-1', name: 'issues', payload: { action: 'opened' }, rawBody })
    .catch((caught: PublishError) => caught);
  let settled = false;
  void outcome.finally(() => {
    settled = true;
  });
  // The SDK's first use loads modules for real: yield to the event loop until the fake timers have work.
  while (!settled) {
    await vi.runAllTimersAsync();
    if (!settled) await new Promise((resolve) => setImmediate(resolve));
  }
  return outcome;
}

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('EventPublisher against the SDK', () => {
  it('lets an attempt the bus is still answering finish past the budget', async () => {
    const { eventBridge, signals } = client(answer(accepted, 700));
    const result = await publish(eventBridge, 300);
    expect(result).toMatchObject({ eventId: 'evt-1', attempts: 1 });
    expect(signals).toEqual([undefined]);
    expect(Date.now() - START).toBe(700);
  });

  describe('onBus of a failed publish', () => {
    it('is "no" when every attempt was answered with a 5xx', async () => {
      const error = await publish(client(answer(internal, 10)).eventBridge);
      expect(error).toMatchObject({
        name: 'PublishError',
        code: 'publish_failed',
        lastErrorCode: 'InternalException',
        onBus: 'no',
      });
      expect((error as PublishError).attempts).toBeGreaterThan(3);
    });

    it('is "no" when EventBridge throttled the request', async () => {
      const error = await publish(client(answer(throttling)).eventBridge);
      expect(error).toMatchObject({ lastErrorCode: 'ThrottlingException', onBus: 'no' });
    });

    it('is "no" when the connection was refused (nothing was sent)', async () => {
      const error = await publish(client(fail(refused())).eventBridge);
      expect(error).toMatchObject({ code: 'publish_failed', onBus: 'no' });
      expect((error as PublishError).cause).toMatchObject({ code: 'ECONNREFUSED' });
    });

    it('is "unknown" once an attempt timed out, whatever the later ones answered', async () => {
      const { eventBridge, signals } = client(fail(timedOut(), 200), answer(internal));
      const error = await publish(eventBridge);
      expect(error).toMatchObject({
        code: 'publish_failed',
        lastErrorCode: 'InternalException',
        onBus: 'unknown',
      });
      expect(signals.length).toBeGreaterThan(1);
    });

    it('is "unknown" when a 200 reply could not be read', async () => {
      const error = await publish(client(answer({ statusCode: 200, body: '{"Entries":' })).eventBridge);
      expect(error).toMatchObject({ code: 'publish_failed', onBus: 'unknown' });
    });

    it('is "unknown" when a gateway gave up waiting for the bus (504)', async () => {
      const error = await publish(
        client(answer({ statusCode: 504, body: '<html>timeout</html>' })).eventBridge,
      );
      expect(error).toMatchObject({ code: 'publish_failed', onBus: 'unknown' });
    });

    it('is "no" when the bus refused the request for good', async () => {
      const missing: Reply = {
        statusCode: 400,
        body: JSON.stringify({
          __type: 'ResourceNotFoundException',
          message: 'Event bus forge does not exist.',
        }),
      };
      const { eventBridge, signals } = client(answer(missing));
      const error = await publish(eventBridge);
      expect(error).toMatchObject({ code: 'publish_rejected', attempts: 1, onBus: 'no' });
      expect(signals).toHaveLength(1);
    });
  });

  describe('an entry refused for its size, as the SDK reads the refusal', () => {
    const s3Mock = mockClient(S3Client);
    beforeEach(() => {
      s3Mock.reset();
      s3Mock.on(PutObjectCommand).resolves({});
    });
    afterEach(() => s3Mock.reset());

    const refusals: [string, Reply][] = [
      [
        "EventBridge's ValidationException for a total size over the limit",
        {
          statusCode: 400,
          body: JSON.stringify({
            __type: 'ValidationException',
            message: 'Total size of the entries in the request is over the limit.',
          }),
        },
      ],
      ['a 413 with an empty body', { statusCode: 413, body: '' }],
      [
        'a 413 with an html body',
        { statusCode: 413, body: '<html><body>Request Entity Too Large</body></html>' },
      ],
    ];
    it.each(refusals)('claim-checks the delivery after %s', async (_name, refusal) => {
      const { eventBridge, signals } = client(answer(refusal), answer(accepted));
      const result = await publish(eventBridge, 1_000, { s3: new S3Client({}), bucket: 'claims' });
      expect(result).toMatchObject({ eventId: 'evt-1', attempts: 2, payloadRef: { bucket: 'claims' } });
      expect(signals).toHaveLength(2);
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(1);
    });

    it('refuses for good, without S3, a ValidationException about something else', async () => {
      const detailType: Reply = {
        statusCode: 400,
        body: JSON.stringify({
          __type: 'ValidationException',
          message:
            "1 validation error detected: Value at 'entries.1.member.detailType' failed to satisfy constraint: Member must have length less than or equal to 128",
        }),
      };
      const { eventBridge, signals } = client(answer(detailType));
      const error = await publish(eventBridge, 1_000, { s3: new S3Client({}), bucket: 'claims' });
      expect(error).toMatchObject({
        code: 'publish_rejected',
        attempts: 1,
        lastErrorCode: 'ValidationException',
      });
      expect(signals).toHaveLength(1);
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
    });
  });
});
