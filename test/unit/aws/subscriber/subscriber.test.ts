import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSubscriber } from '../../../../lib/aws/index.js';

const s3Mock = mockClient(S3Client);
beforeEach(() => s3Mock.reset());

const payload = { action: 'opened', issue: { number: 7 }, repository: { full_name: 'octo/hello' } };
const raw = Buffer.from(JSON.stringify(payload));

function setup() {
  const lines: { message: string; fields: unknown }[] = [];
  const dispatched: unknown[] = [];
  const logger = { info: (message: string, fields: unknown) => lines.push({ message, fields }) };
  const events = {
    receive: async (delivery: unknown) => {
      dispatched.push(delivery);
    },
  };
  return { lines, dispatched, receive: createSubscriber({ events, logger, s3: new S3Client({}) }) };
}

describe('createSubscriber()', () => {
  it('logs one "delivery received" line and dispatches the inline delivery', async () => {
    const { lines, dispatched, receive } = setup();
    const event = {
      'detail-type': 'issues.opened',
      detail: { delivery: 'd-1', event: 'issues', action: 'opened', payload },
    };
    expect(await receive(event)).toEqual({ id: 'd-1', name: 'issues', payload });
    expect(dispatched).toEqual([{ id: 'd-1', name: 'issues', payload }]);
    expect(lines).toEqual([
      {
        message: 'delivery received',
        fields: {
          delivery: 'd-1',
          event: 'issues',
          action: 'opened',
          detailType: 'issues.opened',
          claimCheck: false,
        },
      },
    ]);
    expect(s3Mock.calls()).toHaveLength(0);
  });

  it('leaves "action" out for an event without actions, and never logs the payload', async () => {
    const { lines, receive } = setup();
    await receive({
      'detail-type': 'push',
      detail: { delivery: 'd-2', event: 'push', payload: { ref: 'secret-ref' } },
    });
    expect(lines[0]?.fields).toEqual({
      delivery: 'd-2',
      event: 'push',
      detailType: 'push',
      claimCheck: false,
    });
    expect(JSON.stringify(lines)).not.toContain('secret-ref');
  });

  it('resolves a claim-checked delivery through S3 and says so', async () => {
    s3Mock
      .on(GetObjectCommand, { Bucket: 'claims', Key: 'deliveries/d-3.json' })
      .resolves({ Body: { transformToByteArray: async () => new Uint8Array(raw) } as never });
    const { lines, dispatched, receive } = setup();
    const payloadRef = {
      bucket: 'claims',
      key: 'deliveries/d-3.json',
      bytes: raw.byteLength,
      sha256: createHash('sha256').update(raw).digest('hex'),
    };
    await receive({
      'detail-type': 'issues.opened',
      detail: {
        delivery: 'd-3',
        event: 'issues',
        action: 'opened',
        payload: { action: 'opened' },
        payloadRef,
      },
    });
    expect(dispatched).toEqual([{ id: 'd-3', name: 'issues', payload }]);
    expect(lines[0]?.fields).toMatchObject({ delivery: 'd-3', claimCheck: true });
  });

  it('reads the fields of a detail handed over as JSON text', async () => {
    const { lines, receive } = setup();
    const detail = JSON.stringify({ delivery: 'd-4', event: 'issues', action: 'closed', payload: {} });
    await receive({ 'detail-type': 'issues.closed', detail } as never);
    expect(lines[0]?.fields).toEqual({
      delivery: 'd-4',
      event: 'issues',
      action: 'closed',
      detailType: 'issues.closed',
      claimCheck: false,
    });
  });

  it('logs and dispatches nothing when the delivery cannot be resolved (the invocation fails, EventBridge retries)', async () => {
    s3Mock.on(GetObjectCommand).rejects(Object.assign(new Error('no such key'), { name: 'NoSuchKey' }));
    const { lines, dispatched, receive } = setup();
    const payloadRef = { bucket: 'claims', key: 'deliveries/x.json', bytes: 10, sha256: 'ab' };
    await expect(
      receive({ 'detail-type': 'push', detail: { delivery: 'd-5', event: 'push', payload: {}, payloadRef } }),
    ).rejects.toMatchObject({ code: 'payload_unavailable' });
    expect(lines).toEqual([]);
    expect(dispatched).toEqual([]);
  });

  it('fails the invocation when a handler fails, and logs no line (the retry that gets through will)', async () => {
    const lines: string[] = [];
    const receive = createSubscriber({
      events: { receive: async () => Promise.reject(new Error('handler failed')) },
      logger: { info: (message: string) => lines.push(message) },
    });
    await expect(
      receive({ 'detail-type': 'push', detail: { delivery: 'd-6', event: 'push', payload: {} } }),
    ).rejects.toThrow('handler failed');
    expect(lines).toEqual([]);
  });

  it('throws a TypeError naming the missing option', () => {
    const logger = { info: () => undefined };
    expect(() => createSubscriber({ logger } as never)).toThrow(
      new TypeError('"events" must have a "receive" function'),
    );
    expect(() => createSubscriber({ events: { receive: async () => undefined } } as never)).toThrow(
      new TypeError('"logger" must have an "info" function'),
    );
  });
});

