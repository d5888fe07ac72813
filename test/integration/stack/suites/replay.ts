// `forgebridge replay --since … --subscriber onEverything` against the whole local stack, as an operator recovers
// from a bad deploy: deliveries over three events (issues.opened, push, issue_comment.created) go through the real
// ingest and bus; for 40% of them the catch-all subscriber `onEverything` fails (the example app's failure switch,
// a test aid of the local stack only) while every other subscriber takes them. With the switch off again, the
// dry run counts exactly the failed ones; the replay sends those to onEverything alone, through serverless-offline's
// Lambda API: it logs each once, no other subscriber runs again, the delivery log then shows it `ok` for each, and
// a second dry run finds 0. FORGEBRIDGE_E2E_REPLAY_FULL=1 runs the figures: 300 deliveries, 120 failing.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeliveryLog } from '../../../../lib/aws/delivery-log/index.js';
import { sampleDelivery } from '../../../../local-stack/sample-deliveries.js';
import { cleanCliEnv, runCli } from '../../../helpers/cli.js';
import type { TestStack } from '../../../helpers/stack.js';

const FULL = process.env.FORGEBRIDGE_E2E_REPLAY_FULL === '1';
const TOTAL = FULL ? 300 : 60;
// Events the ordered subscriber does not take (it handles one pull request's deliveries at a time, 300 ms each).
const EVENTS = ['issues.opened', 'push', 'issue_comment.created'] as const;
const AT_ONCE = 10;
/** Deliveries of the bus case, every one failed by onEverything. */
const BUS_TOTAL = 9;
/** The local stage's recording subscriber (it takes every delivery and reports into the log). */
const RECORDER_KEY = 'recorder';

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
        FORGEBRIDGE_EVENTBRIDGE_ENDPOINT: t.stack.endpoints.eventBridge,
        FORGEBRIDGE_STATE_FILE: '/nonexistent/forgebridge-state.json',
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
        // The local bus retries a failed target: the switch stays on until every retry failed too, or one would
        // reach onEverything after the fix below (and the replay would find fewer).
        await t.waitFor(() => failedIds.every((id) => t.attemptsUsedUp(id, 'onEverything')), {
          timeoutMs: 120_000,
        });
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

    it('without --subscriber: the failed ones go on the bus again, onEverything runs each once, the reporting subscribers skip them', async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const name = (key: string) => `forgebridge-${t.stack.stage}-${key}`;
      // The subscribers that report into the delivery log besides onEverything, and those that do not (the
      // examples onIssues, onIssuesPrefix and onPush have no grant on it): the first know they took a delivery.
      const others = (n: number) =>
        n % EVENTS.length === 0 ? ['onIssuesOpened', RECORDER_KEY] : [RECORDER_KEY];
      const unreported = (n: number) =>
        n % EVENTS.length === 0 ? ['onIssues', 'onIssuesPrefix'] : n % EVENTS.length === 1 ? ['onPush'] : [];
      const client = new DynamoDBClient(t.stack.dynamodb.clientConfig);
      const log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
      let failedIds: string[];
      try {
        writeFileSync(t.stack.exampleFailFile, JSON.stringify({ fail: ['onEverything'] }));
        try {
          failedIds = await post(0, BUS_TOTAL);
          // Every report in the log: onEverything's error, each other subscriber's ok.
          let missing = '';
          const reported = async () => {
            for (const [n, id] of failedIds.entries()) {
              const subscribers = (await log.get(id))?.subscribers ?? {};
              const outcomes = JSON.stringify(
                Object.fromEntries(Object.entries(subscribers).map(([key, report]) => [key, report.outcome])),
              );
              missing = `delivery ${n} (${id}): ${outcomes}`;
              if (subscribers[name('onEverything')]?.outcome !== 'error') return false;
              if (!others(n).every((key) => subscribers[name(key)]?.outcome === 'ok')) return false;
              if (!unreported(n).every((key) => (t.receivedBy(id)[key] ?? 0) >= 1)) return false;
            }
            return true;
          };
          const deadline = Date.now() + 120_000;
          while (!(await reported())) {
            if (Date.now() > deadline)
              throw new Error(`the subscribers did not all report in 120 s: ${missing}`);
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          // The local bus retries a failed target: the switch stays on until every retry failed too, or one would
          // reach onEverything after the fix below.
          await t.waitFor(() => failedIds.every((id) => t.attemptsUsedUp(id, 'onEverything')), {
            timeoutMs: 120_000,
          });
        } finally {
          // The fix is deployed.
          rmSync(t.stack.exampleFailFile, { force: true });
        }
        const dry = JSON.parse((await cli(['replay', '--since', since, '--dry-run', '--json'])).stdout) as {
          selected: number;
          bus: string;
          sample: { deliveryId: string; failed: string[]; ok: string[] }[];
        };
        expect(dry).toMatchObject({ selected: failedIds.length, bus: t.stack.names.bus });
        expect(dry.sample[0]?.failed).toEqual([name('onEverything')]);
        expect(dry.sample[0]?.ok).toContain(name(RECORDER_KEY));
      } finally {
        client.destroy();
      }
      for (const id of failedIds) expect(t.receivedBy(id).onEverything ?? 0).toBe(0);
      const before = new Map(failedIds.map((id) => [id, { ...t.receivedBy(id) }]));
      const recordedBefore = new Map(failedIds.map((id) => [id, t.recorded(id).length]));

      const replay = await cli(['replay', '--since', since, '--yes', '--json', '--rate', '50']);
      expect(replay.stderr).toBe('');
      expect(replay.code).toBe(0);
      expect(JSON.parse(replay.stdout)).toMatchObject({
        bus: t.stack.names.bus,
        selected: failedIds.length,
        sent: failedIds.length,
        failed: 0,
      });
      // Through the real bus: every rule that matches gets the event again; only onEverything had not taken it.
      await t.waitFor(() => failedIds.every((id) => (t.receivedBy(id).onEverything ?? 0) >= 1), {
        timeoutMs: 60_000,
      });
      const skipped = () =>
        t.stack
          .functionLogs()
          .filter(
            (record) => record.message === 'replay skipped' && failedIds.includes(record.delivery as string),
          );
      // Each subscriber that had taken a delivery says it skipped it, once.
      const expected = failedIds.reduce((sum, _, n) => sum + others(n).length, 0);
      await t.waitFor(() => skipped().length >= expected, { timeoutMs: 60_000 });
      const skippedBy = new Set(skipped().map((r) => `${r.function_name} ${r.delivery}`));
      expect(skippedBy.size).toBe(expected);
      for (const [n, id] of failedIds.entries()) {
        for (const key of others(n)) expect(skippedBy, `${key} ${id}`).toContain(`${name(key)} ${id}`);
      }
      // A subscriber that does not report cannot tell it took one: it runs again (so it must be idempotent).
      await t.waitFor(
        () => failedIds.every((id, n) => unreported(n).every((key) => (t.receivedBy(id)[key] ?? 0) >= 2)),
        { timeoutMs: 60_000 },
      );
      for (const [n, id] of failedIds.entries()) {
        const was = before.get(id) as Record<string, number>;
        const expectedNow: Record<string, number> = { ...was, onEverything: 1 };
        for (const key of unreported(n)) expectedNow[key] = (was[key] ?? 0) + 1;
        expect(t.receivedBy(id), id).toEqual(expectedNow);
        expect(t.recorded(id)).toHaveLength(recordedBefore.get(id) as number);
      }
      const again = await cli(['replay', '--since', since, '--dry-run', '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ selected: 0 });
      console.info(
        `replay --since to the bus: ${failedIds.length} deliveries onEverything failed, put on the bus again; onEverything ran each once, ${skipped().length} "replay skipped" lines from the subscribers that had taken them`,
      );
      t.holds(() => {
        for (const id of failedIds) expect(t.receivedBy(id).onEverything, id).toBe(1);
        expect(skipped()).toHaveLength(expected);
        for (const [n, id] of failedIds.entries()) {
          for (const key of unreported(n)) expect(t.receivedBy(id)[key], `${key} ${id}`).toBe(2);
        }
      });
    }, 300_000);
  });
}
