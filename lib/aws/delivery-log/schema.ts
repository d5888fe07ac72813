/**
 * The delivery log's schema: the verdicts and outcomes a record holds, the entry the ingest hands in, the record
 * and the delivery a reader gets back, the subscribers' reports and outcomes.
 */
import type { HeaderMap, PayloadRef } from '../types.js';

/** What the signature check said of a request. */
export const DeliveryVerdicts = [
  'verified',
  'bad_signature',
  'missing_header',
  'missing_signature',
  'invalid_json',
  'invalid_delivery_id',
  'unsupported_media_type',
  'payload_too_large',
  'unknown_source',
  /** A Standard Webhooks timestamp older than its source's tolerance: late, or a captured delivery replayed. */
  'stale_timestamp',
  /** A Standard Webhooks timestamp further ahead than the tolerance (a sender's clock off). */
  'future_timestamp',
  /** A header present but not in its form (a timestamp that is not Unix seconds). */
  'invalid_header',
  /** The request was answered before its signature could be checked (secrets unavailable, not a POST, ...). */
  'not_checked',
  /** Not a request: the reconciler's row, from the forge's authenticated delivery-log API. */
  'forge_api',
] as const;
/** What the signature check said of a request. */
export type DeliveryVerdict = (typeof DeliveryVerdicts)[number];

/** What the ingest did with a request. */
export const DeliveryOutcomes = [
  'published',
  'queued',
  'duplicate',
  'in_progress',
  'failed',
  'rejected',
  /** The forge counted it failed (we answered after its timeout) but it was taken: not redelivered. */
  'late',
  /** The reconciler asked the forge to deliver it again (`redelivered by reconciler`). */
  'redelivered',
  /** Too large for the ingest: the reconciler fetched it over the forge's API and published it. */
  'recovered',
] as const;
/** What the ingest did with a request. */
export type DeliveryOutcome = (typeof DeliveryOutcomes)[number];

/** One request the ingest answered, as the ingest hands it to {@link DeliveryLog.record}. */
export interface DeliveryLogEntry {
  /** When the request came in: epoch ms or a `Date`. Default now. */
  receivedAt?: number | Date | undefined;
  /** The delivery id; one `isDeliveryId` refuses is dropped (`deliveryIdInvalid`). */
  deliveryId?: string | undefined;
  /** The catalogue event name (`issues`). */
  event?: string | undefined;
  action?: string | undefined;
  forge?: string | undefined;
  /** The configured source (`default` for `/webhooks`). */
  source?: string | undefined;
  /** The hook that sent it, where the forge names one (`X-GitHub-Hook-ID`): two Apps' deliveries of one event. */
  hook?: string | undefined;
  nativeEvent?: string | undefined;
  nativeAction?: string | undefined;
  /** Size of the raw body. Default `body.byteLength`, else 0. */
  bodyBytes?: number | undefined;
  /** Which secret of the source's list verified it, by position (0 = the first); never the secret. */
  secretIndex?: number | undefined;
  verdict: DeliveryVerdict;
  /** Why the verdict or outcome is what it is, in words safe to show (cut at 256 characters). */
  reason?: string | undefined;
  /** A failed signature's diagnosis (`diagnoseSignature`'s reasons): codes and plain words, at most 8. */
  diagnosis?: readonly DiagnosisEntry[] | undefined;
  httpStatus: number;
  outcome: DeliveryOutcome;
  /** The error code answered or logged (`publish_failed`), when there was one. */
  errorCode?: string | undefined;
  /** The EventBridge event id, when published. */
  eventId?: string | undefined;
  /** The claim-check object, when the body went to S3. */
  payloadRef?: PayloadRef | undefined;
  /** The request headers as received: they are masked here, never stored as given. */
  headers?: HeaderMap | undefined;
  /** The raw body: kept only when the log's `storePayload` is on and it fits `payloadMaxBytes`. */
  body?: Uint8Array | string | undefined;
}

/** One reason of a failed signature's diagnosis: a stable code (`wrong_secret`) and plain words. */
export interface DiagnosisEntry {
  code: string;
  message: string;
}

/** Why a record holds no body. */
export type PayloadOmitted = 'disabled' | 'too_large' | 'absent';

