// The send of `replay --since` to the bus, below any log: the pacing on a fake clock, the replay mark each entry
// carries, a request split where the bus's size limit says, an entry refused or too large and a PutEvents that
// failed all counted as failed without stopping the run, and the flags refused before anything is read.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryEntry } from '../../../lib/aws/internal.js';
import { eventEntrySize } from '../../../lib/aws/publish/index.js';
import { type BusDelivery, markedEntry, replayToBus } from '../../../lib/cli/bus-replay.js';
import { busOf, parseBusSelection } from '../../../lib/cli/commands/replay-bus.js';
import type { LogTarget } from '../../../lib/cli/delivery-log.js';
import { CliError, ExitCodes } from '../../../lib/cli/errors.js';

const NOW = Date.parse('2026-12-06T12:00:00Z');

const deliveries = (count: number): BusDelivery[] =>
  Array.from({ length: count }, (_, n) => ({
    deliveryId: `d-${n}`,
    event: 'push',
    receivedAt: n,
    ok: ['forgebridge-local-audit'],
    failed: ['forgebridge-local-onPush'],
  }));

const entryOf = async (delivery: BusDelivery, padding = 0): Promise<DeliveryEntry> => ({
  Source: 'forge.webhooks',
  DetailType: delivery.event,
  Detail: JSON.stringify({
    delivery: delivery.deliveryId,
    event: delivery.event,
    payload: { pad: 'x'.repeat(padding) },
  }),
  EventBusName: 'forgebridge-local',
});

/** A clock of its own: a sleep wakes at the time it asked for. */
function fakeClock(start = NOW) {
  let clock = start;
  return {
    now: () => clock,
    sleep: async (ms: number) => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      clock += ms;
    },
  };
}

describe('replayToBus()', () => {
  const bus = mockClient(EventBridgeClient);
  afterEach(() => bus.reset());
  const client = () => new EventBridgeClient({ region: 'us-east-1' });

  it('puts each delivery on the bus once, marked, in requests of up to 10, at most the rate a second', async () => {
    const starts: number[] = [];
    const clock = fakeClock();
    bus.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => {
      starts.push(clock.now());
      return { FailedEntryCount: 0, Entries: input.Entries.map((_, n) => ({ EventId: `e-${n}` })) };
    });
    const progress: number[] = [];
    const run = await replayToBus({
      eventBridge: client(),
      busName: 'forgebridge-prod',
      deliveries: deliveries(45),
      run: 'run-7',
      entryOf: (delivery) => entryOf(delivery),
      ratePerSecond: 20,
      onProgress: (done) => progress.push(done),
      ...clock,
    });
    expect(run).toMatchObject({ sent: 45, failed: 0, failures: [] });
    const calls = bus.commandCalls(PutEventsCommand);
    expect(calls.map((call) => call.args[0].input.Entries?.length)).toEqual([10, 10, 10, 10, 5]);
    expect(progress).toEqual([10, 20, 30, 40, 45]);
    // 10 entries at 20 a second: a request every 500 ms, never sooner.
    for (let n = 1; n < starts.length; n += 1) {
      expect((starts[n] as number) - (starts[n - 1] as number)).toBeGreaterThanOrEqual(500);
    }
    expect(run.durationMs).toBeGreaterThanOrEqual(2_000);
    const first = calls[0]?.args[0].input.Entries?.[0];
    expect(first?.EventBusName).toBe('forgebridge-prod');
    expect(JSON.parse(first?.Detail as string)).toEqual({
      delivery: 'd-0',
      event: 'push',
      payload: { pad: '' },
      replay: { run: 'run-7', at: new Date(NOW).toISOString(), ok: ['forgebridge-local-audit'] },
    });
    const ids = calls.flatMap((call) =>
      call.args[0].input.Entries?.map((e) => JSON.parse(e.Detail as string).delivery),
    );
    expect(new Set(ids).size).toBe(45);
  });

  it('at a rate under 10 a second, sends requests of that many, one a second', async () => {
    bus.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      Entries: input.Entries.map(() => ({ EventId: 'e' })),
    }));
    const clock = fakeClock();
    const run = await replayToBus({
      eventBridge: client(),
      busName: 'b',
      deliveries: deliveries(6),
      run: 'r',
      entryOf: (delivery) => entryOf(delivery),
      ratePerSecond: 2,
      ...clock,
    });
    expect(run.sent).toBe(6);
    expect(bus.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.length)).toEqual([
      2, 2, 2,
    ]);
    // 6 at 2 a second: the last request starts 2 s after the first.
    expect(run.durationMs).toBeGreaterThanOrEqual(2_000);
  });

  it('counts an entry the bus refused, one too large, one the log lost and a failed request, and goes on', async () => {
    let call = 0;
    bus.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => {
      call += 1;
      if (call === 2)
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9 secret-ish'), {
          name: 'TimeoutError',
        });
      return {
        FailedEntryCount: 1,
        Entries: input.Entries.map((_, n) =>
          n === 0 ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' } : { EventId: `e-${n}` },
        ),
      };
    });
    const list = deliveries(25);
    const run = await replayToBus({
      eventBridge: client(),
      busName: 'b',
      deliveries: list,
      run: 'r',
      ratePerSecond: 1_000,
      maxEntryBytes: 2_000,
      entryOf: async (delivery) => {
        if (delivery.deliveryId === 'd-3') throw new Error('delivery "d-3" is no longer in the log');
        return entryOf(delivery, delivery.deliveryId === 'd-4' ? 5_000 : 0);
      },
      ...fakeClock(),
    });
    // Request 1 (d-0..d-9 less d-3 and d-4): 8, the first refused. Request 2 (d-10..d-19): thrown, 10 failed.
    // Request 3 (d-20..d-24): 5, the first refused.
    expect(run).toMatchObject({ sent: 7 + 4, failed: 2 + 1 + 10 + 1 });
    expect(run.failures.slice(0, 3)).toEqual([
      { deliveryId: 'd-3', error: 'delivery "d-3" is no longer in the log' },
      {
        deliveryId: 'd-4',
        error: expect.stringMatching(
          /^its entry with the replay mark is \d+ bytes, over the 2000 the bus takes$/,
        ),
      },
      { deliveryId: 'd-0', error: 'the bus refused it: ThrottlingException' },
    ]);
    expect(run.failures[3]).toEqual({ deliveryId: 'd-10', error: 'PutEvents failed: TimeoutError' });
    // At most 10 failures kept; the error's message (which may echo anything) is never one of them.
    expect(run.failures).toHaveLength(10);
    expect(JSON.stringify(run.failures)).not.toContain('secret-ish');
  });

  it('splits a request where the entries would pass the size limit together', async () => {
    bus.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      Entries: input.Entries.map(() => ({ EventId: 'e' })),
    }));
    const one = markedEntry(
      await entryOf(deliveries(1)[0] as BusDelivery, 400),
      { run: 'r', at: new Date(NOW).toISOString(), ok: ['forgebridge-local-audit'] },
      'b',
    );
    const size = eventEntrySize(one);
    const run = await replayToBus({
      eventBridge: client(),
      busName: 'b',
      deliveries: deliveries(10),
      run: 'r',
      ratePerSecond: 1_000,
      maxEntryBytes: size * 3 + 10,
      entryOf: (delivery) => entryOf(delivery, 400),
      ...fakeClock(),
    });
    expect(run.sent).toBe(10);
    expect(bus.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.length)).toEqual([
      3, 3, 3, 1,
    ]);
  });

  it('refuses a rate that is not positive', async () => {
    for (const ratePerSecond of [0, -1, Number.NaN]) {
      await expect(
        replayToBus({
          eventBridge: client(),
          busName: 'b',
          deliveries: [],
          run: 'r',
          ratePerSecond,
          entryOf: (d) => entryOf(d),
        }),
      ).rejects.toBeInstanceOf(CliError);
    }
    expect(bus.calls()).toHaveLength(0);
  });
});

