/**
 * The delivery log's items: key building (a delivery's partition, a record's sort key, the list index's day
 * shard), the item of an entry, and the record a stored item reads back as.
 */
import { randomInt } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeliveryLogTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { randomId } from '../random-id.js';
import { isDeliveryId } from '../rules.js';
import type { HeaderMap } from '../types.js';
import { forgeHeaders, maskHeaders } from './mask-headers.js';
import {
  type DeliveryLogEntry,
  DeliveryOutcomes,
  type DeliveryRecord,
  DeliveryVerdicts,
  type DiagnosisEntry,
  type PayloadOmitted,
  type SubscriberOutcome,
} from './schema.js';

export const RECORD_PREFIX = 'record#';
export const SUBSCRIBERS_SK = 'subscribers';
const DELIVERY_PREFIX = 'delivery#';
const REQUEST_PREFIX = 'request#';
const MAX_TEXT = 256;

/** A string safe to store and show: control characters replaced, cut at `max` characters. */
export function text(value: unknown, max = MAX_TEXT): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** A diagnosis safe to store: at most 8 reasons, each code and message cut; `undefined` when empty. */
/** A secret's position in a source's list, when it is one (a small non-negative integer); else none. */
function secretIndexOf(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < 1000
    ? (value as number)
    : undefined;
}

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

export function epochMs(name: string, value: number | Date | undefined, fallback: number): number {
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

/**
 * The partition of a delivery id: `delivery#` and its dedupe key without the hook (two sources' ids never share
 * one), so that every hook's records of one GitHub GUID are read together; each record names its hook.
 */
export function deliveryPk(deliveryId: string, source: string | undefined): string {
  return `${DELIVERY_PREFIX}${dedupeKeyOf({ id: deliveryId, source })}`;
}

/** The sort key of a delivery's subscribers item: one per hook, where the forge names one. */
export function subscribersSk(hook: string | undefined): string {
  return hook === undefined || hook === '' ? SUBSCRIBERS_SK : `${SUBSCRIBERS_SK}#hook#${hook}`;
}

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function toRecord(item: Record<string, unknown>): DeliveryRecord {
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

export function subscribersOf(item: Record<string, unknown> | undefined): Record<string, SubscriberOutcome> {
  const map = item?.subscribers;
  return typeof map === 'object' && map !== null ? (map as Record<string, SubscriberOutcome>) : {};
}

/** How the log writes an item: its TTL, list index shards and payload settings. */
export interface ItemSettings {
  ttlSeconds: number;
  shards: number;
  storePayload: boolean;
  payloadMaxBytes: number;
}

/** The log's table and settings, as the {@link DeliveryLog} class hands them to its reader and subscriber helpers. */
export interface LogTable extends ItemSettings {
  documents: DynamoDBDocumentClient;
  tableName: string;
}

/** The item of an entry; throws a `TypeError` naming the field when the entry is not one. */
export function itemOf(
  entry: DeliveryLogEntry,
  settings: ItemSettings,
): { item: Record<string, unknown>; recordId: string } {
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
  const recordId = randomId(9);
  const at = `${new Date(receivedAt).toISOString()}#${recordId}`;
  const validId = isDeliveryId(entry.deliveryId);
  const source = text(entry.source);
  const sent = forgeHeaders(entry.headers);
  const headers = maskHeaders(sent, entry.forge);
  const item: Record<string, unknown> = {
    [DeliveryLogTable.partitionKey]: validId
      ? deliveryPk(entry.deliveryId as string, source)
      : `${REQUEST_PREFIX}${recordId}`,
    [DeliveryLogTable.sortKey]: `${RECORD_PREFIX}${at}`,
    [DeliveryLogTable.dayAttribute]: `${dayOf(receivedAt)}#${randomInt(settings.shards)}`,
    [DeliveryLogTable.atAttribute]: at,
    recordId,
    deliveryId: validId ? entry.deliveryId : undefined,
    deliveryIdInvalid: entry.deliveryId !== undefined && !validId ? true : undefined,
    receivedAt,
    event: text(entry.event),
    action: text(entry.action),
    forge: text(entry.forge),
    source,
    hook: text(entry.hook, 128),
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
    [DeliveryLogTable.ttlAttribute]: Math.floor(receivedAt / 1000) + settings.ttlSeconds,
  };
  for (const [name, value] of Object.entries(item)) if (value === undefined) delete item[name];
  if (body === undefined || body.byteLength === 0) {
    item.payloadOmitted = 'absent' satisfies PayloadOmitted;
  } else if (!settings.storePayload) {
    item.payloadOmitted = 'disabled' satisfies PayloadOmitted;
  } else if (body.byteLength > settings.payloadMaxBytes) {
    item.payloadOmitted = 'too_large' satisfies PayloadOmitted;
  } else {
    item.body = body;
  }
  return { item, recordId };
}