/** A stored record, as {@link DeliveryLog.list} (summary fields) and {@link DeliveryLog.get} (all) return it. */
export interface DeliveryRecord {
  /** Unique per request (a redelivery of one id is another record). */
  recordId: string;
  deliveryId?: string;
  /** Epoch ms. */
  receivedAt: number;
  event?: string;
  action?: string;
  forge?: string;
  source?: string;
  /** The hook that sent it, where the forge names one (`X-GitHub-Hook-ID`). */
  hook?: string;
  nativeEvent?: string;
  nativeAction?: string;
  bodyBytes: number;
  /** Which secret of the source's list verified it, by position (`get` only; records from before have none). */
  secretIndex?: number;
  verdict: DeliveryVerdict;
  reason?: string;
  /** A failed signature's diagnosis, when there was one. */
  diagnosis?: DiagnosisEntry[];
  httpStatus: number;
  outcome: DeliveryOutcome;
  errorCode?: string;
  eventId?: string;
  payloadRef?: PayloadRef;
  /** Masked headers (`get` only). */
  headers?: Record<string, string>;
  /** The header list was cut (`get` only). */
  headersTruncated?: boolean;
  /** The raw body, when stored (`get` only). */
  body?: Uint8Array;
  /** Why there is no body (`get` only). */
  payloadOmitted?: PayloadOmitted;
  /** The request's delivery id was unusable and was not kept. */
  deliveryIdInvalid?: boolean;
  /** Epoch seconds when the record expires. */
  expiresAt: number;
  /** The subscribers' outcomes of its delivery (`get`, and `list` with `subscribers: true`). */
  subscribers?: Record<string, SubscriberOutcome>;
}

/** What one subscriber reports through {@link DeliveryLog.recordSubscriber}. */
export interface SubscriberReport {
  /** The subscriber's name (its function name fits): 1 to 128 characters. */
  subscriber: string;
  outcome: 'ok' | 'error';
  durationMs: number;
  /** The error's class name and a short message (cut at 300 characters); never the payload. */
  error?: { name: string; message?: string | undefined; code?: string | undefined } | undefined;
  /** The source the delivery came in through (`detail.source`); default `default`. */
  source?: string | undefined;
  /** The hook that sent it (`detail.hook`), where the forge names one: each hook's delivery has its own outcomes. */
  hook?: string | undefined;
  /** How long its forge API calls waited for their turn (the governor), in ms; left out when they did not wait. */
  forgeWaitMs?: number | undefined;
}

/** One subscriber's latest outcome for a delivery, as stored. */
export interface SubscriberOutcome {
  outcome: 'ok' | 'error';
  durationMs: number;
  /** How long its forge API calls waited for their turn, in ms, when they did. */
  forgeWaitMs?: number;
  /** Epoch ms when it was reported. */
  at: number;
  error?: { name: string; message?: string; code?: string };
}

/** A delivery and every request of it, as {@link DeliveryLog.get} returns it. */
export interface DeliveryDetails {
  deliveryId: string;
  source?: string;
  /**
   * The hooks its records came from, when the forge names them: two when two Apps or hooks received one GitHub
   * event under one GUID (each record names its own; `subscribers` is the newest record's hook's).
   */
  hooks?: string[];
  /** The newest record. */
  latest: DeliveryRecord;
  /** Every record of the delivery id, newest first (a redelivery, a duplicate, a replay). */
  records: DeliveryRecord[];
  /** Each subscriber's latest outcome, by name. */
  subscribers: Record<string, SubscriberOutcome>;
}

/** Filters and page of {@link DeliveryLog.list}. */
export interface DeliveryListQuery {
  /** `issues` (any action) or `issues.opened`. */
  event?: string | undefined;
  /** The outcome (`published`, `duplicate`, ...). */
  status?: DeliveryOutcome | undefined;
  verdict?: DeliveryVerdict | undefined;
  source?: string | undefined;
  /** Oldest time included: epoch ms or a `Date`. Default the TTL ago. */
  since?: number | Date | undefined;
  /** Newest time excluded: epoch ms or a `Date`. Default none. */
  until?: number | Date | undefined;
  /** Records per page: 1 to 1000, default 50. */
  limit?: number | undefined;
  /** The `cursor` of the previous page. */
  cursor?: string | undefined;
  /** Also read each record's subscribers' outcomes (one BatchGetItem per 100 deliveries). */
  subscribers?: boolean | undefined;
}

/** A page of {@link DeliveryLog.list}: newest first; `cursor` is set when more may follow. */
export interface DeliveryListPage {
  records: DeliveryRecord[];
  cursor?: string;
}

/** What {@link DeliveryLog.record} did: it never throws. */
export type RecordResult = { ok: true; recordId: string } | { ok: false; error: unknown };
