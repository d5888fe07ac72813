/**
 * `replay --since`: selects deliveries from the delivery log by time window, source, event and one subscriber's
 * outcome, and sends each again to that subscriber only (locally by invoking its function, the EventBridge event
 * its rule would have handed it), paced, with progress on a terminal. Selection is by the log's state, so a run
 * that was stopped is resumed by running it again: what the subscriber has since reported `ok` is no longer
 * selected, and nothing it took is sent twice.
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { DeliveryDetails, DeliveryEntry, DeliveryLog, DeliveryRecord } from '../aws/internal.js';
import { buildEventEntry, streamEventOf } from '../aws/internal.js';
import { CliError, ExitCodes } from './errors.js';

/** Which of a subscriber's deliveries are selected: those it reported `error` for, or every one it reported on. */
export const ReplayOutcomes = ['error', 'any'] as const;
export type ReplayOutcome = (typeof ReplayOutcomes)[number];

/** What `replay --since` selects. */
export interface ReplaySelection {
  /** Oldest receipt included, epoch ms. */
  since: number;
  /** Newest receipt excluded, epoch ms; default now. */
  until?: number | undefined;
  source?: string | undefined;
  /** `issues` or `issues.opened`. */
  event?: string | undefined;
  /**
   * The subscriber's name as it reports into the log (its function's name by default), or the names it may go
   * by (`onPush`, `forgebridge-local-onPush`): the first one the log knows is taken.
   */
  subscriber: string | readonly string[];
  outcome: ReplayOutcome;
}

/** One selected delivery: what identifies it, and the subscriber's outcome that selected it. */
export interface SelectedDelivery {
  deliveryId: string;
  source?: string | undefined;
  hook?: string | undefined;
  event: string;
  action?: string | undefined;
  receivedAt: number;
  outcome: 'ok' | 'error';
  /** The subscriber's error, where it reported one. */
  error?: string | undefined;
}

/** The log outcomes of a request whose delivery went onto the bus (now, or through the retrier). */
export const ON_THE_BUS: ReadonlySet<string> = new Set(['published', 'queued', 'recovered']);
/** Records per page read from the log. */
const PAGE = 1_000;

/** Checks a selection's window: `--until` after `--since`, neither in the future by more than a minute. */
export function checkWindow(since: number, until: number | undefined, now: number = Date.now()): void {
  if (until !== undefined && until <= since) {
    throw new CliError(
      `"--until" (${new Date(until).toISOString()}) must be after "--since" (${new Date(since).toISOString()})`,
    );
  }
  if (since > now + 60_000)
    throw new CliError(`"--since" (${new Date(since).toISOString()}) is in the future`);
}

/** What {@link selectDeliveries} found. */
export interface Selected {
  /** The deliveries selected, oldest first. */
  selected: SelectedDelivery[];
  /** Every subscriber that reported on a delivery of the window (how an unknown name is told apart from 0). */
  subscribers: ReadonlySet<string>;
  /** The subscriber's name the log knows, of those given; `undefined` when it knows none of them. */
  subscriber: string | undefined;
}

/**
 * The deliveries of the window whose subscriber outcome matches, oldest first, each once (a delivery's
 * duplicate requests and another hook's delivery of the same id are told apart by source and hook).
 */
