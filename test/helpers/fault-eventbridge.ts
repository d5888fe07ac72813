/**
 * A PutEvents endpoint of ours on 127.0.0.1 for the fault-injection suite: it speaks the AWS JSON 1.1 protocol
 * the SDK's EventBridgeClient uses (`X-Amz-Target: AWSEvents.PutEvents`), records every entry it accepts by
 * its `detail.delivery`, and injects faults: failed entries, HTTP 500s, throttling, accepted entries whose
 * reply is lost (the socket is destroyed after recording them), an outage that refuses everything, a slow
 * bus that records each entry on arrival but answers only after a delay (so the caller may give up on a request
 * the bus took), and an entry limit below EventBridge's 1 MB (a region still at 256 KB). Each fault and delay is drawn from a seed and the delivery's attempt number, never from arrival
 * order, so a run with the same seed injects the same faults. It counts HTTP requests per SDK send (the
 * `amz-sdk-invocation-id` header the SDK keeps across its own retries of one `send()`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Attempts, answerJson, checkRate, draw, exclusiveRates, startFaultServer } from './fault-server.js';

/** Fault rates of the bus, each from 0 to 1. A request draws one of the HTTP faults, then each entry its own. */
export interface BusFaults {
  /** Answer 500 `InternalException` (nothing recorded). */
  http500Rate?: number;
  /** Answer 400 `ThrottlingException` (nothing recorded). */
  throttleRate?: number;
  /** Record the entries, then destroy the socket: accepted, but the caller never hears of it. */
  lostReplyRate?: number;
  /** Per entry: answer it with `ErrorCode: InternalFailure` (not recorded) in a 200. */
  entryFailureRate?: number;
}

/** A slow bus: every request is recorded as accepted on arrival, then answered after a delay drawn in the range. */
export interface SlowBus {
  /** Shortest delay before the reply, in ms. */
  minDelayMs: number;
  /** Longest delay before the reply, in ms. */
  maxDelayMs: number;
  /**
   * Share of requests (0 to 1) refused instead: nothing recorded, answered 500 after a seeded delay below
   * `minDelayMs` (a bus that is slow to refuse too, so the caller's retries start late in its budget).
   */
  refuseRate?: number;
}

/** One request the slow bus answered late. */
export interface SlowRequest {
  /** The `detail.delivery` of each entry. */
  ids: string[];
  /** `performance.now()` when it arrived (and was recorded). */
  arrivedAt: number;
  /** When it was answered, or when its caller closed the connection first. */
  endedAt: number;
  /** Whether the caller was still there to read the reply. */
  replied: boolean;
}

/** What the bus saw. */
export interface BusStats {
  /** PutEvents requests received (HTTP attempts). */
  requests: number;
  /** SDK `send()` calls: distinct `amz-sdk-invocation-id` headers (a request without one counts as its own send). */
  sends: number;
  /** Entries accepted (recorded). */
  accepted: number;
  http500: number;
  throttled: number;
  lostReplies: number;
  entryFailures: number;
  /** Requests refused during an outage. */
  refused: number;
  /** Requests the slow bus recorded at once and answered late. */
  slowed: number;
  /** Slowed requests whose caller closed the connection before the reply was due (it gave up on an accepted entry). */
  lateReplies: number;
  /** Requests that were not a PutEvents call. */
  unexpected: number;
  /** Requests refused for the total size of their entries (over the entry limit). */
  tooLarge: number;
}

/** A running fault-injecting bus. */
export interface FaultEventBridge {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly stats: BusStats;
  /** Accepted entries per `detail.delivery`: 2 or more is a doubled delivery. */
  readonly received: ReadonlyMap<string, number>;
  /** The `Detail` of the last accepted entry of each `detail.delivery`, as it was sent. */
  readonly details: ReadonlyMap<string, string>;
  /** When each delivery id was first accepted (`performance.now()`), whether or not the caller read the reply. */
  readonly firstAccepted: ReadonlyMap<string, number>;
  /**
   * Delivery ids of accepted entries whose reply the caller never got: a reply lost on purpose, or a slow reply its
   * caller gave up on. (A prompt reply the caller's own timer beat cannot be seen from here.)
   */
  readonly unread: ReadonlySet<string>;
  /** When the first PutEvents request about each `detail.delivery` arrived (`performance.now()`). */
  readonly firstSeen: ReadonlyMap<string, number>;
  /** Every request the slow bus answered late, once it ended. */
  readonly slowRequests: readonly SlowRequest[];
  /** Replaces the fault rates. */
  setFaults(faults: BusFaults): void;
  /** While on, every request is answered 500 and nothing is recorded. */
  setOutage(on: boolean): void;
  /** While set, every request is recorded at once and answered after a seeded delay; `undefined` ends it. */
  setSlow(slow: SlowBus | undefined): void;
  /**
   * While set, a request whose entries total more bytes than this (EventBridge's own count) is refused as
   * EventBridge refuses it: 400 `ValidationException`, nothing recorded. `undefined` ends it.
   */
  setEntryLimit(bytes: number | undefined): void;
  /** Resolves once every slowed request has been answered or abandoned by its caller. */
  idle(): Promise<void>;
  /** Forgets what was received, the counters and the attempt numbers (the faults stay). */
  reset(): void;
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  // The SDK reads an error's shape from this header or from `__type`.
  const errorType: Record<string, string> =
    status >= 400 ? { 'x-amzn-errortype': String((body as { __type: string }).__type) } : {};
  answerJson(res, status, 'application/x-amz-json-1.1', body, errorType);
}

