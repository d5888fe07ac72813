import { createHash } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventPublisher, type EventPublisherOptions, PublishError } from '../../../../lib/aws/index.js';

const eventBridgeMock = mockClient(EventBridgeClient);
const s3Mock = mockClient(S3Client);

function delivery(payload: unknown, id = 'd-1', name = 'issues') {
  const rawBody = Buffer.from(JSON.stringify(payload));
  return { id, name, payload, rawBody };
}

/** A clock that only moves when the publisher sleeps, so budgets are exact. */
function fakeTime(start = Date.UTC(2026, 10, 21, 12)) {
  let now = start;
  const sleeps: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

function publisher(options: Partial<EventPublisherOptions> = {}, time = fakeTime()) {
  return new EventPublisher({
    eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
    eventBusName: 'forge',
    now: time.now,
    sleep: time.sleep,
    random: () => 0.5,
    ...options,
  });
}

const ok = { FailedEntryCount: 0, Entries: [{ EventId: 'evt-1' }] };
const throttled = {
  FailedEntryCount: 1,
  Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
};

beforeEach(() => {
  eventBridgeMock.reset();
  s3Mock.reset();
});
afterEach(() => {
  eventBridgeMock.reset();
  s3Mock.reset();
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
      eventBridgeMock.on(PutEventsCommand).resolvesOnce(throttled).resolvesOnce(throttled).resolves(ok);
      const time = fakeTime();
      const result = await publisher({ baseDelayMs: 100 }, time).publish(delivery({ action: 'opened' }));
      expect(result.attempts).toBe(3);
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(3);
      // full jitter with random() = 0.5: half of 100, then half of 200
      expect(time.sleeps).toEqual([50, 100]);
      const sent = eventBridgeMock
        .commandCalls(PutEventsCommand)
        .map((call) => call.args[0].input.Entries![0]);
      expect(sent[2]).toEqual(sent[0]);
    });

    it('retries network errors and throttling exceptions thrown by the client', async () => {
      const network = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      const throttling = Object.assign(new Error('rate'), { name: 'ThrottlingException' });
      eventBridgeMock.on(PutEventsCommand).rejectsOnce(network).rejectsOnce(throttling).resolves(ok);
      const result = await publisher().publish(delivery({ action: 'opened' }));
      expect(result.attempts).toBe(3);
    });

    it('gives up with a PublishError once the budget is spent', async () => {
      eventBridgeMock.on(PutEventsCommand).resolves(throttled);
      const time = fakeTime();
      const error = await publisher({ budgetMs: 1_000, baseDelayMs: 100, maxDelayMs: 400 }, time)
        .publish(delivery({ action: 'opened' }))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PublishError);
      expect(error).toMatchObject({ code: 'publish_failed', lastErrorCode: 'ThrottlingException' });
      expect((error as PublishError).message).toMatch(
        /^delivery not published after \d+ attempts \(last error "ThrottlingException"\)$/,
      );
      // 50 + 100 + 200 + 200 + 200 + 200 = 950 ms slept; the next 200 would cross the 1000 ms budget
      expect(time.sleeps).toEqual([50, 100, 200, 200, 200, 200]);
      expect((error as PublishError).attempts).toBe(7);
      expect(time.sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(1_000);
    });

    it('stops at once on an entry error that retrying cannot fix', async () => {
      eventBridgeMock
        .on(PutEventsCommand)
        .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'MalformedDetail', ErrorMessage: 'bad' }] });
      await expect(publisher().publish(delivery({}))).rejects.toMatchObject({
        name: 'PublishError',
        code: 'publish_rejected',
        attempts: 1,
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
      expect((await publisher().publish(delivery({}))).attempts).toBe(2);
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
      });
      expect(eventBridgeMock.commandCalls(PutEventsCommand)).toHaveLength(0);
    });

    it('fails with claim_check_failed when S3 refuses the object', async () => {
      s3Mock.on(PutObjectCommand).rejects(new Error('denied'));
      await expect(
        publisher({ maxEntryBytes: 100, s3: new S3Client({}), bucket: 'claims' }).publish(delivery(big)),
      ).rejects.toMatchObject({
        code: 'claim_check_failed',
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
});
