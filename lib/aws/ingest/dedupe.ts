import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { AwsDefaults, DedupeTable } from '../constants.js';
import type { Delivery } from '../types.js';

/** Options of {@link createDedupedPublish}. Defaults live in {@link AwsDefaults}. */
export interface DedupeOptions {
  /** DynamoDB client (not a DocumentClient: Powertools marshalls itself). */
  client: DynamoDBClient;
  /** Table with partition key `pk` (S) and TTL on `expiresAt`. */
  tableName: string;
  /** How long a record lives, in seconds. Default 604800 (7 days). */
  ttlSeconds?: number | undefined;
  /** Lock length when the Lambda context gives no remaining time, in seconds. Default 30. */
  lockSeconds?: number | undefined;
  /** The publish to run once per delivery id. */
  publish: (delivery: Delivery) => Promise<unknown>;
}

/** What {@link DedupedPublish} did with a delivery. */
export type DedupeOutcome =
  /** Published now; `recordError` is set when the bus took it but the done record could not be written. */
  | { status: 'published'; recordError?: unknown }
  /** Published before: nothing was sent. */
  | { status: 'duplicate' };

/**
 * Publishes a delivery once per id. Throws {@link DedupeInProgressError} while another invocation holds the
 * id, {@link DedupePublishError} when the publish failed (its lock is then released), or the Powertools
 * persistence error when the lock could not be taken.
 */
export type DedupedPublish = (
  delivery: Delivery,
  context?: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
) => Promise<DedupeOutcome>;

/** Another invocation holds the delivery's lock. */
export class DedupeInProgressError extends Error {
  override name = 'DedupeInProgressError';
}

/** The publish failed; `releaseError` is set when its lock could not be released either. */
export class DedupePublishError extends Error {
  override name = 'DedupePublishError';
  readonly releaseError: unknown;
  constructor(cause: unknown, releaseError?: unknown) {
    super('publish failed', { cause });
    this.releaseError = releaseError;
  }
}

interface CallState {
  published: boolean;
  publishError?: { error: unknown };
}

/**
 * Wraps a publish in Powertools Idempotency (DynamoDB persistence), keyed by the delivery id: an in-progress
 * record (the lock) expires with the Lambda's remaining time, the publish runs only for the caller that
 * wrote it, a failed publish deletes it, and a successful one marks it completed for `ttlSeconds`.
 */
export function createDedupedPublish(options: DedupeOptions): DedupedPublish {
  if (options?.client === undefined) throw new TypeError('"client" is required');
  if (!options.tableName) throw new TypeError('"tableName" is required');
  if (typeof options.publish !== 'function') throw new TypeError('"publish" must be a function');
  const ttlSeconds = options.ttlSeconds ?? AwsDefaults.dedupeTtlSeconds;
  const lockMs = (options.lockSeconds ?? AwsDefaults.dedupeLockSeconds) * 1000;
  if (!(ttlSeconds > 0)) throw new TypeError('"ttlSeconds" must be a positive number');
  if (!(lockMs > 0)) throw new TypeError('"lockSeconds" must be a positive number');
  const { publish } = options;

  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'id',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: ttlSeconds,
  });
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.tableName,
    awsSdkV3Client: options.client,
    keyAttr: DedupeTable.partitionKey,
    expiryAttr: DedupeTable.ttlAttribute,
  });
  const idempotentPublish = makeIdempotent(
    async (delivery: Delivery, state: CallState) => {
      try {
        await publish(delivery);
      } catch (error) {
        state.publishError = { error };
        throw error;
      }
      state.published = true;
      // Stored as the record's response; only its presence matters.
      return { delivery: delivery.id };
    },
    { persistenceStore, config, keyPrefix: AwsDefaults.dedupeKeyPrefix, dataIndexArgument: 0 },
  );

  return async (delivery, context) => {
    const remaining = context?.getRemainingTimeInMillis?.();
    // Powertools reads only getRemainingTimeInMillis from the context it is given.
    config.registerLambdaContext({
      getRemainingTimeInMillis: () => (typeof remaining === 'number' && remaining > 0 ? remaining : lockMs),
    } as Context);
    const state: CallState = { published: false };
    try {
      await idempotentPublish(delivery, state);
    } catch (error) {
      if (state.published) return { status: 'published', recordError: error };
      if (state.publishError !== undefined) {
        const { error: publishError } = state.publishError;
        throw new DedupePublishError(publishError, error === publishError ? undefined : error);
      }
      if (error instanceof IdempotencyAlreadyInProgressError) {
        throw new DedupeInProgressError('delivery is being processed', { cause: error });
      }
      throw error;
    }
    return state.published ? { status: 'published' } : { status: 'duplicate' };
  };
}
