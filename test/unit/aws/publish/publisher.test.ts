import { createHash } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type DeliveryEntry,
  EventPublisher,
  type EventPublisherOptions,
  PublishError,
  type PublishResult,
} from '../../../../lib/aws/index.js';
import { eventEntrySize } from '../../../../lib/aws/publish/event-entry.js';
import { recordingLogger } from '../ingest/events.js';

// Time is vitest's fake clock and the jitter Math.random pinned to 0.5: budgets and waits are exact.
const eventBridgeMock = mockClient(EventBridgeClient);
const s3Mock = mockClient(S3Client);
const START = Date.UTC(2026, 10, 21, 12);

function delivery(payload: unknown, id = 'd-1', name = 'issues') {
  const rawBody = Buffer.from(JSON.stringify(payload));
  return { id, name, payload, rawBody };
}

function publisher(options: Partial<EventPublisherOptions> = {}) {
  return new EventPublisher({
    eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
    eventBusName: 'forge',
    ...options,
  });
}

/** Runs the fake clock until the promise settles; resolves what it rejected with as a value. */
async function settle<T>(promise: Promise<T>): Promise<T | unknown> {
  const outcome = promise.catch((caught: unknown) => caught);
  await vi.runAllTimersAsync();
  return outcome;
}

/** Answers PutEvents with `reply(attempt)` and records when (ms after the start) each attempt began. */
function bus(reply: (attempt: number) => unknown): number[] {
  const times: number[] = [];
  eventBridgeMock.on(PutEventsCommand).callsFake(async () => {
    times.push(Date.now() - START);
    return reply(times.length);
  });
  return times;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ok = { FailedEntryCount: 0, Entries: [{ EventId: 'evt-1' }] };
const throttled = {
  FailedEntryCount: 1,
  Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
};

beforeEach(() => {
  eventBridgeMock.reset();
  s3Mock.reset();
  vi.useFakeTimers({ now: START });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  eventBridgeMock.reset();
  s3Mock.reset();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('EventPublisher', () => {
  describe('constructor', () => {
    it('requires an eventBridge client', () => {
      expect(() => new EventPublisher({} as EventPublisherOptions)).toThrow(
        new TypeError('"eventBridge" is required'),
      );
    });

    it('rejects a non-positive limit or budget, naming the field', () => {
      expect(() => publisher({ maxEntryBytes: 0 })).toThrow('"maxEntryBytes" must be a positive number');
      expect(() => publisher({ budgetMs: -1 })).toThrow('"budgetMs" must be a positive number');
    });
  });

  describe('publish()', () => {
    it('sends exactly one entry per delivery with the default source', async () => {
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      const result = await publisher().publish(delivery({ action: 'opened', issue: {} }));
      expect(result).toMatchObject({ eventId: 'evt-1', attempts: 1 });
      const calls = eventBridgeMock.commandCalls(PutEventsCommand);
      expect(calls).toHaveLength(1);
      const entries = calls[0]!.args[0].input.Entries!;
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        Source: 'forge.webhooks',
        DetailType: 'issues.opened',
        EventBusName: 'forge',
      });
      expect(JSON.parse(entries[0]!.Detail!)).toEqual({
        delivery: 'd-1',
        event: 'issues',
        action: 'opened',
        payload: { action: 'opened', issue: {} },
      });
    });

    it('uses a configured source', async () => {
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      await publisher({ source: 'acme.forge' }).publish(delivery({ ref: 'main' }, 'd', 'push'));
      const entry = eventBridgeMock.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries![0]!;
      expect(entry.Source).toBe('acme.forge');
      expect(entry.DetailType).toBe('push');
    });

    it('resends a failed entry after a jittered backoff and succeeds', async () => {
      const times = bus((attempt) => (attempt < 3 ? throttled : ok));
      const result = (await settle(
        publisher({ baseDelayMs: 100 }).publish(delivery({ action: 'opened' })),
      )) as PublishResult;
      expect(result.attempts).toBe(3);
      // full jitter with Math.random() = 0.5: half of 100, then half of 200
      expect(times).toEqual([0, 50, 150]);
      const sent = eventBridgeMock
        .commandCalls(PutEventsCommand)
        .map((call) => call.args[0].input.Entries![0]);
      expect(sent[2]).toEqual(sent[0]);
    });

    it('retries network errors and throttling exceptions thrown by the client', async () => {
      const network = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      const throttling = Object.assign(new Error('rate'), { name: 'ThrottlingException' });
      eventBridgeMock.on(PutEventsCommand).rejectsOnce(network).rejectsOnce(throttling).resolves(ok);
      const result = (await settle(publisher().publish(delivery({ action: 'opened' })))) as PublishResult;
      expect(result.attempts).toBe(3);
    });

    it('gives up with a PublishError once the budget is spent', async () => {
      const times = bus(() => throttled);
      const error = await settle(
        publisher({ budgetMs: 1_000, baseDelayMs: 100, maxDelayMs: 400 }).publish(
          delivery({ action: 'opened' }),
        ),
      );
      expect(error).toBeInstanceOf(PublishError);
      expect(error).toMatchObject({
        code: 'publish_failed',
        lastErrorCode: 'ThrottlingException',
        onBus: 'no',
      });
      expect((error as PublishError).message).toMatch(
        /^delivery not published after \d+ attempts \(last error "ThrottlingException"\)$/,
      );
      // waits of 50 + 100 + 200 + 200 + 200 + 200 = 950 ms; the next 200 would cross the 1000 ms budget
      expect(times).toEqual([0, 50, 150, 350, 550, 750, 950]);
      expect((error as PublishError).attempts).toBe(7);
    });

    it('starts no retry that the slowest attempt so far says cannot end within the budget', async () => {
      // Each attempt takes 400 ms: after the second (450-850 ms) a third would end at 1350 ms, past the budget.
      const times = bus(async () => {
        await wait(400);
        return throttled;
      });
      const error = await settle(
        publisher({ budgetMs: 1_000, baseDelayMs: 100 }).publish(delivery({ action: 'opened' })),
      );
      expect(error).toMatchObject({ code: 'publish_failed', attempts: 2, onBus: 'no' });
      expect(times).toEqual([0, 450]);
      expect(Date.now() - START).toBe(850);
    });

    it('lets an attempt under way run past the budget instead of cutting it off', async () => {
      const times = bus(async () => {
        await wait(700);
        return ok;
      });
      const result = (await settle(
        publisher({ budgetMs: 300 }).publish(delivery({ action: 'opened' })),
      )) as PublishResult;
      expect(result).toMatchObject({ eventId: 'evt-1', attempts: 1 });
      expect(times).toEqual([0]);
      // no abort signal reaches the client: only its own request timeout bounds an attempt
      expect((eventBridgeMock.send.firstCall.args as unknown[])[1]).toBeUndefined();
    });

    it('stops at once on an entry error that retrying cannot fix', async () => {
      eventBridgeMock
        .on(PutEventsCommand)
        .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'MalformedDetail', ErrorMessage: 'bad' }] });
      await expect(publisher().publish(delivery({}))).rejects.toMatchObject({
        name: 'PublishError',
        code: 'publish_rejected',
        attempts: 1,
        onBus: 'no',
        message: 'eventbridge rejected the entry with "MalformedDetail"',
      });
    });

    it('stops at once on a permanent exception such as a missing bus', async () => {
      const missing = Object.assign(new Error('no bus'), { name: 'ResourceNotFoundException' });
      eventBridgeMock.on(PutEventsCommand).rejects(missing);
      const error = (await publisher()
        .publish(delivery({}))
        .catch((caught: unknown) => caught)) as PublishError;
      expect(error.code).toBe('publish_rejected');
      expect(error.cause).toBe(missing);
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(1);
    });

    it('treats an answer without an entry as a failure to retry', async () => {
      eventBridgeMock.on(PutEventsCommand).resolvesOnce({ FailedEntryCount: 0, Entries: [] }).resolves(ok);
      expect(((await settle(publisher().publish(delivery({})))) as PublishResult).attempts).toBe(2);
    });

    it('reports onBus unknown when an answer did not say what became of the entry', async () => {
      eventBridgeMock
        .on(PutEventsCommand)
        .resolvesOnce({ FailedEntryCount: 0, Entries: [] })
        .resolves(throttled);
      const error = await settle(publisher({ budgetMs: 500 }).publish(delivery({})));
      expect(error).toMatchObject({
        code: 'publish_failed',
        lastErrorCode: 'ThrottlingException',
        onBus: 'unknown',
      });
    });
  });

  describe('claim check', () => {
    const big = {
      action: 'opened',
      repository: { id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
      blob: 'x'.repeat(2_000),
    };

    it('sends the payload as-is while the entry fits the limit exactly', async () => {
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      const probe = await publisher().publish(delivery(big));
      eventBridgeMock.reset();
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      const result = await publisher({
        maxEntryBytes: probe.entryBytes,
        s3: new S3Client({}),
        bucket: 'claims',
      }).publish(delivery(big));
      expect(result.payloadRef).toBeUndefined();
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
    });

    it('stores the raw body in S3 one byte over the limit and sends routing fields plus a reference', async () => {
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      s3Mock.on(PutObjectCommand).resolves({});
      const probe = await publisher().publish(delivery(big));
      eventBridgeMock.reset();
      eventBridgeMock.on(PutEventsCommand).resolves(ok);
      const d = delivery(big, 'abc/def');
      const result = await publisher({
        maxEntryBytes: probe.entryBytes - 1,
        s3: new S3Client({}),
        bucket: 'claims',
      }).publish(d);
      const sha256 = createHash('sha256').update(d.rawBody).digest('hex');
      expect(result.payloadRef).toEqual({
        bucket: 'claims',
        key: 'deliveries/2026/11/21/abc%2Fdef.json',
        bytes: d.rawBody.byteLength,
        sha256,
      });
      const put = s3Mock.commandCalls(PutObjectCommand)[0]!.args[0].input;
      expect(put).toMatchObject({
        Bucket: 'claims',
        Key: 'deliveries/2026/11/21/abc%2Fdef.json',
        ContentType: 'application/json',
      });
      expect(put.Metadata).toEqual({ sha256, delivery: 'abc/def', event: 'issues' });
      expect(Buffer.from(put.Body as Uint8Array).equals(d.rawBody)).toBe(true);
      const entry = eventBridgeMock.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries![0]!;
      expect(entry.DetailType).toBe('issues.opened');
      expect(JSON.parse(entry.Detail!)).toEqual({
        delivery: 'abc/def',
        event: 'issues',
        action: 'opened',
        payload: {
          action: 'opened',
          repository: { id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
        },
        payloadRef: result.payloadRef,
      });
    });

    it('fails with entry_too_large when no bucket is configured', async () => {
      await expect(publisher({ maxEntryBytes: 100 }).publish(delivery(big))).rejects.toMatchObject({
        code: 'entry_too_large',
        onBus: 'no',
      });
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(0);
    });

    it('fails with claim_check_failed when S3 refuses the object', async () => {
      s3Mock.on(PutObjectCommand).rejects(new Error('denied'));
      await expect(
        publisher({ maxEntryBytes: 100, s3: new S3Client({}), bucket: 'claims' }).publish(delivery(big)),
      ).rejects.toMatchObject({
        code: 'claim_check_failed',
        onBus: 'no',
        message: 'claim-check object could not be stored in "bucket"',
      });
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(0);
    });

    it('fails with entry_too_large when even the reference entry is over the limit', async () => {
      s3Mock.on(PutObjectCommand).resolves({});
      await expect(
        publisher({ maxEntryBytes: 50, s3: new S3Client({}), bucket: 'claims' }).publish(delivery(big)),
      ).rejects.toMatchObject({ code: 'entry_too_large' });
    });
  });

  describe('an entry the bus refuses for its size', () => {
    const payload = {
      action: 'opened',
      repository: { id: 1, name: 'r', full_name: 'o/r', owner: { login: 'o' } },
      blob: 'secret-ish payload text '.repeat(40),
    };
    const totalSize = () =>
      Object.assign(new Error('Total size of the entries in the request is over the limit.'), {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      });
    const claimChecked = (logger?: EventPublisherOptions['logger']) =>
      publisher({ s3: new S3Client({}), bucket: 'claims', logger });

    it('is stored in S3 and published once as the claim-check entry, with one warning of ids and sizes', async () => {
      eventBridgeMock.on(PutEventsCommand).rejectsOnce(totalSize()).resolves(ok);
      s3Mock.on(PutObjectCommand).resolves({});
      const logger = recordingLogger();
      const d = delivery(payload, 'd-big');
      const result = (await settle(claimChecked(logger).publish(d))) as PublishResult;

      expect(result).toMatchObject({
        eventId: 'evt-1',
        attempts: 2,
        payloadRef: {
          bucket: 'claims',
          key: 'deliveries/2026/11/21/d-big.json',
          bytes: d.rawBody.byteLength,
        },
      });
      const sent = eventBridgeMock
        .commandCalls(PutEventsCommand)
        .map((call) => call.args[0].input.Entries![0]!);
      expect(sent).toHaveLength(2);
      expect(JSON.parse(sent[0]!.Detail!).payload).toEqual(payload);
      expect(JSON.parse(sent[1]!.Detail!)).toEqual({
        delivery: 'd-big',
        event: 'issues',
        action: 'opened',
        payload: { action: 'opened', repository: payload.repository },
        payloadRef: result.payloadRef,
      });
      expect(result.entryBytes).toBe(eventEntrySize(sent[1] as DeliveryEntry));
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(1);
      expect(logger.lines).toEqual([
        {
          level: 'warn',
          message: 'eventbridge refused the entry for its size, publishing it through the claim check',
          fields: [
            {
              delivery: 'd-big',
              entryBytes: eventEntrySize(sent[0] as DeliveryEntry),
              bodyBytes: d.rawBody.byteLength,
              maxEntryBytes: 983_040,
              errorCode: 'ValidationException',
            },
          ],
        },
      ]);
      expect(JSON.stringify(logger.lines)).not.toContain('secret-ish');
    });

    it('takes the same way for a failed entry whose error says it is too large', async () => {
      eventBridgeMock
        .on(PutEventsCommand)
        .resolvesOnce({
          FailedEntryCount: 1,
          Entries: [
            { ErrorCode: 'InvalidArgument', ErrorMessage: 'Event size exceeds the limit of 262144 bytes' },
          ],
        })
        .resolves(ok);
      s3Mock.on(PutObjectCommand).resolves({});
      const result = (await settle(claimChecked().publish(delivery(payload)))) as PublishResult;
      expect(result).toMatchObject({ attempts: 2, payloadRef: { bucket: 'claims' } });
    });

    it('keeps refusing for good any other ValidationException, without touching S3', async () => {
      const detailType = Object.assign(
        new Error(
          "1 validation error detected: Value at 'entries.1.member.detailType' failed to satisfy constraint: Member must have length less than or equal to 128",
        ),
        { name: 'ValidationException', $metadata: { httpStatusCode: 400 } },
      );
      eventBridgeMock.on(PutEventsCommand).rejects(detailType);
      const error = await settle(claimChecked().publish(delivery(payload)));
      expect(error).toMatchObject({
        code: 'publish_rejected',
        attempts: 1,
        lastErrorCode: 'ValidationException',
        onBus: 'no',
      });
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
    });

    it('fails with entry_too_large, nothing on the bus, when no bucket is configured', async () => {
      eventBridgeMock.on(PutEventsCommand).rejects(totalSize());
      const d = delivery(payload);
      const error = await settle(publisher().publish(d));
      const bytes = eventEntrySize(
        eventBridgeMock.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries![0] as DeliveryEntry,
      );
      expect(error).toBeInstanceOf(PublishError);
      expect(error).toMatchObject({
        code: 'entry_too_large',
        attempts: 1,
        lastErrorCode: 'ValidationException',
        onBus: 'no',
        message: `entry of ${bytes} bytes was refused by eventbridge for its size and no claim-check "bucket" is configured`,
      });
    });

    it('fails with claim_check_failed when S3 refuses the object after the refusal', async () => {
      eventBridgeMock.on(PutEventsCommand).rejects(totalSize());
      s3Mock.on(PutObjectCommand).rejects(new Error('denied'));
      const error = await settle(claimChecked().publish(delivery(payload)));
      expect(error).toMatchObject({ code: 'claim_check_failed', attempts: 1, onBus: 'no' });
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(1);
    });

    it('tries the claim check once: a claim-check entry refused for its size too is entry_too_large', async () => {
      eventBridgeMock.on(PutEventsCommand).rejects(totalSize());
      s3Mock.on(PutObjectCommand).resolves({});
      const error = await settle(claimChecked().publish(delivery(payload)));
      expect(error).toMatchObject({ code: 'entry_too_large', attempts: 2, onBus: 'no' });
      expect((error as PublishError).message).toMatch(
        /^claim-check entry of \d+ bytes was refused by eventbridge for its size$/,
      );
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(2);
      expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(1);
    });

    it('keeps "unknown" from an earlier attempt whose fate the bus never told', async () => {
      const timeout = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      eventBridgeMock.on(PutEventsCommand).rejectsOnce(timeout).rejects(totalSize());
      const error = await settle(publisher().publish(delivery(payload)));
      expect(error).toMatchObject({ code: 'entry_too_large', attempts: 2, onBus: 'unknown' });
    });
  });
});
