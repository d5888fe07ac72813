// The parts of `replay --since` that need no log: the window and flag checks (one clear line, exit 2), the pacing
// of the sends on a fake clock, a failed invocation counted without stopping the run, the event a subscriber is
// handed (the same detail the ingest publishes), and the terminal's progress line.
import { randomUUID } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryDetails } from '../../../lib/aws/internal.js';
import { buildEventEntry } from '../../../lib/aws/publish/index.js';
import {
  checkWindow,
  progressLine,
  replayToFunction,
  type SelectedDelivery,
  subscriberEvent,
} from '../../../lib/cli/bulk-replay.js';
import { parseSelection, subscriberNames } from '../../../lib/cli/commands/replay-bulk.js';
import { CliError, ExitCodes } from '../../../lib/cli/errors.js';

const NOW = Date.parse('2026-12-05T12:00:00Z');
const base = { since: '2h', outcome: 'error', subscriber: 'onEverything', rate: 10 };

function usage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCodes.usage);
    return (error as Error).message;
  }
  throw new Error('no error');
}

describe('parseSelection()', () => {
  it('reads the window, the event and the subscriber as its function on the stage', () => {
    expect(parseSelection({ ...base, until: '1h', event: 'issues.opened', source: 'acme' }, NOW)).toEqual({
      since: NOW - 2 * 3_600_000,
      until: NOW - 3_600_000,
      source: 'acme',
      event: 'issues.opened',
      subscriber: ['onEverything', 'forgebridge-local-onEverything'],
      outcome: 'error',
    });
    expect(parseSelection({ ...base, stage: 'prod' }, NOW).subscriber).toEqual([
      'onEverything',
      'forgebridge-prod-onEverything',
    ]);
    expect(subscriberNames('forgebridge-prod-onPush', 'dev')).toEqual(['forgebridge-prod-onPush']);
  });

  it('refuses each bad flag in one line, exit 2', () => {
    expect(usage(() => parseSelection({ ...base, since: '1h', until: '2h' }, NOW))).toBe(
      '"--until" (2026-12-05T10:00:00.000Z) must be after "--since" (2026-12-05T11:00:00.000Z)',
    );
    expect(usage(() => parseSelection({ ...base, event: 'isues.opened' }, NOW))).toMatch(
      /^unknown event "isues.opened" \(did you mean "issues.opened"\?\)$/,
    );
    expect(usage(() => parseSelection({ ...base, outcome: 'failed' }, NOW))).toBe(
      '"--outcome" must be one of "error", "any"',
    );
    expect(usage(() => parseSelection({ ...base, subscriber: undefined }, NOW))).toMatch(
      /"--subscriber" is required/,
    );
    expect(usage(() => parseSelection({ ...base, subscriber: 'a b' }, NOW))).toMatch(
      /"--subscriber" must be/,
    );
    expect(usage(() => parseSelection({ ...base, since: 'yesterday' }, NOW))).toMatch(/"--since" must be/);
    expect(usage(() => checkWindow(NOW + 3_600_000, undefined, NOW))).toMatch(/is in the future$/);
  });
});

const deliveries = (count: number): SelectedDelivery[] =>
  Array.from({ length: count }, (_, n) => ({
    deliveryId: `d-${n}`,
    event: 'push',
    receivedAt: n,
    outcome: 'error' as const,
  }));