describe('parseBusSelection() and busOf()', () => {
  const base = { since: '2h', outcome: 'error', rate: 10 };

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

  it('reads the window, source, event and outcome', () => {
    expect(
      parseBusSelection(
        { ...base, until: '1h', source: 'acme', event: 'issues.opened', outcome: 'any' },
        NOW,
      ),
    ).toEqual({
      since: NOW - 7_200_000,
      until: NOW - 3_600_000,
      source: 'acme',
      event: 'issues.opened',
      outcome: 'any',
    });
  });

  it('refuses a bad window, outcome, event and --via, exit 2', () => {
    expect(usage(() => parseBusSelection({ ...base, since: '1h', until: '2h' }, NOW))).toMatch(
      /^"--until" .* must be after "--since"/,
    );
    expect(usage(() => parseBusSelection({ ...base, outcome: 'dead' }, NOW))).toBe(
      '"--outcome" must be one of "error", "any"',
    );
    expect(usage(() => parseBusSelection({ ...base, event: 'nope' }, NOW))).toMatch(/^unknown event "nope"/);
    expect(usage(() => parseBusSelection({ ...base, via: 'archive' }, NOW))).toMatch(
      /^"--via" needs "--subscriber"/,
    );
  });

  it("names a stage's bus from --bus or its stack, the local stack's from the environment", () => {
    const aws: LogTarget = {
      kind: 'aws',
      tableName: 't',
      endpoint: undefined,
      region: 'eu-west-1',
      fromState: false,
      label: 'stage "prod"',
      busName: 'forgebridge-prod-bus',
    };
    expect(busOf({ stage: 'prod' }, aws).busName).toBe('forgebridge-prod-bus');
    expect(busOf({ stage: 'prod', bus: 'other' }, aws).busName).toBe('other');
    const local: LogTarget = {
      kind: 'local',
      tableName: 't',
      endpoint: 'http://127.0.0.1:8000',
      region: undefined,
      fromState: false,
      label: 'local stack',
    };
    const env = { FORGEBRIDGE_STATE_FILE: '/nonexistent/state.json' };
    expect(
      busOf({}, local, { ...env, FORGEBRIDGE_EVENTBRIDGE_ENDPOINT: 'http://127.0.0.1:4010' }).busName,
    ).toBe('forgebridge-local');
    let refused: unknown;
    try {
      busOf({}, local, env);
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      exitCode: ExitCodes.unreachable,
      message: expect.stringMatching(/no EventBridge endpoint/),
    });
  });
});
