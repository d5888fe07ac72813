import { ENTRY_TIME_BYTES } from '../constants.js';
import type { Delivery, DeliveryDetail, DeliveryEntry, PayloadRef } from '../types.js';

/** Options of {@link buildEventEntry}. */
export interface EventEntryOptions {
  /** EventBridge `Source`. */
  source: string;
  /** Target bus name or ARN; omitted means the account's default bus. */
  eventBusName?: string | undefined;
  /** When set, the entry carries this reference and only the routing fields of the payload (claim check). */
  payloadRef?: PayloadRef | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The payload's `action` when it is a non-empty string, else `undefined`. */
export function actionOf(payload: unknown): string | undefined {
  if (!isRecord(payload)) return undefined;
  const action = payload.action;
  return typeof action === 'string' && action !== '' ? action : undefined;
}

/** The EventBridge `DetailType` of a delivery: `event.action` when the payload has a string action, else `event`. */
export function detailTypeOf(name: string, payload: unknown): string {
  const action = actionOf(payload);
  return action === undefined ? name : `${name}.${action}`;
}

function pick(source: unknown, path: readonly string[]): unknown {
  let value: unknown = source;
  for (const segment of path) {
    if (!isRecord(value)) return undefined;
    value = value[segment];
  }
  return value;
}

function put(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (isRecord(next)) {
      node = next;
    } else {
      const created: Record<string, unknown> = {};
      node[segment] = created;
      node = created;
    }
  }
  node[path[path.length - 1]!] = value;
}

const ROUTING_PATHS: readonly (readonly string[])[] = [
  ['action'],
  ['repository', 'id'],
  ['repository', 'name'],
  ['repository', 'full_name'],
  ['repository', 'owner', 'login'],
  ['organization', 'login'],
  ['sender', 'login'],
  ['installation', 'id'],
];

/**
 * The small routing fields of a payload, at their usual paths, so rules keep matching a claim-checked event:
 * `action`, `repository.{id,name,full_name,owner.login}`, `organization.login`, `sender.login`,
 * `installation.id`. Only scalar values are copied.
 */
export function routingFieldsOf(payload: unknown): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const path of ROUTING_PATHS) {
    const value = pick(payload, path);
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      put(fields, path, value);
    }
  }
  return fields;
}

/** The delivery's action: the mapped one when it was read with a forge preset, else `payload.action`. */
function deliveryAction(delivery: DeliveryFields): string | undefined {
  if (delivery.forge === undefined) return actionOf(delivery.payload);
  return typeof delivery.action === 'string' && delivery.action !== '' ? delivery.action : undefined;
}

type DeliveryFields = Pick<Delivery, 'id' | 'name' | 'payload'> &
  Partial<
    Pick<Delivery, 'action' | 'forge' | 'source' | 'hook' | 'nativeEvent' | 'nativeAction' | 'verified'>
  >;

/**
 * Builds the one PutEvents entry of a delivery: `detail = { delivery, event, action?, forge?, source?,
 * nativeEvent?, nativeAction?, payload }`, or with a `payloadRef` the routing fields only plus the reference.
 * The detail-type is `event.action` with the catalogue's names, so one rule serves every forge; `forge`,
 * `source` and the forge's own names let a rule select one of them.
 */
export function buildEventEntry(delivery: DeliveryFields, options: EventEntryOptions): DeliveryEntry {
  const action = deliveryAction(delivery);
  // Key order: delivery, event, action?, forge?, source?, hook?, nativeEvent?, nativeAction?, payload, payloadRef?
  // (readable in the console, stable in tests).
  const { forge, source, hook, nativeEvent, nativeAction, verified } = delivery;
  const detail: DeliveryDetail = {
    delivery: delivery.id,
    event: delivery.name,
    ...(action === undefined ? {} : { action }),
    ...(forge === undefined ? {} : { forge }),
    ...(source === undefined ? {} : { source }),
    ...(hook === undefined ? {} : { hook }),
    ...(nativeEvent === undefined ? {} : { nativeEvent }),
    ...(nativeAction === undefined ? {} : { nativeAction }),
    ...(verified === undefined ? {} : { verified }),
    payload: undefined,
  };
  if (options.payloadRef === undefined) {
    detail.payload = delivery.payload;
  } else {
    detail.payload = routingFieldsOf(delivery.payload);
    detail.payloadRef = options.payloadRef;
  }
  const entry: DeliveryEntry = {
    Source: options.source,
    DetailType: action === undefined ? delivery.name : `${delivery.name}.${action}`,
    Detail: JSON.stringify(detail),
  };
  if (options.eventBusName !== undefined) entry.EventBusName = options.eventBusName;
  return entry;
}

/**
 * The size EventBridge counts for an entry: UTF-8 bytes of `Source`, `DetailType`, `Detail` and each of
 * `Resources`, plus 14 bytes for `Time`. `EventBusName` does not count.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 */
export function eventEntrySize(entry: DeliveryEntry): number {
  let size = ENTRY_TIME_BYTES;
  size += Buffer.byteLength(entry.Source, 'utf8');
  size += Buffer.byteLength(entry.DetailType, 'utf8');
  size += Buffer.byteLength(entry.Detail, 'utf8');
  for (const resource of entry.Resources ?? []) size += Buffer.byteLength(resource, 'utf8');
  return size;
}

/** What a refusal says about itself: the thrown error's name or the failed entry's `ErrorCode`, its message, the HTTP status. */
export interface EntryRefusal {
  code?: string | undefined;
  message?: string | undefined;
  status?: number | undefined;
}

const TOO_LARGE_CODE = /too ?large/i;
const TOO_LARGE_MESSAGE = /\btoo large\b|\bsize\b.*\b(?:over|exceeds?|exceeded)\b/i;

/**
 * Whether EventBridge refused an entry for its size, so that a claim check (a small entry with a reference) can
 * take its place. An entry over the bus's limit fails the whole call: HTTP 400 `ValidationException` "Total size of
 * the entries in the request is over the limit."; a front end may answer 413 before it (the SDK then names the
 * error `Unknown`, or fails to parse an HTML body). No documented `PutEventsResultEntry` error code means "too
 * large", so a failed entry counts only when its code or message says so. Any other `ValidationException` (a
 * detail-type over 128 characters, more than 10 entries, a bad bus name) is not a size problem.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsResultEntry.html
 */
export function refusedForSize(refusal: EntryRefusal): boolean {
  if (refusal.status === 413) return true;
  if (refusal.code !== undefined && TOO_LARGE_CODE.test(refusal.code)) return true;
  // Only the words before any quote: a validation message echoes the offending value in quotes ("Value '...' at
  // 'entries.1.member.detailType'"), and that value is the payload's to choose.
  const words = refusal.message?.split(/['"]/, 1)[0];
  return words !== undefined && TOO_LARGE_MESSAGE.test(words);
}