/** Time 14 bytes when given, and the UTF-8 bytes of Source, DetailType, Detail and each of Resources. */
function entryBytes(entry: Record<string, unknown>): number {
  const utf8 = (value: unknown) => (typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0);
  const resources = Array.isArray(entry.Resources) ? entry.Resources : [];
  return (
    (entry.Time === undefined ? 0 : 14) +
    utf8(entry.Source) +
    utf8(entry.DetailType) +
    utf8(entry.Detail) +
    resources.reduce((sum: number, resource) => sum + utf8(resource), 0)
  );
}

function deliveryOf(entry: { Detail?: unknown }): string | undefined {
  if (typeof entry.Detail !== 'string') return undefined;
  try {
    const detail = JSON.parse(entry.Detail) as { delivery?: unknown };
    return typeof detail.delivery === 'string' ? detail.delivery : undefined;
  } catch {
    return undefined;
  }
}

function emptyStats(): BusStats {
  return {
    requests: 0,
    accepted: 0,
    http500: 0,
    throttled: 0,
    lostReplies: 0,
    entryFailures: 0,
    refused: 0,
    slowed: 0,
    lateReplies: 0,
    unexpected: 0,
    sends: 0,
    tooLarge: 0,
  };
}

/**
 * Starts the bus on 127.0.0.1 and a free port. Faults default to none.
 *
 * @example
 * ```ts
 * const bus = await startFaultEventBridge({ seed: 7, faults: { entryFailureRate: 0.3 } });
 * process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.url;
 * ```
 */
