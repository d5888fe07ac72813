// The inspector's replay to one subscriber, as `forgebridge replay --since … --subscriber NAME` does it: a
// selection of the delivery log (a time window, a source, an event, one subscriber's outcome) counted with a
// sample first (the preview sends nothing), then each selected delivery sent to that subscriber alone by invoking
// its function with the EventBridge event its rule would have handed it, paced, one run at a time, its progress
// read by polling. The pieces are the CLI's (lib/cli/bulk-replay.ts); what invokes the function is the caller's
// (the local stack's serverless-offline Lambda API): without it the page says to use the CLI.
import { randomUUID } from 'node:crypto';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { isSourceName, SOURCE_NAME_RULE } from '../aws/core/index.js';
import type { DeliveryLog } from '../aws/index.js';
import {
  type ReplayOutcome,
  ReplayOutcomes,
  type ReplaySelection,
  replayToFunction,
  type SelectedDelivery,
  selectDeliveries,
  subscriberEvent,
} from '../cli/bulk-replay.js';
import { isKnownEventName, neutralEventName } from '../webhooks/index.js';
import { HttpError } from './http.js';

/** What the inspector needs to send a selection to a subscriber: a Lambda API to invoke its function through. */
export interface BulkReplayAction {
  /** Invokes the subscriber's function (its name as it reports into the log). */
  readonly lambda: Pick<LambdaClient, 'send'>;
  /** The EventBridge `source` of the events handed to the function (`forge.webhooks`). */
  readonly eventSource: string;
  /** The stage: a function key given (`onPush`) also names `forgebridge-<stage>-onPush`. */
  readonly stage: string;
}

/** Deliveries shown in a preview. */
const SAMPLE = 5;
/** Invocations started per second unless the request says (the CLI's `--rate` default). */
const DEFAULT_RATE = 10;
const MAX_RATE = 100;
/** Finished runs kept for `GET /api/bulk-replay/<id>`. */
const KEPT_RUNS = 20;
const SUBSCRIBER = /^[A-Za-z0-9_.:-]{1,128}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

const invalid = (message: string) => new HttpError(400, 'invalid_request', message);
const iso = (ms: number) => new Date(ms).toISOString();
const shown = (value: unknown) => String(value).slice(0, 100);

/** A time of the request: epoch ms, or an ISO 8601 date and time. */
function timeOf(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DATE_TIME.test(value.trim())) {
    const at = Date.parse(value.trim());
    if (Number.isFinite(at)) return at;
  }
  throw invalid(`"${field}" must be a date and time (2026-11-23T08:00:00Z) or epoch milliseconds`);
}

const absent = (value: unknown) => value === undefined || value === null || value === '';

/** The selection of a request body, without its subscriber; a bad field is a 400. */
export function parseSelection(
  body: Record<string, unknown>,
  now: number = Date.now(),
): Omit<ReplaySelection, 'subscriber'> {
  if (absent(body.since)) throw invalid('"since" is required');
  const since = timeOf(body.since, 'since');
  const until = absent(body.until) ? undefined : timeOf(body.until, 'until');
  if (until !== undefined && until <= since) {
    throw invalid(`"until" (${iso(until)}) must be after "since" (${iso(since)})`);
  }
  if (since > now + 60_000) throw invalid(`"since" (${iso(since)}) is in the future`);
  let source: string | undefined;
  if (!absent(body.source)) {
    if (!isSourceName(body.source)) throw invalid(`"source" must be ${SOURCE_NAME_RULE}`);
    source = body.source;
  }
  let event: string | undefined;
  if (!absent(body.event)) {
    const name = typeof body.event === 'string' ? neutralEventName(body.event.trim()) : '';
    if (name === '' || !isKnownEventName(name)) {
      throw new HttpError(400, 'unknown_event', `"event" "${shown(body.event)}" is not in the catalogue`);
    }
    event = name;
  }
  const outcome = absent(body.outcome) ? 'error' : body.outcome;
  if (!(ReplayOutcomes as readonly unknown[]).includes(outcome)) {
    throw invalid(`"outcome" must be one of ${ReplayOutcomes.map((value) => `"${value}"`).join(', ')}`);
  }
  return {
    since,
    ...(until === undefined ? {} : { until }),
    ...(source === undefined ? {} : { source }),
    ...(event === undefined ? {} : { event }),
    outcome: outcome as ReplayOutcome,
  };
}

