import type { ForgeGovernor } from '../governor/governor.js';
/** One attempt in a forge's delivery log, forge-neutral. */
export interface ForgeDelivery {
  /** The attempt's id in the forge's log (what redelivery and fetch take). */
  attemptId: number;
  /** Our delivery id: GitHub's `guid` (`X-GitHub-Delivery`), GitLab's `X-Gitlab-Event-UUID`. */
  deliveryId: string;
  /** When the forge made the attempt, epoch ms. */
  at: number;
  /** The status our side answered; 0 when the forge got none (timed out, could not connect). */
  statusCode: number;
  /** The forge's event name (`issues`, `Push Hook`), and the action when it lists one. */
  event: string;
  action?: string;
  /** Whether the attempt was itself a redelivery. */
  redelivery: boolean;
}

/** A delivery's body and headers as the forge's API gives them back. */
export interface ForgePayload {
  /** The request headers the forge sent (or would send), lowercase names. */
  headers: Record<string, string>;
  /** The JSON payload. */
  payload: unknown;
}

/** The token a hook's API calls carry: its header value, and a forced renewal after a 401. */
export interface HookAuth {
  /** The forge API governor of the token's owner: every call of the hook takes its turn there. */
  readonly governor?: ForgeGovernor | undefined;
  /** The `authorization` header value. */
  authorization(): Promise<string>;
  /** Gets a new token (once per 401). */
  renew(): Promise<void>;
}

/** One forge's delivery-log API for one hook. */
export interface DeliveryLogApi {
  /** `github` or `gitlab`. */
  readonly forge: 'github' | 'gitlab';
  /** Pages of attempts, newest first, until one older than `since` (epoch ms) or `maxPages`. */
  list(since: number, maxPages: number): AsyncIterable<ForgeDelivery[]>;
  /** Asks the forge to deliver the attempt's delivery again. */
  redeliver(attempt: ForgeDelivery): Promise<void>;
  /** The attempt's request headers and payload. */
  fetchPayload(attempt: ForgeDelivery): Promise<ForgePayload>;
  /**
   * The id the forge sends as its hook header in this hook's deliveries, where the hook's configuration does not
   * name it (a GitHub App's one hook): read from one attempt's request headers, then kept. `undefined` where the
   * deliveries carry none. Absent where the configured hook already names it, or the forge sends none.
   */
  hookOf?(attempt: ForgeDelivery): Promise<string | undefined>;
}

/** What one reconciliation run did, summed over its sources. */
export interface ReconcileReport {
  /** Sources reconciled (that name a hook). */
  sources: number;
  /** Attempts listed from the forges' logs. */
  listed: number;
  /** Deliveries whose latest attempt failed at the forge. */
  failed: number;
  /** Of those, deliveries our side took (a completed dedupe record): never redelivered. */
  alreadyOurs: number;
  /** Of those, logged `late` in the delivery log by this run (the first time it saw them). */
  late: number;
  /** Deliveries the forge was asked to deliver again. */
  redelivered: number;
  /** Deliveries too large for the ingest, fetched over the API and published by the reconciler. */
  recovered: number;
  /** Failed deliveries left for a later run: backoff, the per-run bound, an ingest attempt holding it, a stop. */
  skipped: number;
  /** Deliveries given up after the forge's window (metric line and alarm). */
  gaveUp: number;
  /** Sources whose reconciliation ended on an error (the API down, a malformed answer, refused). */
  errors: number;
  /** The run stopped on a rate limit; the rest waits for the next run. */
  rateLimited: boolean;
  /** A dry run: nothing was redelivered, published or written. */
  dryRun: boolean;
  /** Per source reconciled: failed at the forge and never ours, redelivered, recovered (the run's metrics). */
  bySource: Record<string, SourceCounts>;
}

/** One source's share of a {@link ReconcileReport}. */
export interface SourceCounts {
  /** Deliveries whose latest attempt failed at the forge and that our side never took. */
  failedAtForge: number;
  redelivered: number;
  recovered: number;
}