describe('replayToFunction()', () => {
  const lambda = mockClient(LambdaClient);
  afterEach(() => lambda.reset());

  it('starts at most `ratePerSecond` invocations a second, each RequestResponse with its event', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200 });
    // A clock of its own, so a busy machine cannot move the figures: a sleep wakes at the time it asked for, in
    // the order the sleeps were asked (a timer never fires early).
    let clock = 1_000;
    const starts: number[] = [];
    const run = await replayToFunction({
      lambda: new LambdaClient({ region: 'us-east-1' }),
      functionName: 'forgebridge-local-onPush',
      deliveries: deliveries(25),
      ratePerSecond: 100,
      concurrency: 4,
      now: () => clock,
      sleep: async (ms) => {
        const wake = clock + ms;
        await new Promise<void>((resolve) => setImmediate(resolve));
        clock = Math.max(clock, wake);
      },
      eventOf: async (delivery) => {
        starts.push(clock);
        return { id: delivery.deliveryId };
      },
    });
    expect(run).toMatchObject({ sent: 25, failed: 0 });
    // 100 a second: the n-th start no sooner than n intervals of 10 ms after the first, so no second holds more
    // than 100.
    const sorted = [...starts].sort((a, b) => a - b);
    expect(sorted[0]).toBe(1_000);
    for (const [n, at] of sorted.entries()) expect(at).toBeGreaterThanOrEqual(1_000 + n * 10);
    expect(run.durationMs).toBeGreaterThanOrEqual(240);
    const calls = lambda.commandCalls(InvokeCommand);
    expect(calls).toHaveLength(25);
    expect(calls[0]?.args[0].input).toMatchObject({
      FunctionName: 'forgebridge-local-onPush',
      InvocationType: 'RequestResponse',
    });
    expect(
      calls
        .map((call) => JSON.parse(Buffer.from(call.args[0].input.Payload as Uint8Array).toString()).id)
        .sort(),
    ).toEqual(
      deliveries(25)
        .map((d) => d.deliveryId)
        .sort(),
    );
  });

  it('waits with real timers by default: no start before its turn, however late the ones before woke', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200 });
    const starts: number[] = [];
    const begun = performance.now();
    await replayToFunction({
      lambda: new LambdaClient({ region: 'us-east-1' }),
      functionName: 'forgebridge-local-onPush',
      deliveries: deliveries(12),
      ratePerSecond: 200,
      concurrency: 3,
      now: () => performance.now(),
      eventOf: async (delivery) => {
        starts.push(performance.now());
        return { id: delivery.deliveryId };
      },
    });
    // A late wake only makes a start later; a timer rounds to the millisecond, hence the 1 ms.
    const sorted = [...starts].sort((a, b) => a - b);
    for (const [n, at] of sorted.entries()) expect(at - begun).toBeGreaterThanOrEqual(n * 5 - 1);
  });

  it('counts a function error, a refused invocation and an unreadable delivery as failed, and goes on', async () => {
    lambda
      .on(InvokeCommand)
      .resolvesOnce({
        StatusCode: 200,
        FunctionError: 'Unhandled',
        Payload: Buffer.from('{"errorMessage":"boom\\nat x"}') as never,
      })
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'TooManyRequestsException' }))
      .resolves({ StatusCode: 200 });
    const progress: number[] = [];
    const run = await replayToFunction({
      lambda: new LambdaClient({ region: 'us-east-1' }),
      functionName: 'f',
      deliveries: deliveries(5),
      ratePerSecond: 1000,
      concurrency: 1,
      eventOf: async (delivery) => {
        if (delivery.deliveryId === 'd-4') throw new CliError('delivery "d-4" is no longer in the log');
        return {};
      },
      onProgress: (done) => progress.push(done),
    });
    expect(run).toMatchObject({ sent: 2, failed: 3 });
    expect(run.failures).toEqual([
      { deliveryId: 'd-0', error: 'the function failed: boom' },
      { deliveryId: 'd-1', error: 'the invocation failed: TooManyRequestsException' },
      { deliveryId: 'd-4', error: 'delivery "d-4" is no longer in the log' },
    ]);
    expect(progress).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses a rate that is not positive', async () => {
    await expect(
      replayToFunction({
        lambda: { send: async () => ({}) } as never,
        functionName: 'f',
        deliveries: [],
        ratePerSecond: 0,
        eventOf: async () => ({}),
      }),
    ).rejects.toThrow('"--rate" must be a positive number');
  });
});

describe('subscriberEvent()', () => {
  const id = randomUUID();
  const body = '{"action":"opened","issue":{"number":3},"repository":{"full_name":"acme/web"}}';
  const record = {
    recordId: 'r1',
    deliveryId: id,
    receivedAt: NOW,
    event: 'issues',
    action: 'opened',
    forge: 'github',
    source: 'acme',
    hook: '77',
    nativeEvent: 'issues',
    nativeAction: 'opened',
    bodyBytes: body.length,
    verdict: 'verified' as const,
    httpStatus: 202,
    outcome: 'published' as const,
    expiresAt: 0,
    body: Buffer.from(body),
  };
  const details: DeliveryDetails = { deliveryId: id, latest: record, records: [record], subscribers: {} };

  it('is the EventBridge event of the entry the ingest publishes: the same detail-type, source and detail', () => {
    const event = subscriberEvent(details, { hook: '77', eventSource: 'forge.webhooks', now: new Date(NOW) });
    const entry = buildEventEntry(
      {
        id,
        name: 'issues',
        action: 'opened',
        forge: 'github',
        source: 'acme',
        hook: '77',
        nativeEvent: 'issues',
        nativeAction: 'opened',
        payload: JSON.parse(body),
      },
      { source: 'forge.webhooks' },
    );
    expect(event).toEqual({
      version: '0',
      id,
      'detail-type': 'issues.opened',
      source: 'forge.webhooks',
      time: new Date(NOW).toISOString(),
      resources: [],
      detail: JSON.parse(entry.Detail),
    });
  });

  it('refuses a delivery whose body the log did not keep, naming why', () => {
    const { body: _body, ...bare } = record;
    const omitted = { ...bare, payloadOmitted: 'disabled' as const };
    expect(() =>
      subscriberEvent({ ...details, latest: omitted, records: [omitted] }, { hook: '77', eventSource: 's' }),
    ).toThrow(`the log holds no payload of delivery "${id}" (disabled)`);
  });

  it('passes a claim check on as its reference, for the subscriber to read', () => {
    const payloadRef = { bucket: 'b', key: 'k', bytes: 9, sha256: 'a'.repeat(64) };
    const claimed = { ...record, payloadRef };
    const event = subscriberEvent({ ...details, records: [claimed] }, { hook: '77', eventSource: 's' });
    expect((event.detail as { payloadRef: unknown }).payloadRef).toEqual(payloadRef);
  });
});

describe('progressLine()', () => {
  it('shows a bar, done of total, the rate, what is left and the failures', () => {
    expect(progressLine(30, 120, 0, 3000, 12)).toBe('[###.........] 30/120  10.0/s  9 s left');
    expect(progressLine(120, 120, 2, 12_000, 12)).toBe('[############] 120/120  10.0/s  0 s left  2 failed');
    expect(progressLine(0, 0, 0, 0, 4)).toBe('[####] 0/0  0.0/s');
  });
});