/** The names the request's subscriber may report under (as `replay --subscriber` takes them). */
function subscriberNames(value: unknown, stage: string | undefined): string[] {
  if (typeof value !== 'string' || !SUBSCRIBER.test(value)) {
    throw invalid('"subscriber" must be a function key (onIssuesOpened) or name, 1 to 128 characters');
  }
  if (value.startsWith('forgebridge-') || stage === undefined) return [value];
  return [value, `forgebridge-${stage}-${value}`];
}

/** A log read whose bad input (`TypeError`) is a 400. */
async function read<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TypeError) throw invalid(error.message);
    throw error;
  }
}

/** A selected delivery for the page. */
function sampleView(delivery: SelectedDelivery): Record<string, unknown> {
  return {
    deliveryId: delivery.deliveryId,
    ...(delivery.source === undefined ? {} : { source: delivery.source }),
    ...(delivery.hook === undefined ? {} : { hook: delivery.hook }),
    event: delivery.action === undefined ? delivery.event : `${delivery.event}.${delivery.action}`,
    receivedAt: delivery.receivedAt,
    outcome: delivery.outcome,
    ...(delivery.error === undefined ? {} : { error: delivery.error.slice(0, 300) }),
  };
}

/** One run, as `GET /api/bulk-replay/<id>` answers it. */
export interface BulkRunView {
  id: string;
  subscriber: string;
  outcome: ReplayOutcome;
  state: 'running' | 'done';
  total: number;
  /** Taken or failed so far. */
  done: number;
  sent: number;
  failed: number;
  /** The first failures: the delivery and why. */
  failures: { deliveryId: string; error: string }[];
  startedAt: string;
  durationMs?: number;
}

/** The preview and the runs of one inspector. */
export class BulkReplays {
  readonly #runs = new Map<string, BulkRunView>();
  /** Set from the moment a start is accepted until its run ends: one run at a time. */
  #busy = false;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** The wake-ups of the pacing's waits, so that a stop does not wait them out. */
  readonly #sleepers = new Set<() => void>();

  constructor(
    private readonly log: DeliveryLog,
    private readonly action: BulkReplayAction | undefined,
  ) {}

  get available(): boolean {
    return this.action !== undefined;
  }

