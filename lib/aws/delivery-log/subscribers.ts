/**
 * Subscribers' outcomes in the delivery log: one `subscribers` item per delivery, a map keyed by subscriber name,
 * written by {@link DeliveryLog.recordSubscriber} and read beside a page of records.
 */
import { BatchGetCommand, type BatchGetCommandOutput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DeliveryLogTable } from '../constants.js';
import { isConditionalCheckFailed } from '../errors.js';
import { DELIVERY_ID_RULE, isDeliveryId } from '../rules.js';
import { deliveryPk, type LogTable, RECORD_PREFIX, subscribersOf, subscribersSk, text } from './item.js';
import type { DeliveryRecord, SubscriberOutcome, SubscriberReport } from './schema.js';

/** The items of `keys` (one BatchGetItem per 100, unprocessed keys asked again), by `pk` and `sk`. */
async function batchGet(
  table: LogTable,
  keys: Map<string, Record<string, string>>,
  projection?: string,
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const all = [...keys.values()];
  for (let index = 0; index < all.length; index += 100) {
    let pending: Record<string, unknown>[] | undefined = all.slice(index, index + 100);
    for (let attempt = 0; pending !== undefined && pending.length > 0 && attempt < 5; attempt += 1) {
      const request =
        projection === undefined
          ? { Keys: pending }
          : {
              Keys: pending,
              ProjectionExpression: '#pk, #sk, #p',
              ExpressionAttributeNames: projectionNames(projection),
            };
      const answer: BatchGetCommandOutput = await table.documents.send(
        new BatchGetCommand({ RequestItems: { [table.tableName]: request } }),
      );
      for (const item of answer.Responses?.[table.tableName] ?? []) {
        found.set(keyOf(item[DeliveryLogTable.partitionKey], item[DeliveryLogTable.sortKey]), item);
      }
      pending = answer.UnprocessedKeys?.[table.tableName]?.Keys;
    }
  }
  return found;
}

function projectionNames(attribute: string): Record<string, string> {
  return { '#pk': DeliveryLogTable.partitionKey, '#sk': DeliveryLogTable.sortKey, '#p': attribute };
}

function keyOf(pk: unknown, sk: unknown): string {
  return `${String(pk)}\n${String(sk)}`;
}

/** Sets each record's `subscribers` from its delivery's (and hook's) item: one BatchGetItem per 100 deliveries. */
export async function attachSubscribers(table: LogTable, records: DeliveryRecord[]): Promise<void> {
  const keys = new Map<string, Record<string, string>>();
  for (const record of records) {
    if (record.deliveryId === undefined) continue;
    const pk = deliveryPk(record.deliveryId, record.source);
    const sk = subscribersSk(record.hook);
    keys.set(keyOf(pk, sk), { [DeliveryLogTable.partitionKey]: pk, [DeliveryLogTable.sortKey]: sk });
  }
  const found = await batchGet(table, keys);
  for (const record of records) {
    if (record.deliveryId === undefined) continue;
    const item = found.get(keyOf(deliveryPk(record.deliveryId, record.source), subscribersSk(record.hook)));
    record.subscribers = subscribersOf(item);
  }
}

/**
 * Sets the `hook` of listed records whose forge names hooks (the list index holds no hook): one BatchGetItem
 * of that attribute per 100 such records; `at` is each record's list-index sort key.
 */
export async function attachHooks(
  table: LogTable,
  records: { record: DeliveryRecord; at: string }[],
): Promise<void> {
  const keys = new Map<string, Record<string, string>>();
  for (const { record, at } of records) {
    if (record.deliveryId === undefined) continue;
    const pk = deliveryPk(record.deliveryId, record.source);
    const sk = `${RECORD_PREFIX}${at}`;
    keys.set(keyOf(pk, sk), { [DeliveryLogTable.partitionKey]: pk, [DeliveryLogTable.sortKey]: sk });
  }
  if (keys.size === 0) return;
  const found = await batchGet(table, keys, 'hook');
  for (const { record, at } of records) {
    if (record.deliveryId === undefined) continue;
    const hook = found.get(
      keyOf(deliveryPk(record.deliveryId, record.source), `${RECORD_PREFIX}${at}`),
    )?.hook;
    if (typeof hook === 'string') record.hook = hook;
  }
}

/**
 * Records one subscriber's outcome for a delivery: an UpdateItem setting its entry in the delivery's
 * `subscribers` map, so subscribers reporting at once never overwrite each other (a subscriber's retry
 * replaces its own entry). Throws a `TypeError` on a bad report, or the SDK's error.
 */
export async function recordSubscriberOutcome(
  table: LogTable,
  deliveryId: string,
  report: SubscriberReport,
): Promise<void> {
  if (!isDeliveryId(deliveryId)) {
    throw new TypeError(`"deliveryId" must be ${DELIVERY_ID_RULE}`);
  }
  if (typeof report !== 'object' || report === null) throw new TypeError('"report" must be an object');
  const { subscriber } = report;
  if (typeof subscriber !== 'string' || subscriber === '' || subscriber.length > 128) {
    throw new TypeError('"subscriber" must be a name of 1 to 128 characters');
  }
  if (report.outcome !== 'ok' && report.outcome !== 'error') {
    throw new TypeError('"outcome" must be "ok" or "error"');
  }
  if (typeof report.durationMs !== 'number' || !Number.isFinite(report.durationMs) || report.durationMs < 0) {
    throw new TypeError('"durationMs" must be a non-negative number');
  }
  const wait = report.forgeWaitMs;
  if (wait !== undefined && (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0)) {
    throw new TypeError('"forgeWaitMs" must be a non-negative number');
  }
  const now = Date.now();
  const outcome: SubscriberOutcome = {
    outcome: report.outcome,
    durationMs: Math.round(report.durationMs),
    at: now,
    ...(wait === undefined || Math.round(wait) === 0 ? {} : { forgeWaitMs: Math.round(wait) }),
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
    [DeliveryLogTable.sortKey]: subscribersSk(text(report.hook, 128)),
  };
  const expiresAt = Math.floor(now / 1000) + table.ttlSeconds;
  const names = { '#subs': 'subscribers', '#exp': DeliveryLogTable.ttlAttribute };
  // The map's first entry creates it: one write when this subscriber is the delivery's first (the usual case,
  // one subscriber per delivery). A nested SET needs the map to exist, so a later subscriber's refused create
  // is followed by that SET (each write, refused or not, is billed).
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      await table.documents.send(
        new UpdateCommand({
          TableName: table.tableName,
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
      await table.documents.send(
        new UpdateCommand({
          TableName: table.tableName,
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
