// `replay --since` without `--subscriber`, against DynamoDB Local: 60 deliveries over three events in a real
// delivery log, subscriber X (the real subscriber handler, reporting into that log) failed 24 of them while OTHER
// took all. The selection counts 24, each marked with who had taken it; put on "the bus" (a client whose `send`
// hands each entry's EventBridge event to both real handlers, as the bus's two rules would), OTHER skips every one
// and X runs each once; X then reports `ok` for all 24 and a second selection finds 0. The command run in process:
// the dry run's count as JSON, a send refused off a terminal without --yes, `--via` without a subscriber, the bus
// unreachable (every delivery counted failed, exit 1, nothing reported), no bus at all (exit 3).
import { randomUUID } from 'node:crypto';
import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { createSubscriberHandler } from '../../../lib/aws/handlers/subscriber.js';
import { type DeliveryEntry, streamEventOf } from '../../../lib/aws/internal.js';
import { deliveryEntryOf } from '../../../lib/cli/bulk-replay.js';
import { type BusSelection, replayToBus, selectForBus } from '../../../lib/cli/bus-replay.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { expectOneLineError } from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';
import { lambdaContext } from '../../helpers/lambda-context.js';

const ddb = useDynamoDbLocal();
const X = 'forgebridge-local-onEverything';
const OTHER = 'forgebridge-local-onIssuesOpened';
const EVENTS = [
  { event: 'issues', action: 'opened' },
  { event: 'push', action: undefined },
  { event: 'pull_request', action: 'opened' },
] as const;

function entry(n: number, receivedAt: number): DeliveryLogEntry {
  const { event, action } = EVENTS[n % 3] as (typeof EVENTS)[number];
  const payload = { ...(action === undefined ? {} : { action }), n, repository: { full_name: 'acme/web' } };
  return {
    receivedAt,
    deliveryId: randomUUID(),
    event,
    ...(action === undefined ? {} : { action }),
    forge: 'github',
    source: n % 2 === 0 ? 'default' : 'acme',
    nativeEvent: event,
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    headers: { 'X-GitHub-Event': event },
    body: JSON.stringify(payload),
  };
}

let tableName: string;
let log: DeliveryLog;
let failing: Set<string>;
let started: number;

beforeAll(async () => {
  tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
  log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
  started = Date.now() - 30 * 60_000;
  const entries = Array.from({ length: 60 }, (_, n) => entry(n, started + n * 1000));
  failing = new Set(entries.filter((_, n) => n % 5 < 2).map((e) => e.deliveryId as string));
  await Promise.all(
    entries.map(async (e) => {
      expect((await log.record(e)).ok).toBe(true);
      const id = e.deliveryId as string;
      await log.recordSubscriber(id, { subscriber: OTHER, outcome: 'ok', durationMs: 5, source: e.source });
      await log.recordSubscriber(id, {
        subscriber: X,
        outcome: failing.has(id) ? 'error' : 'ok',
        durationMs: 7,
        source: e.source,
        ...(failing.has(id) ? { error: { name: 'TypeError', message: 'the bad deploy' } } : {}),
      });
    }),
  );
  // A duplicate request of a failing delivery: still one delivery.
  const dup = entries[0] as DeliveryLogEntry;
  await log.record({ ...dup, receivedAt: started + 100_000, outcome: 'duplicate', httpStatus: 200 });
}, 60_000);

const env = () => ({
  FORGEBRIDGE_DYNAMODB_ENDPOINT: ddb.endpoint,
  FORGEBRIDGE_DELIVERIES_TABLE: tableName,
  // Nothing listens on the discard port: a bus that is down.
  FORGEBRIDGE_EVENTBRIDGE_ENDPOINT: 'http://127.0.0.1:9',
  FORGEBRIDGE_STATE_FILE: '/nonexistent/forgebridge-state.json',
});

