// The forge API governor end to end: a burst of opened pull requests, signed for the github source, becomes one
// comment each from the example commenter (several instances at once), paced under the local forge API stand-in's
// secondary limits (GitHub's, scaled down: 10 in flight, 8 content-creating requests in any 6 s). Read from outside
// the functions: the stand-in's record of the calls, the commenter's log lines, the delivery log.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeliveryLog } from '../../../../lib/aws/index.js';
import { forgeSample, signForgeDelivery } from '../../../../local-stack/sample-deliveries.js';
import type { TestStack } from '../../../helpers/stack.js';

const BURST = 8;

/** Runs in the shared local stack (../local-stack.test.ts). */
export function governorSuite(stack: () => TestStack): void {
  describe('forge API governor: a burst of opened pull requests, one comment each, under the forge limits', () => {
    let t: TestStack;
    let client: DynamoDBClient;
    const repository = `governor-${randomUUID().slice(0, 8)}/bot`;

    beforeAll(() => {
      t = stack();
      client = new DynamoDBClient(t.stack.dynamodb.clientConfig);
    });
    afterAll(() => client?.destroy());

    it(`${BURST} at once: every comment made once, no limit answer, never more in flight than the limit`, async () => {
      const sample = forgeSample('github', 'pull_request.opened');
      const github = t.source('github');
      const ids = await Promise.all(
        Array.from({ length: BURST }, async (_, index) => {
          const payload = structuredClone(sample.payload) as {
            number: number;
            pull_request: { number: number };
            repository: { full_name: string };
          };
          payload.number = index + 1;
          payload.pull_request.number = index + 1;
          payload.repository.full_name = repository;
          const delivery = signForgeDelivery(github.secret, 'github', sample.nativeName, payload);
          const response = await fetch(github.url, {
            method: 'POST',
            headers: delivery.headers,
            body: delivery.body,
          });
          expect(response.status, await response.text()).toBe(202);
          return delivery.id;
        }),
      );
      const written = () =>
        t.stack
          .functionLogs()
          .filter(
            (line) =>
              line.message === 'comment written' &&
              line.function_name === `forgebridge-${t.stack.stage}-onPullRequestOpened` &&
              ids.includes(line.delivery as string),
          );
      // 8 in any 6 s, paced by the governor a notch under (config/local.yml: 7 in 6 s): about 7 s for 8.
      await t.waitFor(() => written().length >= BURST, { timeoutMs: 90_000 });
      const comments = t.stack.forgeApi
        .requests()
        .filter((call) => call.method === 'POST' && call.path.startsWith(`/repos/${repository}/issues/`));
      t.holds(() => {
        expect(
          written()
            .map((line) => line.delivery)
            .sort(),
        ).toEqual([...ids].sort());
        // Not one limit answer: every call waited its turn instead.
        expect(comments.map((call) => call.status)).toEqual(Array(BURST).fill(201));
      });
      expect(t.stack.forgeApi.limitStats().maxConcurrent).toBeLessThanOrEqual(10);
      // Spread over the budget's pace (7 in any 6 s, one a second): the 8 span more than 6 s.
      const at = comments.map((call) => call.at).sort((a, b) => a - b);
      expect((at.at(-1) as number) - (at[0] as number)).toBeGreaterThan(6_000);
      // The delivery log says how long the commenter's calls waited.
      const log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
      const name = `forgebridge-${t.stack.stage}-onPullRequestOpened`;
      const read = () =>
        Promise.all(ids.map(async (id) => (await log.get(id, { source: 'github' }))?.subscribers[name]));
      // The report is written once the handler has returned, after its `comment written` line: read until it is.
      const outcomes = await vi.waitFor(
        async () => {
          const now = await read();
          if (!now.every((outcome) => outcome !== undefined)) throw new Error('a report is not in yet');
          return now;
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(outcomes.map((outcome) => outcome?.outcome)).toEqual(Array(BURST).fill('ok'));
      expect(outcomes.filter((outcome) => (outcome?.forgeWaitMs ?? 0) > 1_000).length).toBeGreaterThan(0);
    });
  });
}
