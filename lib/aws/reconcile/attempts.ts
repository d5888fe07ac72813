/**
 * What the reconciler remembers of a delivery between runs, beside the dedupe records: one item per delivery it
 * acted on (`reconcile#<delivery key>`), claimed with conditional writes so that two runs never redeliver it
 * at once, and a failed redelivery waits (doubling) before the next.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DedupeTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { isConditionalCheckFailed } from '../errors.js';

const PREFIX = 'reconcile#';

/** Options of {@link ReconcileAttempts}. */
export interface ReconcileAttemptsOptions {
  client: DynamoDBClient;
  /** The dedupe table. */
  tableName: string;
  /** How long an item lives, in seconds (past the forge's window). */
  ttlSeconds: number;
  /** Wait after a redelivery before the next may be asked, in seconds; doubled per attempt. */
  backoffSeconds: number;
  /** Longest wait between two redeliveries, in seconds. */
  maxBackoffSeconds: number;
}

/** The outcome of {@link ReconcileAttempts.claim}. */
export type ClaimResult =
  /** Claimed: go ahead; `attempts` counts this one, `firstAt` is when the reconciler first acted on it. */
  | { claimed: true; attempts: number; firstAt: number }
  /** Not now: a redelivery was asked within its backoff, or another run holds it, or it was given up. */
  | { claimed: false };

/** The reconciler's per-delivery memory (see the module comment). */
/**
 * Whose delivery an attempt item is about: the source's name, and the hook where the delivery id is the event's
 * (GitHub), so two hooks' deliveries of one event are redelivered, backed off and given up each on its own.
 */
export type AttemptSource = string | { name: string; hook?: string | undefined };

export class ReconcileAttempts {
  readonly #documents: DynamoDBDocumentClient;
  readonly #options: ReconcileAttemptsOptions;

  constructor(options: ReconcileAttemptsOptions) {
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#options = options;
  }

  #key(source: AttemptSource, deliveryId: string) {
    const { name, hook } = typeof source === 'string' ? { name: source, hook: undefined } : source;
    return { [DedupeTable.partitionKey]: `${PREFIX}${dedupeKeyOf({ id: deliveryId, source: name, hook })}` };
  }

  /**
   * Takes the next redelivery of a delivery: succeeds when it was never asked, or its backoff ran out, and it
   * was not given up. The wait until the one after is set in the same write.
   */
  async claim(source: AttemptSource, deliveryId: string, now: number = Date.now()): Promise<ClaimResult> {
    const { backoffSeconds, maxBackoffSeconds, ttlSeconds } = this.#options;
    try {
      const { Attributes } = await this.#documents.send(
        new UpdateCommand({
          TableName: this.#options.tableName,
          Key: this.#key(source, deliveryId),
          UpdateExpression:
            'SET attempts = if_not_exists(attempts, :zero) + :one, firstAt = if_not_exists(firstAt, :now), lastAt = :now, nextAt = :soonest, #ttl = :ttl',
          ConditionExpression:
            'attribute_not_exists(gaveUp) AND (attribute_not_exists(nextAt) OR nextAt <= :now)',
          ExpressionAttributeNames: { '#ttl': DedupeTable.ttlAttribute },
          ExpressionAttributeValues: {
            ':zero': 0,
            ':one': 1,
            ':now': now,
            ':soonest': now + backoffSeconds * 1000,
            ':ttl': Math.floor(now / 1000) + ttlSeconds,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const attempts = Number(Attributes?.attempts ?? 1);
      const waitMs = Math.min(maxBackoffSeconds, backoffSeconds * 2 ** (attempts - 1)) * 1000;
      // The claim already holds it for one backoff; a later attempt waits longer.
      if (attempts > 1)
        await this.#documents.send(
          new UpdateCommand({
            TableName: this.#options.tableName,
            Key: this.#key(source, deliveryId),
            UpdateExpression: 'SET nextAt = :next',
            ExpressionAttributeValues: { ':next': now + waitMs },
          }),
        );
      return { claimed: true, attempts, firstAt: Number(Attributes?.firstAt ?? now) };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { claimed: false };
      throw error;
    }
  }

  /** Marks a delivery given up (never claimed again); `false` when it already was. */
  async giveUp(source: AttemptSource, deliveryId: string, now: number = Date.now()): Promise<boolean> {
    return this.#flag(source, deliveryId, 'gaveUp', now);
  }

  /** Marks a delivery seen as taken late; `true` only the first time, so it is logged once. */
  async markLate(source: AttemptSource, deliveryId: string, now: number = Date.now()): Promise<boolean> {
    return this.#flag(source, deliveryId, 'late', now);
  }

  async #flag(
    source: AttemptSource,
    deliveryId: string,
    flag: 'gaveUp' | 'late',
    now: number,
  ): Promise<boolean> {
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#options.tableName,
          Key: this.#key(source, deliveryId),
          UpdateExpression: 'SET #flag = :now, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(#flag)',
          ExpressionAttributeNames: { '#flag': flag, '#ttl': DedupeTable.ttlAttribute },
          ExpressionAttributeValues: {
            ':now': now,
            ':ttl': Math.floor(now / 1000) + this.#options.ttlSeconds,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