describe('replay --since without --subscriber (to the bus, on DynamoDB Local)', () => {
  it('counts what the command would put on the bus, refuses bad input and survives a bus that is down', async () => {
    const dry = await runMain(['replay', '--since', '1h', '--dry-run', '--json'], env());
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan).toMatchObject({ bus: 'forgebridge-local', outcome: 'error', selected: 24, dryRun: true });
    expect(plan.sample).toHaveLength(5);
    expect(plan.sample[0]).toMatchObject({ ok: [OTHER], failed: [X] });
    const text = await runMain(['replay', '--since', '1h', '--event', 'push', '--dry-run'], env());
    expect(text.stdout).toMatch(
      /^8 deliveries a subscriber reported error for, to put on bus forgebridge-local again/,
    );
    expect(text.stdout).toContain(`error: ${X}; ok (skip it): ${OTHER}`);
    const any = await runMain(['replay', '--since', '1h', '--outcome', 'any', '--dry-run', '--json'], env());
    expect(JSON.parse(any.stdout).selected).toBe(60);

    expectOneLineError(await runMain(['replay', '--since', '1h'], env()), 2, 'pass "--yes" to send 24');
    expectOneLineError(
      await runMain(['replay', '--since', '1h', '--via', 'invoke', '--dry-run'], env()),
      2,
      '"--via" needs "--subscriber"',
    );
    expectOneLineError(
      await runMain(['replay', '--since', '1h', '--until', '2h', '--dry-run'], env()),
      2,
      '"--until"',
    );
    expectOneLineError(
      await runMain(['replay', '--since', '1h', '--event', 'isues', '--dry-run'], env()),
      2,
      'unknown event "isues"',
    );
    const { FORGEBRIDGE_EVENTBRIDGE_ENDPOINT: _, ...noBus } = env();
    expectOneLineError(
      await runMain(['replay', '--since', '1h', '--dry-run'], noBus),
      3,
      'no EventBridge endpoint',
    );

    const down = await runMain(['replay', '--since', '1h', '--yes', '--rate', '500', '--json'], env());
    expect(down.code).toBe(1);
    const run = JSON.parse(down.stdout);
    expect(run).toMatchObject({ selected: 24, sent: 0, failed: 24 });
    expect(run.failures[0].error).toMatch(/^PutEvents failed: /);
    // As text: the summary, the first failures named, and how to go on.
    const downText = await runMain(
      ['replay', '--since', '1h', '--event', 'push', '--yes', '--rate', '500'],
      env(),
    );
    expect(downText.code).toBe(1);
    expect(downText.stdout).toMatch(
      /^replayed with failures {2}0 of 8 to bus forgebridge-local {2}run [0-9a-f-]{36}, \d+\.\d s, 8 failed$/m,
    );
    expect(downText.stdout).toMatch(/^ {2}\S+ {2}PutEvents failed: /m);
    expect(downText.stdout).toContain(
      'run the same command again: the subscribers that took a delivery skip it',
    );
    const none = await runMain(['replay', '--since', '1h', '--source', 'nowhere', '--json'], env());
    expect(JSON.parse(none.stdout)).toMatchObject({ selected: 0, source: 'nowhere', dryRun: false });
    // Nothing was taken: the same 24 are still selected.
    expect(await selectForBus(log, { since: started - 1000, outcome: 'error' })).toHaveLength(24);
  }, 60_000);

  it('selects the 24 X failed, marked with who took them; X runs each once, OTHER skips all; then 0', async () => {
    const selection: BusSelection = { since: started - 1000, outcome: 'error' };
    const first = await selectForBus(log, selection);
    expect(first).toHaveLength(24);
    expect(new Set(first.map((d) => d.deliveryId))).toEqual(failing);
    for (const delivery of first) expect(delivery).toMatchObject({ ok: [OTHER], failed: [X] });
    const times = first.map((d) => d.receivedAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(await selectForBus(log, { ...selection, source: 'acme' })).toHaveLength(12);
    expect(await selectForBus(log, { ...selection, event: 'issues.opened' })).toHaveLength(8);
    expect(await selectForBus(log, { ...selection, outcome: 'any' })).toHaveLength(60);

    const handled: Record<string, string[]> = { [X]: [], [OTHER]: [] };
    const skipped: string[] = [];
    const handlerOf = (name: string) =>
      createSubscriberHandler({
        name,
        env: {},
        deliveryLog: log,
        metrics: false,
        logger: {
          info: (message: string, fields?: { delivery?: string }) => {
            if (message === 'replay skipped') skipped.push(`${name} ${fields?.delivery}`);
          },
          warn: () => undefined,
          error: () => undefined,
        },
        register: (events) => events.onAny(({ id }) => void handled[name]?.push(id)),
      });
    const handlers = [X, OTHER].map((name) => ({ name, handler: handlerOf(name) }));
    const buses: string[] = [];
    const bus = {
      send: async (command: PutEventsCommand) => {
        const entries = command.input.Entries as DeliveryEntry[];
        expect(entries.length).toBeLessThanOrEqual(10);
        for (const entry of entries) {
          buses.push(String(entry.EventBusName));
          const event = streamEventOf(entry, new Date());
          for (const { name, handler } of handlers) await handler(event as never, lambdaContext(name));
        }
        return { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: randomUUID() })) };
      },
    };
    const run = await replayToBus({
      eventBridge: bus as never,
      busName: 'forgebridge-local',
      deliveries: first,
      run: 'run-1',
      ratePerSecond: 500,
      entryOf: async (delivery) => {
        const details = await log.get(delivery.deliveryId, { source: delivery.source });
        if (details === undefined) throw new Error('gone');
        return deliveryEntryOf(details, { hook: delivery.hook, eventSource: 'forge.webhooks' });
      },
    });
    expect(run.failures).toEqual([]);
    expect(run).toMatchObject({ sent: 24, failed: 0 });
    expect(new Set(buses)).toEqual(new Set(['forgebridge-local']));
    expect(handled[X]?.sort()).toEqual([...failing].sort());
    expect(handled[OTHER]).toEqual([]);
    expect(skipped.sort()).toEqual([...failing].map((id) => `${OTHER} ${id}`).sort());
    // X reported ok for every one: none is selected again.
    expect(await selectForBus(log, selection)).toEqual([]);
  }, 120_000);
});
