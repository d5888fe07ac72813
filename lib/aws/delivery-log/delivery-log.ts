import { randomBytes, randomInt } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, DeliveryLogTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { isConditionalCheckFailed } from '../errors.js';
import { errorCode, isDeliveryId, positive } from '../rules.js';
import type { HeaderMap, LoggerLike, PayloadRef } from '../types.js';
import { forgeHeaders, maskHeaders } from './mask-headers.js';

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
  /** The delivery id; one that is not 1 to 256 visible ASCII characters is dropped (`deliveryIdInvalid`). */
  deliveryId?: string | undefined;
  /** The catalogue event name (`issues`). */
  event?: string | undefined;
  action?: string | undefined;
  forge?: string | undefined;
  /** The configured source (`default` for `/webhooks`). */
  source?: string | undefined;
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
}

/** One subscriber's latest outcome for a delivery, as stored. */
export interface SubscriberOutcome {
  outcome: 'ok' | 'error';
  durationMs: number;
  /** Epoch ms when it was reported. */
  at: number;
  error?: { name: string; message?: string; code?: string };
}

/** A delivery and every request of it, as {@link DeliveryLog.get} returns it. */
export interface DeliveryDetails {
  deliveryId: string;
  source?: string;
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

/** Options of {@link DeliveryLog}. Defaults live in {@link AwsDefaults}. */
export interface DeliveryLogOptions {
  /** DynamoDB client of the delivery log table. */
  client: DynamoDBClient;
  /** The table (`infra/tables.yml` `DeliveriesTable`). */
  tableName: string;
  /** How long a record lives, in seconds. Default 1209600 (14 days). */
  ttlSeconds?: number | undefined;
  /** Keep the raw body in each record (off by default; the local stack turns it on). */
  storePayload?: boolean | undefined;
  /** Largest body kept when `storePayload` is on, at most 358400 (350 KB). Default 307200 (300 KB). */
  payloadMaxBytes?: number | undefined;
  /**
   * Write shards per day of the list index, 1 to 64. Default 4. Readers and writers of one table must agree:
   * records written to a shard a reader does not know are not listed (until it knows it).
   */
  indexShards?: number | undefined;
  /** Where a failed `record` is logged (its error code and delivery id only). */
  logger?: Pick<LoggerLike, 'warn'> | undefined;
}

const RECORD_PREFIX = 'record#';
const SUBSCRIBERS_SK = 'subscribers';
const DELIVERY_PREFIX = 'delivery#';
const REQUEST_PREFIX = 'request#';
/** A secret's position in a source's list, when it is one (a small non-negative integer); else none. */
function secretIndexOf(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < 1000
    ? (value as number)
    : undefined;
}

/** Keeps every record under DynamoDB's 400 KB item limit: body + headers (≤ 100 × ~1.3 KB) + summary. */
const MAX_PAYLOAD_BYTES = 350 * 1024;
const MAX_LIMIT = 1000;
const MAX_TEXT = 256;
const DAY_MS = 24 * 60 * 60 * 1000;
const SUMMARY = new Set<string>(DeliveryLogTable.listAttributes);

/** A string safe to store and show: control characters replaced, cut at `max` characters. */
function text(value: unknown, max = MAX_TEXT): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** A diagnosis safe to store: at most 8 reasons, each code and message cut; `undefined` when empty. */
function diagnosisOf(reasons: readonly DiagnosisEntry[] | undefined): DiagnosisEntry[] | undefined {
  if (!Array.isArray(reasons)) return undefined;
  const kept: DiagnosisEntry[] = [];
  for (const reason of reasons.slice(0, 8)) {
    const code = text(reason?.code, 64);
    const message = text(reason?.message, 512);
    if (code !== undefined && message !== undefined) kept.push({ code, message });
  }
  return kept.length > 0 ? kept : undefined;
}

function epochMs(name: string, value: number | Date | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`"${name}" must be a date or epoch milliseconds`);
  }
  return ms;
}

