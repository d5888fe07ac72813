import { createHash } from 'node:crypto';
import { type Forge, Forges, repositoryKey, resourceKey, resourceKeyAt } from '../../webhooks/index.js';
import type { OrderBy } from '../order-by.js';
import type { Delivery, DeliveryDetail, DeliveryEntry } from '../types.js';

/**
 * Kinesis Data Streams' limits on one record: a partition key of 1 to 256 Unicode characters, and at most 1 MiB of
 * data and partition key together.
 *
 * @see https://docs.aws.amazon.com/kinesis/latest/APIReference/API_PutRecord.html
 */
export const StreamLimits = {
  partitionKeyChars: 256,
  recordBytes: 1_048_576,
} as const;

export type { OrderBy } from '../order-by.js';

/** The grouping a delivery falls under when its payload names none of the fields its rule reads. */
export const UNKEYED = '-';

const FORGES = new Set<string>(Forges);

/**
 * The key a delivery is ordered by, before the source is added: its resource (or repository) under its forge's
 * rule, or the value at `orderBy.path`. A delivery without a forge preset or without the fields falls back to
 * {@link UNKEYED}, so that such deliveries stay in order among themselves rather than being refused.
 */
export function orderKeyOf(
  delivery: Pick<Delivery, 'name' | 'payload' | 'forge' | 'nativeEvent'>,
  orderBy: OrderBy = 'resource',
): string {
  if (typeof orderBy === 'object') return resourceKeyAt(orderBy.path)(delivery.payload) ?? UNKEYED;
  const forge = delivery.forge;
  if (forge === undefined || !FORGES.has(forge)) return UNKEYED;
  const key =
    orderBy === 'repository'
      ? repositoryKey(forge as Forge, delivery.payload)
      : resourceKey(forge as Forge, delivery.nativeEvent ?? delivery.name, delivery.payload);
  return key ?? UNKEYED;
}

/**
 * The Kinesis partition key of a delivery: `<source>|<order key>`, so that two sources' resources never share one
 * (two GitHub organisations may both have `octo/hello`). A key over Kinesis's 256 characters becomes
 * `sha256:<hex>` of it: equal keys still map to equal partition keys, and no key is cut into another's.
 */
export function partitionKeyOf(source: string | undefined, orderKey: string): string {
  const key = `${source ?? ''}|${orderKey}`;
  if ([...key].length <= StreamLimits.partitionKeyChars) return key;
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/**
 * The event a stream record holds: the EventBridge event the rules' targets get, with the same `detail-type`,
 * `source` and `detail` (the claim-checked detail when the entry carries one), so that one subscriber handler
 * serves a rule and an ordered subscriber alike.
 */
export interface StreamEvent {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  time: string;
  detail: DeliveryDetail;
}

/** The stream event of a PutEvents entry, stamped with `time` (ISO 8601) and the delivery's id as its event id. */
export function streamEventOf(entry: DeliveryEntry, time: Date): StreamEvent {
  const detail = JSON.parse(entry.Detail) as DeliveryDetail;
  return {
    version: '0',
    id: detail.delivery,
    'detail-type': entry.DetailType,
    source: entry.Source,
    time: time.toISOString(),
    detail,
  };
}

/** A record's size as Kinesis counts it against {@link StreamLimits.recordBytes}: its data and its partition key. */
export function streamRecordSize(data: Uint8Array, partitionKey: string): number {
  return data.byteLength + Buffer.byteLength(partitionKey, 'utf8');
}

/** The record data of a stream event: its JSON, UTF-8. */
export function streamRecordData(event: StreamEvent): Uint8Array {
  return Buffer.from(JSON.stringify(event), 'utf8');
}

/** One record of a Kinesis event-source mapping's batch, as Lambda hands it (`Records[].kinesis`). */
export interface KinesisBatchRecord {
  kinesis: { data: string; partitionKey: string; sequenceNumber: string };
  eventID?: string;
}

/**
 * The stream event a record of a Kinesis batch holds (its base64 `data` decoded), for a subscriber on an ordered
 * stream. Throws a `TypeError` naming the record's sequence number when its data is not a stream event: a record
 * some other producer wrote.
 */
export function streamEventOfRecord(record: KinesisBatchRecord): StreamEvent {
  const { data, sequenceNumber } = record.kinesis;
  let event: unknown;
  try {
    event = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    throw new TypeError(`stream record ${sequenceNumber} is not JSON`);
  }
  if (
    typeof event !== 'object' ||
    event === null ||
    typeof (event as StreamEvent)['detail-type'] !== 'string' ||
    typeof (event as StreamEvent).detail !== 'object' ||
    (event as StreamEvent).detail === null
  ) {
    throw new TypeError(`stream record ${sequenceNumber} holds no delivery event (detail-type and detail)`);
  }
  return event as StreamEvent;
}