  /** The running run, else the latest. */
  latest(): BulkRunView | undefined {
    return [...this.#runs.values()].at(-1);
  }

  get(id: string): BulkRunView | undefined {
    return this.#runs.get(id);
  }

  /**
   * Counts the selection with a sample; without a subscriber, only which subscribers reported on a delivery of the
   * window (what the page offers). A subscriber that reported on none is a 400.
   */
  async preview(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const selection = parseSelection(body);
    const names = absent(body.subscriber) ? undefined : subscriberNames(body.subscriber, this.action?.stage);
    const found = await read(() => selectDeliveries(this.log, { ...selection, subscriber: names ?? [] }));
    const subscribers = [...found.subscribers].sort();
    if (names !== undefined && found.subscriber === undefined) throw unknownSubscriber(names, subscribers);
    return {
      since: iso(selection.since),
      ...(selection.until === undefined ? {} : { until: iso(selection.until) }),
      ...(selection.source === undefined ? {} : { source: selection.source }),
      ...(selection.event === undefined ? {} : { event: selection.event }),
      outcome: selection.outcome,
      subscribers,
      subscriber: found.subscriber ?? null,
      count: names === undefined ? null : found.selected.length,
      sample: found.selected.slice(0, SAMPLE).map(sampleView),
    };
  }

  /** Selects again and starts sending to the subscriber; resolves once the run is under way. */
  async start(body: Record<string, unknown>): Promise<BulkRunView> {
    const action = this.action;
    if (action === undefined) {
      throw new HttpError(
        404,
        'not_found',
        'replay to a subscriber is done with the CLI here: forgebridge replay --since … --subscriber NAME',
      );
    }
    const selection = parseSelection(body);
    const names = subscriberNames(body.subscriber, action.stage);
    const rate = rateOf(body.rate);
    if (this.#busy) {
      const running = this.latest();
      throw new HttpError(
        409,
        'run_in_progress',
        `a replay is running${running === undefined ? '' : ` (${running.done} of ${running.total} to ${running.subscriber})`}: one at a time`,
      );
    }
    this.#busy = true;
    try {
      const found = await read(() => selectDeliveries(this.log, { ...selection, subscriber: names }));
      const subscriber = found.subscriber;
      if (subscriber === undefined) throw unknownSubscriber(names, [...found.subscribers].sort());
      if (this.#stopped) throw new HttpError(503, 'stopping', 'the inspector is stopping');
      const run: BulkRunView = {
        id: randomUUID(),
        subscriber,
        outcome: selection.outcome,
        state: 'running',
        total: found.selected.length,
        done: 0,
        sent: 0,
        failed: 0,
        failures: [],
        startedAt: new Date().toISOString(),
      };
      this.#keep(run);
      this.#running = this.#send(action, run, found.selected, rate).finally(() => {
        this.#busy = false;
        this.#running = undefined;
      });
      return { ...run };
    } catch (error) {
      this.#busy = false;
      throw error;
    }
  }

  /** Sends nothing more (what is left counts as failed) and waits for the invocations under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const wake of this.#sleepers) wake();
    await this.#running;
  }

  async #send(
    action: BulkReplayAction,
    run: BulkRunView,
    deliveries: readonly SelectedDelivery[],
    ratePerSecond: number,
  ): Promise<void> {
    const started = Date.now();
    try {
      const result = await replayToFunction({
        lambda: action.lambda,
        functionName: run.subscriber,
        deliveries,
        ratePerSecond,
        eventOf: async (delivery) => {
          if (this.#stopped) throw new Error('not sent: the inspector stopped');
          let details: Awaited<ReturnType<DeliveryLog['get']>>;
          try {
            details = await this.log.get(delivery.deliveryId, { source: delivery.source });
          } catch {
            throw new Error('the delivery log could not be read');
          }
          if (details === undefined) throw new Error('the delivery is no longer in the log');
          return subscriberEvent(details, { hook: delivery.hook, eventSource: action.eventSource });
        },
        onProgress: (done, failed) => {
          run.done = done;
          run.failed = failed;
          run.sent = done - failed;
        },
        sleep: (ms) => this.#sleep(ms),
      });
      run.sent = result.sent;
      run.failed = result.failed;
      run.done = result.sent + result.failed;
      run.failures = result.failures.map((failure) => ({ ...failure, error: failure.error.slice(0, 300) }));
    } catch {
      // replayToFunction counts each delivery's failure; anything else ends the run with what is left unsent.
      run.failed = run.total - run.sent;
      run.done = run.total;
    } finally {
      run.durationMs = Date.now() - started;
      run.state = 'done';
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#sleepers.add(wake);
    });
  }

  #keep(run: BulkRunView): void {
    this.#runs.set(run.id, run);
    for (const id of this.#runs.keys()) {
      if (this.#runs.size <= KEPT_RUNS) break;
      this.#runs.delete(id);
    }
  }
}

function rateOf(value: unknown): number {
  if (absent(value)) return DEFAULT_RATE;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_RATE) return value;
  throw invalid(`"rate" must be a whole number of deliveries a second, 1 to ${MAX_RATE}`);
}

function unknownSubscriber(names: readonly string[], known: readonly string[]): HttpError {
  return new HttpError(
    400,
    'unknown_subscriber',
    `no delivery of the window was reported on by subscriber "${names[0]}" (${known.length === 0 ? 'no subscriber reported on any' : `subscribers that did: ${known.join(', ')}`})`,
  );
}
