// `replay --since … --subscriber X` below the command line, against DynamoDB Local: 300 deliveries over three
// events in a real delivery log, one subscriber (the real subscriber handler, reporting into that log) failing
// for 120 of them while another took all. The selection counts 120, the replay invokes X alone with each one's
// EventBridge event (a Lambda client whose `send` runs the handler in-process), X then reports `ok` for all 120,
// and a second selection finds 0.
import { randomUUID } from 'node:crypto';
import type { InvokeCommand } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog, type DeliveryLogEntry } from '../../../lib/aws/delivery-log/index.js';
import { createSubscriberHandler } from '../../../lib/aws/handlers/subscriber.js';
import {
  type ReplaySelection,
  replayToFunction,
  selectDeliveries,
  subscriberEvent,
} from '../../../lib/cli/bulk-replay.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
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

describe('replay --since … --subscriber X (selection and send, on DynamoDB Local)', () => {
  it('selects the 120 deliveries X failed, sends each to X once, and a second selection finds 0', async () => {
    const tableName = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
    // As the local stack keeps it: with the raw bodies, which the replay sends again.
    const log = new DeliveryLog({ client: ddb.client(), tableName, storePayload: true });
    const started = Date.now() - 30 * 60_000;
    const entries = Array.from({ length: 300 }, (_, n) => entry(n, started + n * 1000));
    // X fails for every delivery of n % 5 in {0, 1}: 120 of 300, over all three events and both sources.
    const failing = new Set(entries.filter((_, n) => n % 5 < 2).map((e) => e.deliveryId as string));
    for (let index = 0; index < entries.length; index += 25) {
      await Promise.all(
        entries.slice(index, index + 25).map(async (e) => {
          expect((await log.record(e)).ok).toBe(true);
          const id = e.deliveryId as string;
          await log.recordSubscriber(id, {
            subscriber: OTHER,
            outcome: 'ok',
            durationMs: 5,
            source: e.source,
          });
          await log.recordSubscriber(id, {
            subscriber: X,
            outcome: failing.has(id) ? 'error' : 'ok',
            durationMs: 7,
            source: e.source,
            ...(failing.has(id) ? { error: { name: 'TypeError', message: 'the bad deploy' } } : {}),
          });
        }),
      );
    }
    // A duplicate request of a failing delivery: still one delivery.
    const dup = entries[0] as DeliveryLogEntry;
    await log.record({ ...dup, receivedAt: started + 400_000, outcome: 'duplicate', httpStatus: 200 });

    // By its function key: the log knows it by the function's name.
    const selection: ReplaySelection = {
      since: started - 1000,
      subscriber: ['onEverything', X],
      outcome: 'error',
    };
    const first = await selectDeliveries(log, selection);
    expect(first.selected).toHaveLength(120);
    expect(new Set(first.selected.map((d) => d.deliveryId))).toEqual(failing);
    expect(first.subscribers).toEqual(new Set([X, OTHER]));
    expect(first.subscriber).toBe(X);
    expect(first.selected[0]).toMatchObject({ error: 'TypeError: the bad deploy', outcome: 'error' });
    // Oldest first.
    const times = first.selected.map((d) => d.receivedAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Narrowed by event, by source, by window.
    expect((await selectDeliveries(log, { ...selection, event: 'push' })).selected).toHaveLength(40);
    expect((await selectDeliveries(log, { ...selection, source: 'acme' })).selected).toHaveLength(60);
    const until = started + 150 * 1000;
    expect((await selectDeliveries(log, { ...selection, until })).selected).toHaveLength(60);
    expect((await selectDeliveries(log, { ...selection, outcome: 'any' })).selected).toHaveLength(300);

    // X, fixed: the real subscriber handler, reporting into the same log under X's name.
    const received: string[] = [];
    const handler = createSubscriberHandler({
      name: X,
      env: {},
      deliveryLog: log,
      metrics: false,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      register: (events) =>
        events.onAny(({ id, payload }) => {
          expect((payload as { repository: unknown }).repository).toEqual({ full_name: 'acme/web' });
          received.push(id);
        }),
    });
    const invoked: string[] = [];
    const lambda = {
      send: async (command: InvokeCommand) => {
        invoked.push(command.input.FunctionName as string);
        const event = JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString('utf8'));
        await handler(event, lambdaContext(X));
        return { StatusCode: 200 };
      },
    };
    const run = await replayToFunction({
      lambda: lambda as never,
      functionName: X,
      deliveries: first.selected,
      ratePerSecond: 500,
      eventOf: async (delivery) => {
        const details = await log.get(delivery.deliveryId, { source: delivery.source });
        if (details === undefined) throw new Error('gone');
        return subscriberEvent(details, { hook: delivery.hook, eventSource: 'forge.webhooks' });
      },
    });
    expect(run.failures).toEqual([]);
    expect(run).toMatchObject({ sent: 120, failed: 0 });
    expect(new Set(invoked)).toEqual(new Set([X]));
    expect(received.sort()).toEqual([...failing].sort());
    const second = await selectDeliveries(log, selection);
    expect(second.selected).toEqual([]);
    // X's outcome is ok for all 120 now; the other subscriber's untouched.
    for (const id of [...failing].slice(0, 10)) {
      const details = await log.get(id, { source: entries.find((e) => e.deliveryId === id)?.source });
      expect(details?.subscribers[X]?.outcome).toBe('ok');
      expect(details?.subscribers[OTHER]?.durationMs).toBe(5);
    }
  }, 120_000);
});