/** How many distinct headers (any case) a header map holds. */
function headerCount(headers: HeaderMap | undefined): number {
  if (typeof headers !== 'object' || headers === null) return 0;
  const names = new Set<string>();
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) names.add(name.toLowerCase());
  return names.size;
}

/** The partition of a delivery: `delivery#` and its dedupe key (two sources' ids never share one). */
function deliveryPk(deliveryId: string, source: string | undefined): string {
  return `${DELIVERY_PREFIX}${dedupeKeyOf({ id: deliveryId, source })}`;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function encodeCursor(at: string): string {
  return Buffer.from(JSON.stringify({ b: at }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const { b } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { b?: unknown };
    if (typeof b === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z#[\w-]+$/.test(b)) return b;
  } catch {
    // falls through to the error below
  }
  throw new TypeError('"cursor" is not a cursor of this log');
}

function toRecord(item: Record<string, unknown>): DeliveryRecord {
  const record: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) {
    if (
      name === DeliveryLogTable.partitionKey ||
      name === DeliveryLogTable.sortKey ||
      name === DeliveryLogTable.dayAttribute ||
      name === DeliveryLogTable.atAttribute
    ) {
      continue;
    }
    record[name] = value;
  }
  return record as unknown as DeliveryRecord;
}

function subscribersOf(item: Record<string, unknown> | undefined): Record<string, SubscriberOutcome> {
  const map = item?.subscribers;
  return typeof map === 'object' && map !== null ? (map as Record<string, SubscriberOutcome>) : {};
}

/**
 * The delivery log: one record per request the ingest answers, in its own DynamoDB table, kept `ttlSeconds`.
 *
 * A record (`pk` = `delivery#<id>`, `sk` = `record#<ISO receivedAt>#<record id>`) holds the summary, the masked
 * headers and, with `storePayload`, the raw body. `record` is one PutItem and never throws. Subscribers' outcomes
 * live beside the records in one `subscribers` item per delivery (a map keyed by subscriber name): a record's put
 * and a subscriber's update never overwrite each other, whichever lands first. `list` reads the `by-day` index
 * (partition `<UTC day>#<shard>`, sort `<ISO receivedAt>#<record id>`), newest first.
 *
 * @example
 * ```ts
 * const log = new DeliveryLog({ client: new DynamoDBClient({}), tableName: 'forgebridge-dev-deliveries' });
 * await log.record({ deliveryId, event: 'issues', verdict: 'verified', httpStatus: 202, outcome: 'published' });
 * const { records, cursor } = await log.list({ event: 'issues.opened', status: 'failed', limit: 20 });
 * ```
 */
export class DeliveryLog {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;
  readonly #storePayload: boolean;
  readonly #payloadMaxBytes: number;
  readonly #shards: number;
  readonly #logger: Pick<LoggerLike, 'warn'> | undefined;

  constructor(options: DeliveryLogOptions) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    this.#documents = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.#tableName = options.tableName;
    this.#ttlSeconds = positive('ttlSeconds', options.ttlSeconds ?? AwsDefaults.deliveryLogTtlSeconds);
    this.#storePayload = options.storePayload === true;
    this.#payloadMaxBytes = positive(
      'payloadMaxBytes',
      options.payloadMaxBytes ?? AwsDefaults.deliveryLogPayloadMaxBytes,
      MAX_PAYLOAD_BYTES,
    );
    const shards = options.indexShards ?? AwsDefaults.deliveryLogIndexShards;
    if (!Number.isInteger(shards)) throw new TypeError('"indexShards" must be a number from 1 to 64');
    this.#shards = positive('indexShards', shards, 64);
    if (options.logger !== undefined && typeof options.logger.warn !== 'function') {
      throw new TypeError('"logger" must have a "warn" function');
    }
    this.#logger = options.logger;
  }

  /** Whether records keep the raw body. */
  get storesPayload(): boolean {
    return this.#storePayload;
  }

  /** The item of an entry; throws a `TypeError` naming the field when the entry is not one. */
  #item(entry: DeliveryLogEntry): { item: Record<string, unknown>; recordId: string } {
    if (typeof entry !== 'object' || entry === null) throw new TypeError('"entry" must be an object');
    if (!(DeliveryVerdicts as readonly string[]).includes(entry.verdict)) {
      throw new TypeError(`"verdict" must be one of ${DeliveryVerdicts.map((v) => `"${v}"`).join(', ')}`);
    }
    if (!(DeliveryOutcomes as readonly string[]).includes(entry.outcome)) {
      throw new TypeError(`"outcome" must be one of ${DeliveryOutcomes.map((v) => `"${v}"`).join(', ')}`);
    }
    if (!Number.isInteger(entry.httpStatus) || entry.httpStatus < 100 || entry.httpStatus > 599) {
      throw new TypeError('"httpStatus" must be an http status code');
    }
    const receivedAt = epochMs('receivedAt', entry.receivedAt, Date.now());
    const body =
      typeof entry.body === 'string'
        ? Buffer.from(entry.body, 'utf8')
        : entry.body instanceof Uint8Array
          ? entry.body
          : undefined;
    const bodyBytes = entry.bodyBytes ?? body?.byteLength ?? 0;
    if (!Number.isInteger(bodyBytes) || bodyBytes < 0) {
      throw new TypeError('"bodyBytes" must be a non-negative integer');
    }
    const recordId = randomBytes(9).toString('base64url');
    const at = `${new Date(receivedAt).toISOString()}#${recordId}`;
    const validId = isDeliveryId(entry.deliveryId);
    const source = text(entry.source);
    const sent = forgeHeaders(entry.headers);
    const headers = maskHeaders(sent);
    const item: Record<string, unknown> = {
      [DeliveryLogTable.partitionKey]: validId
        ? deliveryPk(entry.deliveryId as string, source)
        : `${REQUEST_PREFIX}${recordId}`,
      [DeliveryLogTable.sortKey]: `${RECORD_PREFIX}${at}`,
      [DeliveryLogTable.dayAttribute]: `${dayOf(receivedAt)}#${randomInt(this.#shards)}`,
      [DeliveryLogTable.atAttribute]: at,
      recordId,
      deliveryId: validId ? entry.deliveryId : undefined,
      deliveryIdInvalid: entry.deliveryId !== undefined && !validId ? true : undefined,
      receivedAt,
      event: text(entry.event),
      action: text(entry.action),
      forge: text(entry.forge),
      source,
      nativeEvent: text(entry.nativeEvent),
      nativeAction: text(entry.nativeAction),
      bodyBytes,
      secretIndex: secretIndexOf(entry.secretIndex),
      verdict: entry.verdict,
      reason: text(entry.reason),
      diagnosis: diagnosisOf(entry.diagnosis),
      httpStatus: entry.httpStatus,
      outcome: entry.outcome,
      errorCode: text(entry.errorCode, 64),
      eventId: text(entry.eventId),
      payloadRef: entry.payloadRef,
      headers,
      headersTruncated: headerCount(sent) > Object.keys(headers).length ? true : undefined,
      [DeliveryLogTable.ttlAttribute]: Math.floor(receivedAt / 1000) + this.#ttlSeconds,
    };
    for (const [name, value] of Object.entries(item)) if (value === undefined) delete item[name];
    if (body === undefined || body.byteLength === 0) {
      item.payloadOmitted = 'absent' satisfies PayloadOmitted;
    } else if (!this.#storePayload) {
      item.payloadOmitted = 'disabled' satisfies PayloadOmitted;
    } else if (body.byteLength > this.#payloadMaxBytes) {
      item.payloadOmitted = 'too_large' satisfies PayloadOmitted;
    } else {
      item.body = body;
    }
    return { item, recordId };
  }

  /**
   * Records one answered request with one PutItem. Never throws: a bad entry or a failed write resolves
   * `{ ok: false, error }` and logs a warning (error code and delivery id only), so a log failure never fails
   * the delivery.
   */
  async record(entry: DeliveryLogEntry): Promise<RecordResult> {
    try {
      const { item, recordId } = this.#item(entry);
      await this.#documents.send(new PutCommand({ TableName: this.#tableName, Item: item }));
      return { ok: true, recordId };
    } catch (error) {
      try {
        this.#logger?.warn('delivery log write failed', {
          code: errorCode(error),
          ...(isDeliveryId(entry?.deliveryId) ? { delivery: entry.deliveryId } : {}),
        });
      } catch {
        // A throwing logger must not turn a failed log write into a failed delivery either.
      }
      return { ok: false, error };
    }
  }

  /**
   * A delivery and every request of it (newest first), with its subscribers' outcomes, headers and body when
   * stored; `undefined` when the log has no record of it. `source` is the source it came in through (default
   * `default`).
   */
  async get(
    deliveryId: string,
    options: { source?: string | undefined } = {},
  ): Promise<DeliveryDetails | undefined> {
    if (!isDeliveryId(deliveryId)) {
      throw new TypeError(
        `"deliveryId" must be 1 to ${AwsDefaults.maxDeliveryIdLength} visible ascii characters`,
      );
    }
    const pk = deliveryPk(deliveryId, options.source);
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.#documents.send(
        new QueryCommand({
          TableName: this.#tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': DeliveryLogTable.partitionKey },
          ExpressionAttributeValues: { ':pk': pk },
          ScanIndexForward: false,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    const subscribersItem = items.find((item) => item[DeliveryLogTable.sortKey] === SUBSCRIBERS_SK);
    const subscribers = subscribersOf(subscribersItem);
    const records = items
      .filter((item) => String(item[DeliveryLogTable.sortKey]).startsWith(RECORD_PREFIX))
      .map((item) => ({ ...toRecord(item), subscribers }));
    const [latest] = records;
    if (latest === undefined) return undefined;
    return {
      deliveryId,
      ...(latest.source !== undefined ? { source: latest.source } : {}),
      latest,
      records,
      subscribers,
    };
  }

  /**
   * Records, newest first, from the `by-day` index: the time window is the index's key condition, `event`,
   * `status`, `verdict` and `source` are filters on the window's summaries. Pass the page's `cursor` back for
   * the next one. Throws a `TypeError` naming the field on a bad query.
   */
  async list(query: DeliveryListQuery = {}): Promise<DeliveryListPage> {
    const limit = query.limit ?? AwsDefaults.deliveryLogListLimit;
    if (!Number.isInteger(limit)) throw new TypeError(`"limit" must be a number from 1 to ${MAX_LIMIT}`);
    positive('limit', limit, MAX_LIMIT);
    if (query.status !== undefined && !(DeliveryOutcomes as readonly string[]).includes(query.status)) {
      throw new TypeError(`"status" must be one of ${DeliveryOutcomes.map((v) => `"${v}"`).join(', ')}`);
    }
    if (query.verdict !== undefined && !(DeliveryVerdicts as readonly string[]).includes(query.verdict)) {
      throw new TypeError(`"verdict" must be one of ${DeliveryVerdicts.map((v) => `"${v}"`).join(', ')}`);
    }
    if (query.event !== undefined && (typeof query.event !== 'string' || query.event === '')) {
      throw new TypeError('"event" must be a non-empty string');
    }
    const now = Date.now();
    const since = epochMs('since', query.since, now - this.#ttlSeconds * 1000);
    const until = query.until === undefined ? undefined : epochMs('until', query.until, now);
    let upper = until === undefined ? undefined : new Date(until).toISOString();
    if (query.cursor !== undefined) {
      const before = decodeCursor(query.cursor);
      if (upper === undefined || before < upper) upper = before;
    }
    const lower = new Date(since).toISOString();
    // A writer's clock a little ahead of ours still lands in a day we read.
    const newestDay = upper === undefined ? dayOf(now + 5 * 60 * 1000) : upper.slice(0, 10);
    const oldestDay = dayOf(since);

    const filters: string[] = [`#exp > :nowSeconds`];
    const names: Record<string, string> = { '#exp': DeliveryLogTable.ttlAttribute };
    const values: Record<string, unknown> = { ':nowSeconds': Math.floor(now / 1000) };
    if (query.event !== undefined) {
      const dot = query.event.indexOf('.');
      names['#event'] = 'event';
      values[':event'] = dot === -1 ? query.event : query.event.slice(0, dot);
      filters.push('#event = :event');
      if (dot !== -1) {
        names['#action'] = 'action';
        values[':action'] = query.event.slice(dot + 1);
        filters.push('#action = :action');
      }
    }
    for (const [field, value] of [
      ['outcome', query.status],
      ['verdict', query.verdict],
      ['source', query.source],
    ] as const) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      filters.push(`#${field} = :${field}`);
    }

    const found: Record<string, unknown>[] = [];
    let more = false;
    for (let day = newestDay; day >= oldestDay; day = dayOf(Date.parse(`${day}T00:00:00Z`) - DAY_MS)) {
      const need = limit - found.length;
      const shards = await Promise.all(
        Array.from({ length: this.#shards }, (_, shard) =>
          this.#queryShard(`${day}#${shard}`, lower, upper, need, filters, names, values),
        ),
      );
      const merged = shards
        .flatMap((shard) => shard.items)
        .sort((a, b) =>
          String(b[DeliveryLogTable.atAttribute]).localeCompare(String(a[DeliveryLogTable.atAttribute])),
        );
      found.push(...merged.slice(0, need));
      if (found.length >= limit) {
        more = merged.length > need || shards.some((shard) => shard.more) || day > oldestDay;
        break;
      }
    }
    const records = found.map((item) => {
      const summary: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(item)) if (SUMMARY.has(name)) summary[name] = value;
      return summary as unknown as DeliveryRecord;
    });
    if (query.subscribers === true) await this.#attachSubscribers(records);
    const last = found.at(-1);
    return more && last !== undefined
      ? { records, cursor: encodeCursor(String(last[DeliveryLogTable.atAttribute])) }
      : { records };
  }

  /** Up to `need` matching index items of one day shard, newest first, paging past filtered-out items. */
  async #queryShard(
    day: string,
    lower: string,
    upper: string | undefined,
    need: number,
    filters: string[],
    names: Record<string, string>,
    values: Record<string, unknown>,
  ): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    const filtered = filters.length > 1;
    do {
      const input: QueryCommandInput = {
        TableName: this.#tableName,
        IndexName: DeliveryLogTable.listIndex,
        KeyConditionExpression:
          upper === undefined
            ? '#day = :day AND #at >= :lower'
            : '#day = :day AND #at BETWEEN :lower AND :upper',
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: {
          ...names,
          '#day': DeliveryLogTable.dayAttribute,
          '#at': DeliveryLogTable.atAttribute,
        },
        ExpressionAttributeValues: {
          ...values,
          ':day': day,
          ':lower': lower,
          // BETWEEN is inclusive: the cursor's own record is dropped below.
          ...(upper === undefined ? {} : { ':upper': upper }),
        },
        ScanIndexForward: false,
        // A filtered read evaluates more items per page than it returns.
        Limit: filtered ? Math.max(need, 100) : need + 1,
        ExclusiveStartKey: start,
      };
      const page = await this.#documents.send(new QueryCommand(input));
      for (const item of page.Items ?? []) {
        if (upper !== undefined && item[DeliveryLogTable.atAttribute] === upper) continue;
        items.push(item);
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined && items.length < need);
    return { items: items.slice(0, need), more: items.length > need || start !== undefined };
  }

  async #attachSubscribers(records: DeliveryRecord[]): Promise<void> {
    const keys = new Map<string, Record<string, string>>();
    for (const record of records) {
      if (record.deliveryId === undefined) continue;
      const pk = deliveryPk(record.deliveryId, record.source);
      keys.set(pk, { [DeliveryLogTable.partitionKey]: pk, [DeliveryLogTable.sortKey]: SUBSCRIBERS_SK });
    }
    const byPk = new Map<string, Record<string, SubscriberOutcome>>();
    const all = [...keys.values()];
    for (let index = 0; index < all.length; index += 100) {
      let pending: Record<string, unknown>[] | undefined = all.slice(index, index + 100);
      for (let attempt = 0; pending !== undefined && pending.length > 0 && attempt < 5; attempt += 1) {
        const answer: BatchGetCommandOutput = await this.#documents.send(
          new BatchGetCommand({ RequestItems: { [this.#tableName]: { Keys: pending } } }),
        );
        for (const item of answer.Responses?.[this.#tableName] ?? []) {
          byPk.set(String(item[DeliveryLogTable.partitionKey]), subscribersOf(item));
        }
        pending = answer.UnprocessedKeys?.[this.#tableName]?.Keys;
      }
    }
    for (const record of records) {
      if (record.deliveryId === undefined) continue;
      record.subscribers = byPk.get(deliveryPk(record.deliveryId, record.source)) ?? {};
    }
  }

  /**
   * Records one subscriber's outcome for a delivery: an UpdateItem setting its entry in the delivery's
   * `subscribers` map, so subscribers reporting at once never overwrite each other (a subscriber's retry
   * replaces its own entry). Throws a `TypeError` on a bad report, or the SDK's error.
   */
  async recordSubscriber(deliveryId: string, report: SubscriberReport): Promise<void> {
    if (!isDeliveryId(deliveryId)) {
      throw new TypeError(
        `"deliveryId" must be 1 to ${AwsDefaults.maxDeliveryIdLength} visible ascii characters`,
      );
    }
    if (typeof report !== 'object' || report === null) throw new TypeError('"report" must be an object');
    const { subscriber } = report;
    if (typeof subscriber !== 'string' || subscriber === '' || subscriber.length > 128) {
      throw new TypeError('"subscriber" must be a name of 1 to 128 characters');
    }
    if (report.outcome !== 'ok' && report.outcome !== 'error') {
      throw new TypeError('"outcome" must be "ok" or "error"');
    }
    if (
      typeof report.durationMs !== 'number' ||
      !Number.isFinite(report.durationMs) ||
      report.durationMs < 0
    ) {
      throw new TypeError('"durationMs" must be a non-negative number');
    }
    const now = Date.now();
    const outcome: SubscriberOutcome = {
      outcome: report.outcome,
      durationMs: Math.round(report.durationMs),
      at: now,
    };
    if (report.error !== undefined) {
      const name = text(report.error.name, 100) ?? 'Error';
      const message = text(report.error.message, 300);
      const code = text(report.error.code, 64);
      outcome.error = {
        name,
        ...(message !== undefined ? { message } : {}),
        ...(code !== undefined ? { code } : {}),
      };
    }
    const key = {
      [DeliveryLogTable.partitionKey]: deliveryPk(deliveryId, text(report.source)),
      [DeliveryLogTable.sortKey]: SUBSCRIBERS_SK,
    };
    const expiresAt = Math.floor(now / 1000) + this.#ttlSeconds;
    const names = { '#subs': 'subscribers', '#exp': DeliveryLogTable.ttlAttribute };
    // The map's first entry creates it: one write when this subscriber is the delivery's first (the usual case,
    // one subscriber per delivery). A nested SET needs the map to exist, so a later subscriber's refused create
    // is followed by that SET (each write, refused or not, is billed).
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await this.#documents.send(
          new UpdateCommand({
            TableName: this.#tableName,
            Key: key,
            UpdateExpression: 'SET #subs = :map, #exp = :exp',
            ConditionExpression: 'attribute_not_exists(#subs)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':map': { [subscriber]: outcome }, ':exp': expiresAt },
          }),
        );
        return;
      } catch (error) {
        // Another subscriber created the map first: set this entry in it.
        if (!isConditionalCheckFailed(error)) throw error;
      }
      try {
        await this.#documents.send(
          new UpdateCommand({
            TableName: this.#tableName,
            Key: key,
            UpdateExpression: 'SET #subs.#name = :outcome, #exp = :exp',
            ConditionExpression: 'attribute_exists(#subs)',
            ExpressionAttributeNames: { ...names, '#name': subscriber },
            ExpressionAttributeValues: { ':outcome': outcome, ':exp': expiresAt },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
    throw new Error('subscriber outcome could not be recorded after 3 attempts');
  }
}
