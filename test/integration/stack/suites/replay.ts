// `forgebridge replay --since … --subscriber onEverything` against the whole local stack, as an operator recovers
// from a bad deploy: deliveries over three events (issues.opened, push, issue_comment.created) go through the real
// ingest and bus; for 40% of them the catch-all subscriber `onEverything` fails (the example app's failure switch,
// a test aid of the local stack only) while every other subscriber takes them. With the switch off again, the
// dry run counts exactly the failed ones; the replay sends those to onEverything alone, through serverless-offline's
// Lambda API: it logs each once, no other subscriber runs again, the delivery log then shows it `ok` for each, and
// a second dry run finds 0. FORGEBRIDGE_E2E_REPLAY_FULL=1 runs the figures: 300 deliveries, 120 failing.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sampleDelivery } from '../../../../local-stack/sample-deliveries.js';
import { cleanCliEnv, runCli } from '../../../helpers/cli.js';
import type { TestStack } from '../../../helpers/stack.js';

const FULL = process.env.FORGEBRIDGE_E2E_REPLAY_FULL === '1';
const TOTAL = FULL ? 300 : 60;
// Events the ordered subscriber does not take (it handles one pull request's deliveries at a time, 300 ms each).
const EVENTS = ['issues.opened', 'push', 'issue_comment.created'] as const;
const AT_ONCE = 10;

/** Runs in the shared local stack (../local-stack.test.ts). */
export function replaySuite(stack: () => TestStack): void {
  describe('replay --since: what one subscriber missed, to it alone', () => {
    let t: TestStack;
    beforeAll(() => {
      t = stack();
    });

    const cli = (args: string[]) =>
      runCli(args, {
        ...cleanCliEnv(),
        FORGEBRIDGE_DYNAMODB_ENDPOINT: t.stack.endpoints.dynamodb,
        FORGEBRIDGE_DELIVERIES_TABLE: t.stack.names.deliveriesTable,
        FORGEBRIDGE_LAMBDA_ENDPOINT: t.stack.endpoints.lambda,
      });

    /** Posts deliveries n of [from, to), AT_ONCE at a time, each event in turn; resolves with their ids, by n. */
    const post = async (from: number, to: number): Promise<string[]> => {
      const ids: string[] = [];
      let next = from;
      const sender = async () => {
        while (next < to) {
          const n = next++;
          const { name, payload } = sampleDelivery(EVENTS[n % EVENTS.length] as string);
          const id = randomUUID();
          for (let attempt = 1; ; attempt++) {
            try {
              const posted = await t.post(name, payload, { id });
              if (posted.status === 202 || (attempt > 1 && posted.status === 200)) break;
              if (attempt >= 3)
                throw new Error(`delivery ${n}: ${posted.status} ${JSON.stringify(posted.body)}`);
            } catch (error) {
              // A connection reset before any answer: sent again with the same id, as a forge would.
              if (attempt >= 3) throw error;
            }
          }
          ids[n - from] = id;
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, sender));
      return ids;
    };

    it(`${TOTAL} deliveries, onEverything failing for ${(TOTAL * 2) / 5}: the dry run counts them, the replay sends them to it alone, once each; then 0`, async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const okIds = await post(0, (TOTAL * 3) / 5);
      await t.waitFor(() => okIds.every((id) => (t.receivedBy(id).onEverything ?? 0) >= 1), {
        timeoutMs: 120_000,
      });
      writeFileSync(t.stack.exampleFailFile, JSON.stringify({ fail: ['onEverything'] }));
      let failedIds: string[];
      try {
        failedIds = await post((TOTAL * 3) / 5, TOTAL);
        // Every other subscriber took them; the recorder saw each (so onEverything was invoked too, and failed).
        await t.waitFor(() => failedIds.every((id) => t.recorded(id).length >= 1), { timeoutMs: 120_000 });
        const dry = async () =>
          JSON.parse(
            (await cli(['replay', '--since', since, '--subscriber', 'onEverything', '--dry-run', '--json']))
              .stdout,
          ) as {
            selected: number;
            sample: { deliveryId: string }[];
          };
        // The subscriber's reports land after its invocation: wait until all are in the log.
        const deadline = Date.now() + 60_000;
        let counted = await dry();
        while (counted.selected < failedIds.length && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          counted = await dry();
        }
        expect(counted.selected).toBe(failedIds.length);
        expect(failedIds).toEqual(expect.arrayContaining(counted.sample.map((d) => d.deliveryId)));
      } finally {
        // The fix is deployed.
        rmSync(t.stack.exampleFailFile, { force: true });
      }
      for (const id of failedIds) expect(t.receivedBy(id).onEverything ?? 0).toBe(0);
      // The other subscribers are done with them (the ordered one takes its pull requests one at a time).
      const others = (n: number) =>
        n % EVENTS.length === 0
          ? ['onIssuesOpened', 'onIssues', 'onIssuesPrefix']
          : n % EVENTS.length === 1
            ? ['onPush']
            : [];
      await t.waitFor(
        () =>
          failedIds.every((id, index) =>
            others((TOTAL * 3) / 5 + index).every((key) => (t.receivedBy(id)[key] ?? 0) >= 1),
          ),
        { timeoutMs: 120_000 },
      );
      const before = new Map(failedIds.map((id) => [id, { ...t.receivedBy(id) }]));
      const recordedBefore = new Map(failedIds.map((id) => [id, t.recorded(id).length]));

      const started = Date.now();
      const replay = await cli([
        'replay',
        '--since',
        since,
        '--subscriber',
        'onEverything',
        '--outcome',
        'error',
        '--yes',
        '--json',
        '--rate',
        '50',
      ]);
      const replayMs = Date.now() - started;
      expect(replay.stderr).toBe('');
      expect(replay.code).toBe(0);
      expect(JSON.parse(replay.stdout)).toMatchObject({
        subscriber: `forgebridge-${t.stack.stage}-onEverything`,
        selected: failedIds.length,
        sent: failedIds.length,
        failed: 0,
      });
      await t.waitFor(() => failedIds.every((id) => (t.receivedBy(id).onEverything ?? 0) >= 1));
      for (const id of failedIds) {
        const now = t.receivedBy(id);
        // onEverything once; every other subscriber (and the recorder) as before: not run again.
        expect(now.onEverything, id).toBe(1);
        expect({ ...now, onEverything: undefined }).toEqual({ ...before.get(id), onEverything: undefined });
        expect(t.recorded(id)).toHaveLength(recordedBefore.get(id) as number);
      }
      const again = await cli([
        'replay',
        '--since',
        since,
        '--subscriber',
        'onEverything',
        '--dry-run',
        '--json',
      ]);
      expect(JSON.parse(again.stdout)).toMatchObject({ selected: 0 });
      console.info(
        `replay --since: ${TOTAL} deliveries, ${failedIds.length} failed by onEverything, replayed to it alone in ${replayMs} ms (CLI process included)`,
      );
      t.holds(() => {
        for (const id of failedIds) expect(t.receivedBy(id).onEverything, id).toBe(1);
      });
    }, 300_000);
  });
}
