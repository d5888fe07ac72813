/**
 * Subscribers' outcomes in the delivery log: one `subscribers` item per delivery, a map keyed by subscriber name,
 * written by {@link DeliveryLog.recordSubscriber} and read beside a page of records.
 */
import { BatchGetCommand, type BatchGetCommandOutput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, DeliveryLogTable } from '../constants.js';
import { isConditionalCheckFailed } from '../errors.js';
import { isDeliveryId } from '../rules.js';
import { deliveryPk, type LogTable, SUBSCRIBERS_SK, subscribersOf, text } from './item.js';
import type { DeliveryRecord, SubscriberOutcome, SubscriberReport } from './schema.js';

/** Sets each record's `subscribers` from its delivery's item: one BatchGetItem per 100 deliveries. */
export async function attachSubscribers(table: LogTable, records: DeliveryRecord[]): Promise<void> {
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
      const answer: BatchGetCommandOutput = await table.documents.send(
        new BatchGetCommand({ RequestItems: { [table.tableName]: { Keys: pending } } }),
      );
      for (const item of answer.Responses?.[table.tableName] ?? []) {
        byPk.set(String(item[DeliveryLogTable.partitionKey]), subscribersOf(item));
      }
      pending = answer.UnprocessedKeys?.[table.tableName]?.Keys;
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
export async function recordSubscriberOutcome(
  table: LogTable,
  deliveryId: string,
  report: SubscriberReport,
): Promise<void> {
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
  if (typeof report.durationMs !== 'number' || !Number.isFinite(report.durationMs) || report.durationMs < 0) {
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
