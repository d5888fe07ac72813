/**
 * `replay --since` without `--subscriber`: the deliveries of a window put on the bus again as new events under
 * their original delivery ids, each marked (`detail.replay`) with the run and the subscribers that had reported it
 * `ok`, so that those skip it (`resolveDelivery` tells them) while the ones that failed it, or never saw it, run.
 * Selection is by the log's state, like the subscriber path: a stopped run is resumed by running it again.
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { PutEventsCommand, type PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import type { DeliveryEntry, DeliveryLog, DeliveryRecord, ReplayMark } from '../aws/internal.js';
import { AwsDefaults, eventEntrySize } from '../aws/internal.js';
import { ON_THE_BUS, type ReplayOutcome, type ReplayRun } from './bulk-replay.js';
import { CliError } from './errors.js';

/** What a bus replay selects: the window and filters of `replay --since`, no subscriber. */
export interface BusSelection {
  since: number;
  until?: number | undefined;
  source?: string | undefined;
  event?: string | undefined;
  /** `error`: the deliveries some subscriber reported `error` for (and has not since reported `ok`); `any`: all. */
  outcome: ReplayOutcome;
}

/** One delivery to put on the bus again, with what its subscribers reported. */
export interface BusDelivery {
  deliveryId: string;
  source?: string | undefined;
  hook?: string | undefined;
  event: string;
  action?: string | undefined;
  receivedAt: number;
  /** The subscribers whose latest report is `ok`: they skip the replay. */
  ok: string[];
  /** The subscribers whose latest report is `error`. */
  failed: string[];
}

/** Records per page read from the log. */
const PAGE = 1_000;
/** Most entries in one PutEvents request (EventBridge's limit). */
const BATCH = 10;

/**
 * The deliveries of the window that went onto the bus, oldest first, each once (by source, hook and id), with
 * each subscriber's latest outcome merged over the delivery's requests; with `outcome: 'error'` only those some
 * subscriber failed.
 */
export async function selectForBus(
  log: Pick<DeliveryLog, 'list'>,
  selection: BusSelection,
): Promise<BusDelivery[]> {
  const found = new Map<string, { delivery: BusDelivery; reports: Map<string, 'ok' | 'error'> }>();
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
    for (const record of page.records) add(found, record);
    cursor = page.cursor;
  } while (cursor !== undefined);
  const selected: BusDelivery[] = [];
  for (const { delivery, reports } of found.values()) {
    for (const [name, outcome] of [...reports].sort(([a], [b]) => a.localeCompare(b))) {
      (outcome === 'ok' ? delivery.ok : delivery.failed).push(name);
    }
    if (selection.outcome === 'error' && delivery.failed.length === 0) continue;
    selected.push(delivery);
  }
  return selected.sort((a, b) => a.receivedAt - b.receivedAt);
}

function add(
  found: Map<string, { delivery: BusDelivery; reports: Map<string, 'ok' | 'error'> }>,
  record: DeliveryRecord,
): void {
  if (record.deliveryId === undefined || record.event === undefined || !ON_THE_BUS.has(record.outcome))
    return;
  const key = `${record.source ?? ''}\n${record.hook ?? ''}\n${record.deliveryId}`;
  let entry = found.get(key);
  if (entry === undefined) {
    entry = {
      delivery: {
        deliveryId: record.deliveryId,
        ...(record.source === undefined ? {} : { source: record.source }),
        ...(record.hook === undefined ? {} : { hook: record.hook }),
        event: record.event,
        ...(record.action === undefined ? {} : { action: record.action }),
        receivedAt: record.receivedAt,
        ok: [],
        failed: [],
      },
      reports: new Map(),
    };
    found.set(key, entry);
  }
  // Pages come newest first: the oldest request of the delivery is its receipt.
  if (record.receivedAt < entry.delivery.receivedAt) entry.delivery.receivedAt = record.receivedAt;
  for (const [name, report] of Object.entries(record.subscribers ?? {})) {
    // A delivery's requests each carry the reports made on it; `ok` from any of them means the subscriber took it.
    if (entry.reports.get(name) !== 'ok') entry.reports.set(name, report.outcome);
  }
}

/** The entry with the replay's mark in its detail, on `busName`. */
export function markedEntry(entry: DeliveryEntry, mark: ReplayMark, busName: string): DeliveryEntry {
  const detail = JSON.parse(entry.Detail) as Record<string, unknown>;
  return { ...entry, Detail: JSON.stringify({ ...detail, replay: mark }), EventBusName: busName };
}