export async function selectDeliveries(
  log: Pick<DeliveryLog, 'list'>,
  selection: ReplaySelection,
): Promise<Selected> {
  const names = typeof selection.subscriber === 'string' ? [selection.subscriber] : [...selection.subscriber];
  const byName = new Map(names.map((name) => [name, new Map<string, SelectedDelivery>()]));
  const subscribers = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await log.list({
      since: selection.since,
      until: selection.until,
      source: selection.source,
      event: selection.event,
      subscribers: true,
      limit: PAGE,
      cursor,
    });
    for (const record of page.records) {
      for (const name of Object.keys(record.subscribers ?? {})) subscribers.add(name);
      for (const [name, selected] of byName) {
        const picked = pick(record, name, selection.outcome);
        if (picked === undefined) continue;
        const key = `${picked.source ?? ''}\n${picked.hook ?? ''}\n${picked.deliveryId}`;
        const seen = selected.get(key);
        // Pages come newest first: the oldest request of the delivery is its receipt.
        if (seen === undefined || picked.receivedAt < seen.receivedAt) selected.set(key, picked);
      }
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  const subscriber = names.find((name) => subscribers.has(name));
  const selected = subscriber === undefined ? [] : [...(byName.get(subscriber)?.values() ?? [])];
  return { selected: selected.sort((a, b) => a.receivedAt - b.receivedAt), subscribers, subscriber };
}

function pick(
  record: DeliveryRecord,
  subscriber: string,
  outcome: ReplayOutcome,
): SelectedDelivery | undefined {
  if (record.deliveryId === undefined || record.event === undefined || !ON_THE_BUS.has(record.outcome)) {
    return undefined;
  }
  const reported = record.subscribers?.[subscriber];
  if (reported === undefined) return undefined;
  if (outcome === 'error' && reported.outcome !== 'error') return undefined;
  return {
    deliveryId: record.deliveryId,
    ...(record.source === undefined ? {} : { source: record.source }),
    ...(record.hook === undefined ? {} : { hook: record.hook }),
    event: record.event,
    ...(record.action === undefined ? {} : { action: record.action }),
    receivedAt: record.receivedAt,
    outcome: reported.outcome,
    ...(reported.error === undefined
      ? {}
      : { error: [reported.error.name, reported.error.message].filter(Boolean).join(': ') }),
  };
}

/**
 * The PutEvents entry the ingest built for this delivery: the detail it put on the bus (built again from the
 * logged body, or its claim check's reference), under the delivery's id.
 */
export function deliveryEntryOf(
  details: DeliveryDetails,
  options: { hook?: string | undefined; eventSource: string },
): DeliveryEntry {
  const records = details.records.filter((record) => (record.hook ?? undefined) === options.hook);
  const published = records.find((record) => record.event !== undefined && ON_THE_BUS.has(record.outcome));
  const withBody = records.find((record) => record.body !== undefined);
  const claimed = records.find((record) => record.payloadRef !== undefined);
  const fields = published ?? withBody ?? claimed;
  if (fields?.event === undefined) {
    throw new CliError(`the log names no event of delivery "${details.deliveryId}"`, ExitCodes.failed);
  }
  let payload: unknown;
  if (claimed === undefined) {
    if (withBody?.body === undefined) {
      const why = fields.payloadOmitted;
      throw new CliError(
        `the log holds no payload of delivery "${details.deliveryId}"${why === undefined ? '' : ` (${why})`}`,
        ExitCodes.failed,
      );
    }
    try {
      payload = JSON.parse(Buffer.from(withBody.body).toString('utf8'));
    } catch {
      throw new CliError(`the logged body of delivery "${details.deliveryId}" is not JSON`, ExitCodes.failed);
    }
  } else {
    // The subscriber reads the claim check itself (resolveDelivery); the routing fields come from the body where
    // the log kept it.
    payload = withBody?.body === undefined ? {} : JSON.parse(Buffer.from(withBody.body).toString('utf8'));
  }
  return buildEventEntry(
    {
      id: details.deliveryId,
      name: fields.event,
      payload,
      ...(fields.action === undefined ? {} : { action: fields.action }),
      ...(fields.forge === undefined ? {} : { forge: fields.forge as never }),
      ...(fields.source === undefined ? {} : { source: fields.source }),
      ...(options.hook === undefined ? {} : { hook: options.hook }),
      ...(fields.nativeEvent === undefined ? {} : { nativeEvent: fields.nativeEvent }),
      ...(fields.nativeAction === undefined ? {} : { nativeAction: fields.nativeAction }),
    },
    {
      source: options.eventSource,
      ...(claimed?.payloadRef === undefined ? {} : { payloadRef: claimed.payloadRef }),
    },
  );
}

/** The EventBridge event a subscriber's rule hands its target for this delivery ({@link deliveryEntryOf}). */
export function subscriberEvent(
  details: DeliveryDetails,
  options: { hook?: string | undefined; eventSource: string; now?: Date },
): Record<string, unknown> {
  const entry = deliveryEntryOf(details, options);
  return { ...streamEventOf(entry, options.now ?? new Date()), resources: [] };
}

/** What {@link replayToFunction} did. */
export interface ReplayRun {
  sent: number;
  failed: number;
  /** The first failures, with the delivery and the function's error. */
  failures: { deliveryId: string; error: string }[];
  durationMs: number;
}

/** Options of {@link replayToFunction}. */
export interface ReplayToFunctionOptions {
  lambda: Pick<LambdaClient, 'send'>;
  functionName: string;
  deliveries: readonly SelectedDelivery[];
  /** The event of one delivery (reads the log). */
  eventOf: (delivery: SelectedDelivery) => Promise<Record<string, unknown>>;
  /** Most invocations started per second. */
  ratePerSecond: number;
  /** Invocations at once. Default 4. */
  concurrency?: number | undefined;
  onProgress?: ((done: number, failed: number) => void) | undefined;
  /** Called with each delivery's outcome (`undefined`: taken) before the next is started by this worker. */
  onResult?: ((delivery: SelectedDelivery, error: string | undefined) => Promise<void> | void) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  now?: (() => number) | undefined;
}

/**
 * Invokes `functionName` once per delivery with its event (RequestResponse: the answer says whether the
 * subscriber took it), starting at most `ratePerSecond` a second and `concurrency` at once. A function error or a
 * refused invocation counts as failed and the run goes on; the subscriber's own report into the log records it.
 */
export async function replayToFunction(options: ReplayToFunctionOptions): Promise<ReplayRun> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  if (!(options.ratePerSecond > 0)) throw new CliError('"--rate" must be a positive number');
  const interval = 1000 / options.ratePerSecond;
  const started = now();
  const run: ReplayRun = { sent: 0, failed: 0, failures: [], durationMs: 0 };
  let next = 0;
  // When the latest invocation was let start: each one starts an interval after the one before, however long
  // the ones before took, so no second holds more than `ratePerSecond` (a slow spell is not made up in a burst).
  let last = Number.NEGATIVE_INFINITY;
  const worker = async () => {
    while (next < options.deliveries.length) {
      const delivery = options.deliveries[next] as SelectedDelivery;
      next += 1;
      const at = Math.max(now(), last + interval);
      last = at;
      // A timer may wake a little early (it counts from the event loop's clock, not this one): sleep on until due.
      for (let wait = at - now(); wait > 0; wait = at - now()) await sleep(Math.max(1, wait));
      const error = await invokeOnce(options, delivery);
      // Awaited before the next one: a dead letter is deleted only once its subscriber took it.
      await options.onResult?.(delivery, error);
      if (error === undefined) run.sent += 1;
      else {
        run.failed += 1;
        if (run.failures.length < 10) run.failures.push({ deliveryId: delivery.deliveryId, error });
      }
      options.onProgress?.(run.sent + run.failed, run.failed);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 4, options.deliveries.length));
  await Promise.all(Array.from({ length: workers }, worker));
  run.durationMs = now() - started;
  return run;
}

