import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, DeliveryLogTable } from '../constants.js';
import { DELIVERY_ID_RULE, errorCode, isDeliveryId, positive } from '../rules.js';
import type { LoggerLike } from '../types.js';
import {
  deliveryPk,
  itemOf,
  type LogTable,
  RECORD_PREFIX,
  subscribersOf,
  subscribersSk,
  toRecord,
} from './item.js';
import { listRecords } from './list.js';
import type {
  DeliveryDetails,
  DeliveryListPage,
  DeliveryListQuery,
  DeliveryLogEntry,
  RecordResult,
  SubscriberReport,
} from './schema.js';
import { recordSubscriberOutcome } from './subscribers.js';

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

/** Keeps every record under DynamoDB's 400 KB item limit: body + headers (≤ 100 × ~1.3 KB) + summary. */
const MAX_PAYLOAD_BYTES = 350 * 1024;

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
  readonly #table: LogTable;
  readonly #logger: Pick<LoggerLike, 'warn'> | undefined;

  constructor(options: DeliveryLogOptions) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    const documents = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    const ttlSeconds = positive('ttlSeconds', options.ttlSeconds ?? AwsDefaults.deliveryLogTtlSeconds);
    const storePayload = options.storePayload === true;
    const payloadMaxBytes = positive(
      'payloadMaxBytes',
      options.payloadMaxBytes ?? AwsDefaults.deliveryLogPayloadMaxBytes,
      MAX_PAYLOAD_BYTES,
    );
    const indexShards = options.indexShards ?? AwsDefaults.deliveryLogIndexShards;
    if (!Number.isInteger(indexShards)) throw new TypeError('"indexShards" must be a number from 1 to 64');
    const shards = positive('indexShards', indexShards, 64);
    if (options.logger !== undefined && typeof options.logger.warn !== 'function') {
      throw new TypeError('"logger" must have a "warn" function');
    }
    this.#table = {
      documents,
      tableName: options.tableName,
      ttlSeconds,
      storePayload,
      payloadMaxBytes,
      shards,
    };
    this.#logger = options.logger;
  }

  /** Whether records keep the raw body. */
  get storesPayload(): boolean {
    return this.#table.storePayload;
  }

  /**
   * Records one answered request with one PutItem. Never throws: a bad entry or a failed write resolves
   * `{ ok: false, error }` and logs a warning (error code and delivery id only), so a log failure never fails
   * the delivery.
   */
  async record(entry: DeliveryLogEntry): Promise<RecordResult> {
    try {
      const { item, recordId } = itemOf(entry, this.#table);
      await this.#table.documents.send(new PutCommand({ TableName: this.#table.tableName, Item: item }));
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
      throw new TypeError(`"deliveryId" must be ${DELIVERY_ID_RULE}`);
    }
    const pk = deliveryPk(deliveryId, options.source);
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.#table.documents.send(
        new QueryCommand({
          TableName: this.#table.tableName,
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
    // One subscribers item per hook (GitHub gives two Apps' deliveries of one event one GUID).
    const subscribersOfHook = (hook: string | undefined) =>
      subscribersOf(items.find((item) => item[DeliveryLogTable.sortKey] === subscribersSk(hook)));
    const records = items
      .filter((item) => String(item[DeliveryLogTable.sortKey]).startsWith(RECORD_PREFIX))
      .map((item) => {
        const record = toRecord(item);
        return { ...record, subscribers: subscribersOfHook(record.hook) };
      });
    const [latest] = records;
    if (latest === undefined) return undefined;
    const hooks = [...new Set(records.flatMap((record) => (record.hook === undefined ? [] : [record.hook])))];
    return {
      deliveryId,
      ...(latest.source !== undefined ? { source: latest.source } : {}),
      ...(hooks.length > 0 ? { hooks } : {}),
      latest,
      records,
      subscribers: latest.subscribers,
    };
  }

  /**
   * Records, newest first, from the `by-day` index: the time window is the index's key condition, `event`,
   * `status`, `verdict` and `source` are filters on the window's summaries. Pass the page's `cursor` back for
   * the next one. Throws a `TypeError` naming the field on a bad query.
   */
  async list(query: DeliveryListQuery = {}): Promise<DeliveryListPage> {
    return listRecords(this.#table, query);
  }

  /**
   * Records one subscriber's outcome for a delivery: an UpdateItem setting its entry in the delivery's
   * `subscribers` map, so subscribers reporting at once never overwrite each other (a subscriber's retry
   * replaces its own entry). Throws a `TypeError` on a bad report, or the SDK's error.
   */
  async recordSubscriber(deliveryId: string, report: SubscriberReport): Promise<void> {
    return recordSubscriberOutcome(this.#table, deliveryId, report);
  }
}
