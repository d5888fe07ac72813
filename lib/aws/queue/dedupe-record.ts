import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, DedupeTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { isConditionalCheckFailed } from '../errors.js';
import type { Delivery } from '../types.js';

/**
 * What the dedupe table says of a delivery:
 * - `published`: an attempt put it on the bus (a completed record without `queued`);
 * - `queued`: an attempt kept it for the retrier (a completed record with `queued: true`);
 * - `in-progress`: an attempt holds its lock right now;
 * - `none`: no live record (never taken, its publish failed, or the lock of a dead attempt ran out).
 */
export type DedupeState = 'published' | 'queued' | 'in-progress' | 'none';

/**
 * The dedupe record's key of a delivery, as the ingest writes it: `delivery#` and the base64 MD5 of the JSON of
 * its delivery key ({@link dedupeKeyOf}), Powertools Idempotency's form.
 */
export function dedupeRecordKey(delivery: Pick<Delivery, 'id' | 'source'>): string {
  return recordKeyOf(dedupeKeyOf(delivery));
}

/** The dedupe record's key of a delivery key ({@link dedupeKeyOf}), as {@link dedupeRecordKey} builds it. */
export function recordKeyOf(deliveryKey: string): string {
  const hash = createHash('md5').update(JSON.stringify(deliveryKey)).digest('base64');
  return `${AwsDefaults.dedupeKeyPrefix}#${hash}`;
}

/** The attributes Powertools Idempotency writes besides the key (its defaults, as the ingest leaves them). */
const STATUS = 'status';
const DATA = 'data';
const LOCK_EXPIRY = 'in_progress_expiration';

function isQueuedData(data: unknown): boolean {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return false;
    }
  }
  return typeof value === 'object' && value !== null && (value as { queued?: unknown }).queued === true;
}

/**
 * Reads the ingest's dedupe records (one consistent GetItem each) and writes the completed record of a delivery
 * that was published outside the ingest (the retrier, the reconciler), so that a later redelivery is a duplicate.
 */
export class DedupeRecords {
  readonly #documents: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;

  constructor(options: { client: DynamoDBClient; tableName: string; ttlSeconds?: number | undefined }) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#tableName = options.tableName;
    this.#ttlSeconds = options.ttlSeconds ?? AwsDefaults.dedupeTtlSeconds;
    if (!(this.#ttlSeconds > 0)) throw new TypeError('"ttlSeconds" must be a positive number');
  }

  /** What the dedupe table says of `delivery` now (a strongly consistent read). */
  async state(delivery: Pick<Delivery, 'id' | 'source'>): Promise<DedupeState> {
    const { Item } = await this.#documents.send(
      new GetCommand({
        TableName: this.#tableName,
        Key: { [DedupeTable.partitionKey]: dedupeRecordKey(delivery) },
        ConsistentRead: true,
      }),
    );
    if (Item === undefined) return 'none';
    const now = Date.now();
    // DynamoDB deletes expired items late: an expired record is no record (as Powertools reads it).
    const expiresAt = Number(Item[DedupeTable.ttlAttribute]);
    if (Number.isFinite(expiresAt) && expiresAt * 1000 <= now) return 'none';
    if (Item[STATUS] === 'COMPLETED') return isQueuedData(Item[DATA]) ? 'queued' : 'published';
    if (Item[STATUS] === 'INPROGRESS') {
      const lockExpiry = Number(Item[LOCK_EXPIRY]);
      return Number.isFinite(lockExpiry) && lockExpiry <= now ? 'none' : 'in-progress';
    }
    return 'none';
  }

  /**
   * Writes a completed record for a delivery published outside the ingest, unless a live record is there.
   * Resolves `true` when written, `false` when another attempt's record was there first.
   */
  async markPublished(delivery: Pick<Delivery, 'id' | 'source'>): Promise<boolean> {
    const nowSeconds = Math.floor(Date.now() / 1000);
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: {
            [DedupeTable.partitionKey]: dedupeRecordKey(delivery),
            [STATUS]: 'COMPLETED',
            [DATA]: { delivery: delivery.id },
            [DedupeTable.ttlAttribute]: nowSeconds + this.#ttlSeconds,
          },
          ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :now',
          ExpressionAttributeNames: {
            '#pk': DedupeTable.partitionKey,
            '#expiresAt': DedupeTable.ttlAttribute,
          },
          ExpressionAttributeValues: { ':now': nowSeconds },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