/** One invocation: `undefined` when the function took it, else why not (one line). */
async function invokeOnce(
  options: ReplayToFunctionOptions,
  delivery: SelectedDelivery,
): Promise<string | undefined> {
  let event: Record<string, unknown>;
  try {
    event = await options.eventOf(delivery);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  try {
    const answer = await options.lambda.send(
      new InvokeCommand({
        FunctionName: options.functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(event)),
      }),
    );
    // serverless-offline answers a function that returned nothing with a null payload.
    const text = answer.Payload == null ? '' : Buffer.from(answer.Payload).toString('utf8');
    if (answer.FunctionError === undefined) return partialFailure(text);
    let message: unknown;
    try {
      message = (JSON.parse(text) as { errorMessage?: unknown }).errorMessage;
    } catch {
      message = undefined;
    }
    return `the function failed${typeof message === 'string' ? `: ${message.split('\n')[0]}` : ''}`;
  } catch (error) {
    const name = (error as { name?: unknown }).name;
    return `the invocation failed: ${typeof name === 'string' ? name : 'error'}`;
  }
}

/** A progress line for a terminal: a bar, done of total, the rate and what is left. */
export function progressLine(
  done: number,
  total: number,
  failed: number,
  elapsedMs: number,
  width = 24,
): string {
  const fraction = total === 0 ? 1 : done / total;
  const filled = Math.round(fraction * width);
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const left = rate > 0 ? Math.ceil((total - done) / rate) : undefined;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}  ${rate.toFixed(1)}/s${left === undefined ? '' : `  ${left} s left`}${failed > 0 ? `  ${failed} failed` : ''}`;
}

/**
 * A function that answered without an error but with `batchItemFailures` (an ordered subscriber's partial batch
 * response) did not take its batch: why, or `undefined` when it took it.
 */
function partialFailure(text: string): string | undefined {
  let answer: unknown;
  try {
    answer = text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
  const failures = (answer as { batchItemFailures?: unknown } | null)?.batchItemFailures;
  if (!Array.isArray(failures) || failures.length === 0) return undefined;
  const first = (failures[0] as { itemIdentifier?: unknown } | null)?.itemIdentifier;
  return `the function did not take ${failures.length} record${failures.length === 1 ? '' : 's'} of the batch${typeof first === 'string' ? ` (from ${first})` : ''}`;
}
