import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, BeginResult, DedupeStatus, DedupeTable } from '../constants.js';
import { isConditionalCheckFailed } from '../errors.js';

/**
 * Options of {@link DedupeStore}. Defaults live in {@link AwsDefaults}.
 *
 * @example
 * ```ts
 * new DedupeStore({ client, tableName: 'forgebridge-dev-dedupe', lockSeconds: 29 });
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
export interface DedupeStoreOptions {
  /** DocumentClient from `@aws-sdk/lib-dynamodb`. */
  client: DynamoDBDocumentClient;
  /** Table with partition key `pk` (S) and TTL on `expiresAt`. */
  tableName: string;
  /** How long a record lives, in seconds. Default 604800 (7 days). */
  ttlSeconds?: number | undefined;
  /** How long an in-progress lock holds, in seconds: the Lambda timeout. Default 30. */
  lockSeconds?: number | undefined;
  /** Clock in ms (tests). Default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * Deduplicates deliveries by id with DynamoDB conditional writes. A record is `in_progress` (with a lock
 * expiring after the Lambda timeout) while its delivery is being published, and `done` once it is on the bus;
 * either way it carries a TTL of 7 days. A lock left behind by a crashed invocation is taken over once it has
 * expired; a failed publish deletes it so the forge's redelivery goes through.
 *
 * @example
 * ```ts
 * const dedupe = new DedupeStore({ client: DynamoDBDocumentClient.from(new DynamoDBClient()), tableName });
 * if ((await dedupe.begin(id)) === 'new') { await publish(); await dedupe.complete(id); }
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
export class DedupeStore {
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;
  readonly #lockSeconds: number;
  readonly #now: () => number;
  /** Lock tokens of the deliveries this instance began, so a stale owner never releases a new owner's lock. */
  readonly #owners = new Map<string, string>();

  constructor(options: DedupeStoreOptions) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#ttlSeconds = options.ttlSeconds ?? AwsDefaults.dedupeTtlSeconds;
    this.#lockSeconds = options.lockSeconds ?? AwsDefaults.dedupeLockSeconds;
    if (!(this.#ttlSeconds > 0)) throw new TypeError('"ttlSeconds" must be a positive number');
    if (!(this.#lockSeconds > 0)) throw new TypeError('"lockSeconds" must be a positive number');
    this.#now = options.now ?? Date.now;
  }

  #seconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /**
   * Claims a delivery. `'new'`: this caller publishes it. `'duplicate'`: it was already published.
   * `'in_progress'`: another invocation holds a live lock. An expired lock, or a record past its TTL that
   * DynamoDB has not swept yet, counts as absent.
   */
  async begin(id: string): Promise<BeginResult> {
    const now = this.#seconds();
    const owner = randomUUID();
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: {
            [DedupeTable.partitionKey]: id,
            status: DedupeStatus.InProgress,
            owner,
            lockExpiresAt: now + this.#lockSeconds,
            startedAt: now,
            [DedupeTable.ttlAttribute]: now + this.#ttlSeconds,
          },
          ConditionExpression:
            'attribute_not_exists(#pk) OR #ttl <= :now OR (#status = :inProgress AND lockExpiresAt <= :now)',
          ExpressionAttributeNames: {
            '#pk': DedupeTable.partitionKey,
            '#ttl': DedupeTable.ttlAttribute,
            '#status': 'status',
          },
          ExpressionAttributeValues: { ':now': now, ':inProgress': DedupeStatus.InProgress },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.#owners.set(id, owner);
      return BeginResult.New;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      let item = (error as { Item?: Record<string, unknown> }).Item;
      if (item === undefined) {
        const read = await this.#client.send(
          new GetCommand({
            TableName: this.#tableName,
            Key: { [DedupeTable.partitionKey]: id },
            ConsistentRead: true,
          }),
        );
        item = read.Item;
      }
      // Item is DynamoDB-marshalled when it comes from the exception (lib-dynamodb does not unmarshall it).
      const status = readStatus(item);
      return status === DedupeStatus.Done ? BeginResult.Duplicate : BeginResult.InProgress;
    }
  }

  /** Marks a delivery done (only after it is on the bus): redeliveries then answer `duplicate` until the TTL. */
  async complete(id: string): Promise<void> {
    const now = this.#seconds();
    this.#owners.delete(id);
    await this.#client.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { [DedupeTable.partitionKey]: id },
        UpdateExpression: 'SET #status = :done, completedAt = :now, #ttl = :ttl REMOVE lockExpiresAt, #owner',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#ttl': DedupeTable.ttlAttribute,
          '#owner': 'owner',
        },
        ExpressionAttributeValues: {
          ':done': DedupeStatus.Done,
          ':now': now,
          ':ttl': now + this.#ttlSeconds,
        },
      }),
    );
  }

  /**
   * Deletes this invocation's in-progress lock after a failed publish, so the forge's redelivery is treated as
   * new. A `done` record or another owner's lock is left alone.
   */
  async release(id: string): Promise<void> {
    const owner = this.#owners.get(id);
    this.#owners.delete(id);
    try {
      await this.#client.send(
        new DeleteCommand({
          TableName: this.#tableName,
          Key: { [DedupeTable.partitionKey]: id },
          ConditionExpression:
            owner === undefined ? '#status = :inProgress' : '#status = :inProgress AND #owner = :owner',
          ExpressionAttributeNames:
            owner === undefined ? { '#status': 'status' } : { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues:
            owner === undefined
              ? { ':inProgress': DedupeStatus.InProgress }
              : { ':inProgress': DedupeStatus.InProgress, ':owner': owner },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}

function readStatus(item: Record<string, unknown> | undefined): string | undefined {
  const status = item?.status;
  if (typeof status === 'string') return status;
  if (typeof status === 'object' && status !== null && 'S' in status && typeof status.S === 'string')
    return status.S;
  return undefined;
}