describe('createSubscriber() and deliveries replayed to the bus', () => {
  const replayed = {
    'detail-type': 'push',
    detail: {
      delivery: 'd-7',
      event: 'push',
      payload: { ref: 'main' },
      replay: { run: 'run-2', at: '2026-12-06T10:00:00.000Z', ok: ['onPush'] },
    },
  };

  function subscriberNamed(name: string | undefined, replays?: 'skip-ok' | 'run') {
    const lines: { message: string; fields: unknown }[] = [];
    const dispatched: unknown[] = [];
    const receive = createSubscriber({
      events: { receive: async (delivery: unknown) => void dispatched.push(delivery) },
      logger: { info: (message: string, fields: unknown) => lines.push({ message, fields }) },
      name,
      replays,
    });
    return { lines, dispatched, receive };
  }

  it('skips one it had reported ok, with one "replay skipped" line and no handler run', async () => {
    const { lines, dispatched, receive } = subscriberNamed('onPush');
    const delivery = await receive(replayed);
    expect(delivery.replay?.alreadyOk).toBe(true);
    expect(dispatched).toEqual([]);
    expect(lines).toEqual([
      {
        message: 'replay skipped',
        fields: {
          delivery: 'd-7',
          event: 'push',
          replay: 'run-2',
          reason: 'this subscriber had reported it ok',
        },
      },
    ]);
  });

  it('runs one it had not reported ok, and every one with replays "run"', async () => {
    const other = subscriberNamed('onIssues');
    await other.receive(replayed);
    expect(other.dispatched).toHaveLength(1);
    expect(other.lines.map((line) => line.message)).toEqual(['delivery received']);
    const again = subscriberNamed('onPush', 'run');
    await again.receive(replayed);
    expect(again.dispatched).toHaveLength(1);
    expect(again.lines.map((line) => line.message)).toEqual(['delivery received']);
  });

  it('refuses an unknown replays mode', () => {
    expect(() => subscriberNamed('onPush', 'sometimes' as never)).toThrow(
      '"replays" must be one of "skip-ok", "run"',
    );
  });
});

describe('createSubscriber() without a name', () => {
  it("finds itself by its function's name, as the delivery report names it", async () => {
    const saved = process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'onPush';
    try {
      const dispatched: unknown[] = [];
      const receive = createSubscriber({
        events: { receive: async (delivery: unknown) => void dispatched.push(delivery) },
        logger: { info: () => undefined },
      });
      const delivery = await receive({
        'detail-type': 'push',
        detail: {
          delivery: 'd-8',
          event: 'push',
          payload: {},
          replay: { run: 'r', at: '2026-12-06T10:00:00.000Z', ok: ['onPush'] },
        },
      });
      expect(delivery.replay?.alreadyOk).toBe(true);
      expect(dispatched).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      else process.env.AWS_LAMBDA_FUNCTION_NAME = saved;
    }
  });
});
