// End to end through the real local stack (serverless-offline + its EventBridge plugin, DynamoDB Local,
// s3rver, oidc-provider, the forge API): a signed delivery posted to the HTTP endpoint reaches exactly the
// subscribers whose rules match, once each. What each subscriber received is read from outside the handlers:
// their `delivery received` log lines, and the local stage's recorder (a digest of each payload it resolved).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { sampleDelivery, signDelivery } from '../../../../local-stack/sample-deliveries.js';
import { digest, type TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function routingSuite(stack: () => TestStack): void {
  describe('routing: routing to the subscribers', () => {
    let t: TestStack;

    beforeAll(() => {
      t = stack();
    });

    describe('local stack: rule forms', () => {
      it('delivers issues.opened to the one-action, every-action (detail.event and prefix) and catch-all rules once each', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const posted = await t.post(name, payload);
        expect(posted.status).toBe(202);
        expect(posted.body).toEqual({ delivery: posted.id });
        const expected = { onIssuesOpened: 1, onIssues: 1, onIssuesPrefix: 1, onEverything: 1 };
        await t.waitFor(
          () => Object.keys(t.receivedBy(posted.id)).length >= 4 && t.recorded(posted.id).length >= 1,
        );
        t.holds(() => expect(t.receivedBy(posted.id)).toEqual(expected));
        const received = t.received('onEverything').find((entry) => entry.delivery === posted.id);
        expect(received).toMatchObject({
          event: 'issues',
          action: 'opened',
          detailType: 'issues.opened',
          claimCheck: false,
        });
        t.holds(() => expect(t.recorded(posted.id)).toHaveLength(1));
        const recorded = t.recorded(posted.id);
        expect(recorded[0]).toMatchObject({ detailType: 'issues.opened', claimCheck: false });
        expect(recorded[0]?.sha256).toBe(digest(payload));
      });

      it('lets the example subscriber call the forge API with a token from the store', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const posted = await t.post(name, payload);
        expect(posted.status).toBe(202);
        await t.waitFor(() => t.forgeApiCalls(posted.id).length >= 1);
        const issue = payload as { issue: { number: number }; repository: { full_name: string } };
        expect(t.forgeApiCalls(posted.id)).toEqual([
          {
            delivery: posted.id,
            status: 200,
            title: `Issue ${issue.issue.number} of ${issue.repository.full_name}`,
          },
        ]);
        const calls = t.stack.forgeApi
          .requests()
          .filter(
            (call) => call.path === `/repos/${issue.repository.full_name}/issues/${issue.issue.number}`,
          );
        expect(calls.length).toBeGreaterThanOrEqual(1);
        for (const call of calls) expect(call).toMatchObject({ status: 200, clientId: 'forgebridge-local' });
      });

      it('delivers another issues action to the every-action and catch-all rules, not the one-action rule', async () => {
        const { name, payload } = sampleDelivery('issues.labeled');
        const posted = await t.post(name, payload);
        expect(posted.status).toBe(202);
        await t.waitFor(() => Object.keys(t.receivedBy(posted.id)).length >= 3);
        t.holds(() =>
          expect(t.receivedBy(posted.id)).toEqual({ onIssues: 1, onIssuesPrefix: 1, onEverything: 1 }),
        );
      });

      it('delivers push (an event without actions) to the push and catch-all rules only', async () => {
        const { name, payload } = sampleDelivery('push');
        const posted = await t.post(name, payload);
        expect(posted.status).toBe(202);
        await t.waitFor(() => Object.keys(t.receivedBy(posted.id)).length >= 2);
        t.holds(() => expect(t.receivedBy(posted.id)).toEqual({ onPush: 1, onEverything: 1 }));
        const received = t.received('onPush').find((entry) => entry.delivery === posted.id);
        expect(received).toMatchObject({ event: 'push', detailType: 'push' });
        expect(received?.action).toBeUndefined();
      });

      it('delivers issue_comment.created to the catch-all only: it matches none of the issues rules', async () => {
        const { name, payload } = sampleDelivery('issue_comment.created');
        const posted = await t.post(name, payload);
        expect(posted.status).toBe(202);
        await t.waitFor(() => t.receivedBy(posted.id).onEverything === 1);
        t.holds(() => expect(t.receivedBy(posted.id)).toEqual({ onEverything: 1 }));
      });
    });

    describe('local stack: dedupe and verification', () => {
      it('answers a redelivery with the same id 200 duplicate and publishes nothing new', async () => {
        const { name, payload } = sampleDelivery('push');
        const first = await t.post(name, payload);
        expect(first.status).toBe(202);
        await t.waitFor(() => Object.keys(t.receivedBy(first.id)).length >= 2);
        const again = await t.post(name, payload, { id: first.id });
        expect(again.status).toBe(200);
        expect(again.body).toEqual({ duplicate: true });
        t.holds(() => expect(t.receivedBy(first.id)).toEqual({ onPush: 1, onEverything: 1 }));
      });

      it('answers a bad signature 401 and publishes nothing', async () => {
        const { name, payload } = sampleDelivery('push');
        const posted = await t.post(name, payload, { secret: 'not-the-secret' });
        expect(posted.status).toBe(401);
        expect(posted.body).toEqual({
          error: { code: 'invalid_signature', message: 'signature does not match the body' },
        });
        expect(JSON.stringify(posted.body)).not.toContain(t.stack.secret);
        // The same id with the right signature is still new: the rejected one left no dedupe record.
        const good = await t.post(name, payload, { id: posted.id });
        expect(good.status).toBe(202);
        await t.waitFor(() => Object.keys(t.receivedBy(posted.id)).length >= 2);
        t.holds(() => expect(t.receivedBy(posted.id)).toEqual({ onPush: 1, onEverything: 1 }));
      });

      it('answers a delivery without a delivery id 400 and publishes nothing', async () => {
        const { name, payload } = sampleDelivery('push');
        // A payload no other delivery has: the recorder (it receives everything) would show it by its digest.
        const marked = { ...(payload as Record<string, unknown>), marker: randomUUID() };
        const delivery = signDelivery(t.stack.secret, name, marked);
        delete delivery.headers['x-forge-delivery'];
        const posted = await t.send(delivery);
        expect(posted.status).toBe(400);
        expect(posted.body).toMatchObject({
          error: { code: expect.any(String), message: expect.stringContaining('deliver') },
        });
        t.holds(() => expect(t.recorded().filter((entry) => entry.sha256 === digest(marked))).toEqual([]));
      });
    });

    describe('local stack: claim check', () => {
      it('carries a 2 MB delivery whole through S3 to every matching subscriber', async () => {
        const { name, payload } = sampleDelivery('issues.opened');
        const large = structuredClone(payload) as { issue: { body: string } };
        large.issue.body = 'forgebridge '.repeat(Math.ceil((2 * 1024 * 1024) / 12));
        const body = JSON.stringify(large);
        expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
        const posted = await t.post(name, large, { body });
        expect(posted.status).toBe(202);
        await t.waitFor(
          () => Object.keys(t.receivedBy(posted.id)).length >= 4 && t.recorded(posted.id).length >= 1,
          { timeoutMs: 30_000 },
        );
        t.holds(() =>
          expect(t.receivedBy(posted.id)).toEqual({
            onIssuesOpened: 1,
            onIssues: 1,
            onIssuesPrefix: 1,
            onEverything: 1,
          }),
        );
        // Each subscriber logs its line only after resolveDelivery checked the S3 object against the event's
        // `payloadRef` (bytes and SHA-256); the recorder shows that object is the payload that was sent.
        const received = t.received().filter((entry) => entry.delivery === posted.id);
        expect(received).toHaveLength(4);
        for (const entry of received) expect(entry.claimCheck).toBe(true);
        t.holds(() => expect(t.recorded(posted.id)).toHaveLength(1));
        const recorded = t.recorded(posted.id);
        expect(recorded[0]).toMatchObject({ claimCheck: true, bytes: Buffer.byteLength(body) });
        expect(recorded[0]?.sha256).toBe(digest(large));
      });

      it('carries a push over the entry limit through S3 to the push rule and the catch-all', async () => {
        const { name, payload } = sampleDelivery('push');
        const large = { ...(payload as Record<string, unknown>), padding: 'x'.repeat(1024 * 1024) };
        const posted = await t.post(name, large);
        expect(posted.status).toBe(202);
        await t.waitFor(
          () => Object.keys(t.receivedBy(posted.id)).length >= 2 && t.recorded(posted.id).length >= 1,
          {
            timeoutMs: 30_000,
          },
        );
        t.holds(() => expect(t.receivedBy(posted.id)).toEqual({ onPush: 1, onEverything: 1 }));
        for (const entry of t.received().filter((line) => line.delivery === posted.id)) {
          expect(entry.claimCheck).toBe(true);
        }
        expect(t.recorded(posted.id)[0]?.sha256).toBe(digest(large));
      });
    });

    describe('local stack: bus failure', () => {
      const logLines = () => {
        if (t.stack.logFile === undefined) throw new Error('the test stack writes no log file');
        return readFileSync(t.stack.logFile, 'utf8').split('\n');
      };
      /** The retrier's queue metric lines (embedded metric format) from line `from` of osls offline's log on. */
      const queueMetrics = (from: number) =>
        logLines()
          .slice(from)
          .filter((line) => line.startsWith('{') && line.includes('"QueueDepth"'))
          .flatMap((line) => {
            try {
              return [
                JSON.parse(line) as {
                  QueueDepth: number;
                  QueueOldestAgeSeconds: number;
                  QueueStatsFailed?: number;
                },
              ];
            } catch {
              // the line being written
              return [];
            }
          });

      it('queues deliveries while the bus is unreachable (202 queued); the retrier reports them waiting, and publishes each exactly once when it is back', async () => {
        const proxy = t.stack.busProxy;
        if (proxy === undefined) throw new Error('the stack was started without a bus proxy');
        const { name, payload } = sampleDelivery('push');
        const ids: [string, string] = [randomUUID(), randomUUID()];
        await proxy.stop();
        let queued: Awaited<ReturnType<TestStack['post']>>[];
        let redelivered: Awaited<ReturnType<TestStack['post']>>;
        try {
          queued = await Promise.all(ids.map((id) => t.post(name, payload, { id })));
          const mark = logLines().length;
          // The forge's redelivery (or a "Redeliver" press) while the bus is still down: kept once already.
          redelivered = await t.post(name, payload, { id: ids[0] });
          for (const id of ids) expect(t.receivedBy(id)).toEqual({});
          // While they wait, a run of the retrier counts them and reads the oldest one's age (queue.stats(): a Query
          // and a BatchGetItem of the dedupe table, which its role must allow: test/iam): the queue-age alarm's data.
          await t.waitFor(
            () =>
              queueMetrics(mark).some(
                (line) =>
                  line.QueueDepth >= 2 &&
                  line.QueueOldestAgeSeconds >= 0 &&
                  line.QueueStatsFailed === undefined,
              ),
            { timeoutMs: 60_000 },
          );
        } finally {
          await proxy.start();
        }
        expect(queued.map((answer) => [answer.status, answer.body])).toEqual(
          ids.map((id) => [202, { delivery: id, queued: true }]),
        );
        expect(redelivered.status).toBe(200);
        expect(redelivered.body).toEqual({ duplicate: true });

        // No redelivery at all: the local stack's retrier (every 2 s through serverless-offline) publishes them.
        await t.waitFor(() => ids.every((id) => Object.keys(t.receivedBy(id)).length >= 2), {
          timeoutMs: 90_000,
        });
        t.holds(() => {
          for (const id of ids) expect(t.receivedBy(id), id).toEqual({ onPush: 1, onEverything: 1 });
        });
        const again = await t.post(name, payload, { id: ids[1] });
        expect(again.body).toEqual({ duplicate: true });
      });
    });

    describe('local stack: token refresh', () => {
      it('keeps a client-credentials token in the token table that the forge API accepts', async () => {
        // The scheduled function, invoked now through serverless-offline's Lambda API.
        const response = await fetch(
          `http://127.0.0.1:${t.stack.ports.lambda}/2015-03-31/functions/forgebridge-${t.stack.stage}-refresh/invocations`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
        );
        expect(response.status).toBe(200);
        const run = (await response.json()) as { failed: number; reports: { key: string; status: string }[] };
        expect(run.failed).toBe(0);
        expect(run.reports).toEqual([
          expect.objectContaining({
            key: 'forge#forgebridge-local#forge%3Aread',
            status: expect.stringMatching(/^(fresh|refreshed)$/),
          }),
        ]);

        const dynamodb = DynamoDBDocumentClient.from(
          new DynamoDBClient({
            endpoint: t.stack.endpoints.dynamodb,
            region: 'us-east-1',
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          }),
        );
        const { Item } = await dynamodb.send(
          new GetCommand({
            TableName: t.stack.names.tokenTable,
            Key: { pk: 'forge#forgebridge-local#forge%3Aread' },
          }),
        );
        dynamodb.destroy();
        const stored = Item?.token as { access_token?: string; expires_at?: number } | undefined;
        expect(typeof stored?.access_token).toBe('string');
        expect(stored?.expires_at).toBeGreaterThan(Date.now() / 1000);
        const api = await fetch(`${t.stack.forgeApi.url}/repos/octo/hello/issues/1`, {
          headers: { authorization: `Bearer ${stored?.access_token}` },
        });
        expect(api.status).toBe(200);
        const forged = await fetch(`${t.stack.forgeApi.url}/repos/octo/hello/issues/1`, {
          headers: { authorization: `Bearer ${stored?.access_token}x` },
        });
        expect(forged.status).toBe(401);
      });
    });
  });
}
