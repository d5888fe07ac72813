// End to end through the real local stack: every request the ingest answers leaves one record in the delivery
// log (DynamoDB Local), and the reporting subscribers (the example subscriber, the local recorder) add their
// outcome to it. Read from outside the functions, with DeliveryLog.get on the stack's deliveries table.
import { createHash, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryDetails, DeliveryLog } from '../../../../lib/aws/index.js';
import { sampleDelivery, signDelivery } from '../../../../local-stack/sample-deliveries.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function deliveryLogSuite(stack: () => TestStack): void {
  describe('delivery-log: the delivery log', () => {
    let t: TestStack;

    let client: DynamoDBClient;
    let log: DeliveryLog;

    /** Subscriber names in the log: the function's name (`forgebridge-<stage>-<key>`). */
    const subscriber = (key: string) => `forgebridge-${t.stack.stage}-${key}`;

    beforeAll(async () => {
      t = stack();
      client = new DynamoDBClient(t.stack.dynamodb.clientConfig);
      log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
    }, 150_000);

    afterAll(async () => {
      client?.destroy();
    });

    /** Polls the log until `check` holds for the delivery, then returns it. */
    async function logged(
      id: string,
      check: (details: DeliveryDetails) => boolean,
      timeoutMs = 20_000,
    ): Promise<DeliveryDetails> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const details = await log.get(id);
        if (details !== undefined && check(details)) return details;
        if (Date.now() > deadline) {
          throw new Error(
            `delivery ${id} not logged as expected: ${JSON.stringify(details, (_, value) => (value instanceof Uint8Array ? `<${value.byteLength} bytes>` : value))}\n${t.stack.logTail(30)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    function text(body: Uint8Array | undefined): string | undefined {
      return body === undefined ? undefined : Buffer.from(body).toString('utf8');
    }

    describe('delivery log through the local stack', () => {
      it('records a good delivery: every field, the payload (on locally), and the subscribers that got it, ok', async () => {
        const before = Date.now();
        const { name, payload } = sampleDelivery('issues.opened');
        const delivery = signDelivery(t.stack.secret, name, payload);
        const posted = await t.send(delivery);
        expect(posted.status).toBe(202);
        const details = await logged(
          delivery.id,
          (found) =>
            found.subscribers[subscriber('recorder')] !== undefined &&
            found.subscribers[subscriber('onIssuesOpened')] !== undefined,
        );
        expect(details.records).toHaveLength(1);
        const record = details.latest;
        expect(record).toMatchObject({
          deliveryId: delivery.id,
          event: 'issues',
          action: 'opened',
          forge: 'generic',
          source: 'default',
          bodyBytes: Buffer.byteLength(delivery.body),
          verdict: 'verified',
          httpStatus: 202,
          outcome: 'published',
        });
        expect(record.receivedAt).toBeGreaterThanOrEqual(before);
        expect(record.receivedAt).toBeLessThanOrEqual(Date.now());
        expect(record.eventId).toEqual(expect.any(String));
        expect(record.eventId?.length).toBeGreaterThan(0);
        expect(record.payloadRef).toBeUndefined();
        expect(record.diagnosis).toBeUndefined();
        expect(record.errorCode).toBeUndefined();
        expect(text(record.body)).toBe(delivery.body);
        expect(record.payloadOmitted).toBeUndefined();
        expect(record.headers).toMatchObject({
          'x-forge-event': 'issues',
          'x-forge-delivery': delivery.id,
          'x-hub-signature-256': 'sha256=[masked]',
        });
        expect(record.expiresAt).toBe(Math.floor(record.receivedAt / 1000) + 14 * 24 * 60 * 60);
        for (const key of ['recorder', 'onIssuesOpened']) {
          expect(details.subscribers[subscriber(key)], key).toMatchObject({
            outcome: 'ok',
            durationMs: expect.any(Number),
            at: expect.any(Number),
          });
          expect(details.subscribers[subscriber(key)]?.error).toBeUndefined();
        }
        // The list (by-day index) finds it too, newest first.
        const page = await log.list({ event: 'issues.opened', since: before, subscribers: true });
        const listed = page.records.find((entry) => entry.deliveryId === delivery.id);
        expect(listed).toMatchObject({ outcome: 'published', verdict: 'verified', httpStatus: 202 });
        expect(Object.keys(listed?.subscribers ?? {})).toEqual(
          expect.arrayContaining([subscriber('recorder'), subscriber('onIssuesOpened')]),
        );
      });

      it('records a bad signature with its diagnosis, and never the secret or the signature value', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const wrongSecret = `wrong-${randomUUID()}`;
        const delivery = signDelivery(wrongSecret, name, payload);
        const signature = delivery.headers['x-hub-signature-256'] as string;
        const posted = await t.send(delivery);
        expect(posted.status).toBe(401);
        const details = await logged(delivery.id, () => true);
        const record = details.latest;
        expect(record).toMatchObject({
          deliveryId: delivery.id,
          event: 'issues',
          action: 'opened',
          forge: 'generic',
          source: 'default',
          bodyBytes: Buffer.byteLength(delivery.body),
          verdict: 'bad_signature',
          httpStatus: 401,
          outcome: 'rejected',
          errorCode: 'invalid_signature',
        });
        expect(record.eventId).toBeUndefined();
        expect(record.diagnosis?.map((reason) => reason.code)).toContain('wrong_secret');
        expect(record.reason).toBe(record.diagnosis?.[0]?.message);
        expect(record.reason).toMatch(/secret/);
        const stored = JSON.stringify(details, (_, value) =>
          value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
        );
        const hex = signature.slice('sha256='.length);
        expect(stored).not.toContain(hex);
        expect(stored).not.toContain(hex.slice(0, 16));
        expect(stored).not.toContain(wrongSecret);
        expect(stored).not.toContain(t.stack.secret);
        expect(details.subscribers).toEqual({});
      });

      it('records a re-serialized body as such', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const compact = signDelivery(t.stack.secret, name, payload);
        const pretty = { ...compact, body: JSON.stringify(payload, null, 2) };
        expect((await t.send(pretty)).status).toBe(401);
        const record = (await logged(compact.id, () => true)).latest;
        expect(record.verdict).toBe('bad_signature');
        expect(record.diagnosis?.[0]?.code).toBe('reserialized');
      });

      it('records a redelivery as a duplicate beside the first answer', async () => {
        const { name, payload } = sampleDelivery('push');
        const delivery = signDelivery(t.stack.secret, name, payload);
        expect((await t.send(delivery)).status).toBe(202);
        expect((await t.send(delivery)).status).toBe(200);
        const details = await logged(delivery.id, (found) => found.records.length >= 2);
        expect(details.records.map((record) => [record.outcome, record.httpStatus])).toEqual([
          ['duplicate', 200],
          ['published', 202],
        ]);
        expect(details.latest).toMatchObject({ verdict: 'verified', event: 'push', deliveryId: delivery.id });
        expect(details.latest.eventId).toBeUndefined();
        expect(details.records[1]?.eventId).toEqual(expect.any(String));
      });

      it('records a claim-checked 2 MB delivery with its S3 reference (the body itself too large to keep)', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const large = structuredClone(payload) as { issue: { body: string } };
        large.issue.body = 'forgebridge '.repeat(Math.ceil((2 * 1024 * 1024) / 12));
        const body = JSON.stringify(large);
        const delivery = signDelivery(t.stack.secret, name, large, { body });
        expect((await t.send(delivery)).status).toBe(202);
        const details = await logged(
          delivery.id,
          (found) => found.subscribers[subscriber('recorder')] !== undefined,
          40_000,
        );
        const record = details.latest;
        expect(record).toMatchObject({
          outcome: 'published',
          httpStatus: 202,
          bodyBytes: Buffer.byteLength(body),
          payloadOmitted: 'too_large',
          payloadRef: {
            bucket: t.stack.names.bucket,
            key: expect.any(String),
            bytes: Buffer.byteLength(body),
            sha256: createHash('sha256').update(body).digest('hex'),
          },
        });
        expect(record.body).toBeUndefined();
        expect(details.subscribers[subscriber('recorder')]?.outcome).toBe('ok');
      }, 60_000);

      it('records a failed subscriber with its error, beside the ones that succeeded', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const failing = { ...(payload as object), forgebridge_recorder_fail: true };
        const delivery = signDelivery(t.stack.secret, name, failing);
        expect((await t.send(delivery)).status).toBe(202);
        const details = await logged(
          delivery.id,
          (found) =>
            found.subscribers[subscriber('recorder')] !== undefined &&
            found.subscribers[subscriber('onIssuesOpened')] !== undefined,
        );
        expect(details.latest).toMatchObject({ outcome: 'published', httpStatus: 202, verdict: 'verified' });
        expect(details.subscribers[subscriber('recorder')]).toMatchObject({
          outcome: 'error',
          durationMs: expect.any(Number),
          error: { name: 'Error', message: expect.stringContaining('on purpose') },
        });
        expect(details.subscribers[subscriber('onIssuesOpened')]?.outcome).toBe('ok');
      });
    });
  });
}