/** Options of {@link replayToBus}. */
export interface ReplayToBusOptions {
  eventBridge: Pick<EventBridgeClient, 'send'>;
  busName: string;
  deliveries: readonly BusDelivery[];
  /** The run's id, in every entry's mark. */
  run: string;
  /** The delivery's entry as the ingest built it (reads the log). */
  entryOf: (delivery: BusDelivery) => Promise<DeliveryEntry>;
  /** Most deliveries put on the bus per second. */
  ratePerSecond: number;
  /** Largest entry (and request) sent. Default: the ingest's limit, {@link AwsDefaults.maxEntryBytes}. */
  maxEntryBytes?: number | undefined;
  onProgress?: ((done: number, failed: number) => void) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  now?: (() => number) | undefined;
}

/**
 * Puts each delivery on the bus again, marked, in PutEvents requests of up to 10 entries, at most
 * `ratePerSecond` deliveries a second. An entry the bus refused, one too large with its mark, or one whose event
 * the log no longer holds counts as failed and the run goes on.
 */
export async function replayToBus(options: ReplayToBusOptions): Promise<ReplayRun> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  if (!(options.ratePerSecond > 0)) throw new CliError('"--rate" must be a positive number');
  const maxBytes = options.maxEntryBytes ?? AwsDefaults.maxEntryBytes;
  const perBatch = Math.max(1, Math.min(BATCH, Math.floor(options.ratePerSecond)));
  const started = now();
  const run: ReplayRun = { sent: 0, failed: 0, failures: [], durationMs: 0 };
  const fail = (delivery: BusDelivery, error: string) => {
    run.failed += 1;
    if (run.failures.length < 10) run.failures.push({ deliveryId: delivery.deliveryId, error });
  };
  const at = new Date(started).toISOString();
  let nextAt = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < options.deliveries.length; index += perBatch) {
    const slice = options.deliveries.slice(index, index + perBatch);
    // A request of n deliveries holds the next one back n / rate seconds: no second holds more than the rate.
    const start = Math.max(now(), nextAt);
    nextAt = start + (slice.length * 1000) / options.ratePerSecond;
    const wait = start - now();
    if (wait > 0) await sleep(wait);
    const batch: { delivery: BusDelivery; entry: DeliveryEntry }[] = [];
    let bytes = 0;
    for (const delivery of slice) {
      let entry: DeliveryEntry;
      try {
        const mark: ReplayMark = { run: options.run, at, ok: delivery.ok };
        entry = markedEntry(await options.entryOf(delivery), mark, options.busName);
      } catch (error) {
        fail(delivery, error instanceof Error ? error.message : String(error));
        continue;
      }
      const size = eventEntrySize(entry);
      if (size > maxBytes) {
        fail(delivery, `its entry with the replay mark is ${size} bytes, over the ${maxBytes} the bus takes`);
        continue;
      }
      if (bytes + size > maxBytes) {
        await put(options, batch, run, fail);
        batch.length = 0;
        bytes = 0;
      }
      batch.push({ delivery, entry });
      bytes += size;
    }
    await put(options, batch, run, fail);
    options.onProgress?.(run.sent + run.failed, run.failed);
  }
  run.durationMs = now() - started;
  return run;
}

async function put(
  options: Pick<ReplayToBusOptions, 'eventBridge'>,
  batch: readonly { delivery: BusDelivery; entry: DeliveryEntry }[],
  run: ReplayRun,
  fail: (delivery: BusDelivery, error: string) => void,
): Promise<void> {
  if (batch.length === 0) return;
  let answer: PutEventsCommandOutput;
  try {
    answer = await options.eventBridge.send(
      new PutEventsCommand({ Entries: batch.map(({ entry }) => entry) }),
    );
  } catch (error) {
    const name = (error as { name?: unknown }).name;
    for (const { delivery } of batch)
      fail(delivery, `PutEvents failed: ${typeof name === 'string' ? name : 'error'}`);
    return;
  }
  batch.forEach(({ delivery }, index) => {
    const result = answer.Entries?.[index];
    if (result?.EventId !== undefined && result.ErrorCode === undefined) run.sent += 1;
    else fail(delivery, `the bus refused it: ${result?.ErrorCode ?? 'no answer for the entry'}`);
  });
}