export async function startFaultEventBridge(
  options: { seed?: number; faults?: BusFaults; entryLimitBytes?: number } = {},
): Promise<FaultEventBridge> {
  const seed = options.seed ?? 1;
  let faults: Required<BusFaults> = normalise(options.faults ?? {});
  let outage = false;
  let entryLimit = options.entryLimitBytes;
  let slow: SlowBus | undefined;
  const invocations = new Set<string>();
  const pending = new Set<Promise<void>>();
  const firstSeen = new Map<string, number>();
  const slowRequests: SlowRequest[] = [];
  let stats = emptyStats();
  const received = new Map<string, number>();
  const details = new Map<string, string>();
  const firstAccepted = new Map<string, number>();
  const unread = new Set<string>();
  const accept = (id: string, detail: unknown) => {
    received.set(id, (received.get(id) ?? 0) + 1);
    if (typeof detail === 'string') details.set(id, detail);
    if (!firstAccepted.has(id)) firstAccepted.set(id, performance.now());
  };
  const attempts = new Attempts();
  let anonymous = 0;

  function normalise(given: BusFaults): Required<BusFaults> {
    return {
      ...exclusiveRates(['http500Rate', 'throttleRate', 'lostReplyRate'], given),
      entryFailureRate: checkRate('entryFailureRate', given.entryFailureRate),
    };
  }

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    if (req.headers['x-amz-target'] !== 'AWSEvents.PutEvents') {
      stats.unexpected += 1;
      answer(res, 400, { __type: 'UnknownOperationException', message: 'only PutEvents is served here' });
      return;
    }
    stats.requests += 1;
    const invocation = req.headers['amz-sdk-invocation-id'];
    if (typeof invocation !== 'string' || !invocations.has(invocation)) stats.sends += 1;
    if (typeof invocation === 'string') invocations.add(invocation);
    if (outage) {
      stats.refused += 1;
      answer(res, 500, { __type: 'InternalException', message: 'bus outage (injected)' });
      return;
    }
    let entries: { Detail?: unknown }[];
    try {
      const parsed = JSON.parse(raw.toString('utf8')) as { Entries?: unknown };
      if (!Array.isArray(parsed.Entries) || parsed.Entries.length === 0) throw new Error('no entries');
      entries = parsed.Entries as { Detail?: unknown }[];
    } catch {
      answer(res, 400, { __type: 'ValidationException', message: 'request has no entries' });
      return;
    }
    if (entryLimit !== undefined) {
      const total = entries.reduce((sum, entry) => sum + entryBytes(entry as Record<string, unknown>), 0);
      if (total > entryLimit) {
        stats.tooLarge += 1;
        // EventBridge's own answer to entries over its limit, word for word.
        answer(res, 400, {
          __type: 'ValidationException',
          message: 'Total size of the entries in the request is over the limit.',
        });
        return;
      }
    }
    const ids = entries.map((entry) => deliveryOf(entry) ?? `anonymous-${anonymous++}`);
    const attempt = attempts.next(ids.join(','));
    const arrivedAt = performance.now();
    for (const id of ids) if (!firstSeen.has(id)) firstSeen.set(id, arrivedAt);
    const u = draw(seed, 'request', ids.join(','), attempt);
    if (u < faults.http500Rate) {
      stats.http500 += 1;
      answer(res, 500, { __type: 'InternalException', message: 'internal failure (injected)' });
      return;
    }
    if (u < faults.http500Rate + faults.throttleRate) {
      stats.throttled += 1;
      answer(res, 400, { __type: 'ThrottlingException', message: 'Rate exceeded' });
      return;
    }
    if (slow !== undefined) {
      if (u < (slow.refuseRate ?? 0)) {
        stats.refused += 1;
        const timer = setTimeout(
          () => answer(res, 500, { __type: 'InternalException', message: 'bus overloaded (injected)' }),
          draw(seed, 'refuse', ids.join(','), attempt) * slow.minDelayMs,
        );
        timer.unref();
        return;
      }
      answerLate(req, res, ids, entries, attempt, slow, arrivedAt);
      return;
    }
    const lost = u < faults.http500Rate + faults.throttleRate + faults.lostReplyRate;
    const results = ids.map((id, index) => {
      if (!lost && draw(seed, 'entry', id, index, attempt) < faults.entryFailureRate) {
        stats.entryFailures += 1;
        return { ErrorCode: 'InternalFailure', ErrorMessage: 'entry failed (injected)' };
      }
      stats.accepted += 1;
      accept(id, entries[index]?.Detail);
      return { EventId: `${id}-${attempt}-${index}` };
    });
    if (lost) {
      stats.lostReplies += 1;
      for (const id of ids) unread.add(id);
      req.socket.destroy();
      return;
    }
    const failed = results.filter((result) => 'ErrorCode' in result).length;
    answer(res, 200, { FailedEntryCount: failed, Entries: results });
  };

  // Accepted on arrival, as a bus that took the entry but is slow to say so; the reply waits out its delay even
  // when the caller gave up meanwhile, as the real one would.
  const answerLate = (
    req: IncomingMessage,
    res: ServerResponse,
    ids: string[],
    entries: { Detail?: unknown }[],
    attempt: number,
    window: SlowBus,
    arrivedAt: number,
  ) => {
    stats.slowed += 1;
    const results = ids.map((id, index) => {
      stats.accepted += 1;
      accept(id, entries[index]?.Detail);
      return { EventId: `${id}-${attempt}-${index}` };
    });
    const delay =
      window.minDelayMs +
      draw(seed, 'slow', ids.join(','), attempt) * (window.maxDelayMs - window.minDelayMs);
    const counted = stats;
    const log = slowRequests;
    let replied = false;
    res.on('close', () => {
      if (replied) return;
      counted.lateReplies += 1;
      for (const id of ids) unread.add(id);
      log.push({ ids, arrivedAt, endedAt: performance.now(), replied: false });
    });
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(done);
        resolve();
        if (req.socket.destroyed || res.destroyed) return;
        replied = true;
        log.push({ ids, arrivedAt, endedAt: performance.now(), replied: true });
        answer(res, 200, { FailedEntryCount: 0, Entries: results });
      }, delay);
      timer.unref();
    });
    pending.add(done);
  };

  const { url, close } = await startFaultServer('fault eventbridge', handle);

  return {
    url,
    get stats() {
      return stats;
    },
    received,
    details,
    firstSeen,
    firstAccepted,
    unread,
    get slowRequests() {
      return slowRequests;
    },
    setFaults(given) {
      faults = normalise(given);
    },
    setOutage(on) {
      outage = on;
    },
    setSlow(given) {
      if (given !== undefined && !(given.minDelayMs >= 0 && given.maxDelayMs >= given.minDelayMs)) {
        throw new TypeError('"minDelayMs" must be at least 0 and at most "maxDelayMs"');
      }
      if (given !== undefined) checkRate('refuseRate', given.refuseRate);
      slow = given;
    },
    setEntryLimit(bytes) {
      entryLimit = bytes;
    },
    async idle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    reset() {
      stats = emptyStats();
      received.clear();
      details.clear();
      firstAccepted.clear();
      unread.clear();
      attempts.clear();
      invocations.clear();
      firstSeen.clear();
      slowRequests.length = 0;
    },
    close,
  };
}
