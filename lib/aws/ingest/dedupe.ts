import { createHash } from 'node:crypto';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyItemAlreadyExistsError,
  IdempotencyKeyError,
  IdempotencyRecordStatus,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { AwsDefaults, DedupeTable } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import { DedupeInProgressError, DedupePublishError } from '../errors.js';
import { recordKeyOf } from '../queue/index.js';
import { randomId } from '../random-id.js';
import { DEFAULT_SOURCE } from '../rules.js';
import type { Delivery } from '../types.js';

/** Options of {@link createDedupedPublish}. Defaults live in {@link AwsDefaults}. */
export interface DedupeOptions {
  /** DynamoDB client (not a DocumentClient: Powertools marshalls itself). */
  client: DynamoDBClient;
  /** Table with partition key `pk` (S) and TTL on `expiresAt`. */
  tableName: string;
  /**
   * How long a record lives, in seconds: as long as it does, a delivery with the same id is a duplicate (the
   * replay window of a scheme without a timestamp). Default 604800 (7 days).
   */
  ttlSeconds?: number | undefined;
  /** A record lifetime per source (`delivery.source`, `default` when unset), over `ttlSeconds`. */
  ttlSecondsBySource?: Readonly<Record<string, number>> | undefined;
  /** Lock length when the Lambda context gives no remaining time, in seconds. Default 30. */
  lockSeconds?: number | undefined;
  /**
   * The publish to run once per delivery id. Resolving `{ queued: true }` means the delivery was kept for the
   * retrier instead of published; either way the record is completed.
   */
  publish: (delivery: Delivery) => Promise<unknown>;
}

/** What {@link DedupedPublish} did with a delivery. */
export type DedupeOutcome =
  /**
   * Published now (or queued for the retrier now); `recordError` is set when that succeeded but the done
   * record could not be written.
   */
  | { status: 'published' | 'queued'; recordError?: unknown }
  /** Published or queued before: nothing was sent. */
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

/** What Powertools hashes: the delivery key (the record's key) and the attempt's owner token. */
interface DedupeKey {
  id: string;
  owner: string;
}

interface CallState {
  delivery: Delivery;
  done?: 'published' | 'queued';
  publishError?: { error: unknown };
}

/**
 * Powertools' DynamoDB persistence, with every in-progress record written under the owner token of the attempt
 * that wrote it (Powertools' validation attribute, named `owner`). When the SDK retries its own conditional put
 * whose reply was lost, the retry fails the condition on the record this very attempt wrote: that lock is the
 * caller's, not another invocation's.
 */
class OwnedPersistenceLayer extends DynamoDBPersistenceLayer {
  protected override async _putRecord(record: IdempotencyRecord): Promise<void> {
    try {
      await super._putRecord(record);
    } catch (error) {
      const existing = error instanceof IdempotencyItemAlreadyExistsError ? error.existingRecord : undefined;
      if (
        existing?.getStatus() === IdempotencyRecordStatus.INPROGRESS &&
        existing.payloadHash !== undefined &&
        existing.payloadHash === record.payloadHash
      ) {
        return;
      }
      throw error;
    }
  }

  // The owner token is no payload check: a record is never compared with a redelivery's (other) token.
  override processExistingRecord(stored: IdempotencyRecord): IdempotencyRecord {
    return stored;
  }

  override async getRecord(data: Parameters<DynamoDBPersistenceLayer['getRecord']>[0]) {
    return this._getRecord(this.getHashedIdempotencyKey(data));
  }

  // The record's key straight from the delivery key: the same key as Powertools' own (its prefix, MD5 of the
  // JSON of `id`), without a JMESPath search of `id` on each of the two writes.
  protected override getHashedIdempotencyKey(
    data: Parameters<DynamoDBPersistenceLayer['getRecord']>[0],
  ): string {
    const id = (data as Partial<DedupeKey> | null)?.id;
    if (typeof id !== 'string' || id === '') {
      throw new IdempotencyKeyError('No data found to create a hashed idempotency_key');
    }
    return recordKeyOf(id);
  }
}

// The owner token's hash (the `owner` attribute), as Powertools computes it (MD5 of the JSON of the value, base64)
// without its JMESPath search of `owner` and the interpreter it builds for each search. Powertools declares this
// method private (its version is pinned in package.json): it is replaced here, not overridden in the class.
Object.defineProperty(OwnedPersistenceLayer.prototype, 'getHashedPayload', {
  value(this: OwnedPersistenceLayer, data: unknown): string {
    if (!this.isPayloadValidationEnabled()) return '';
    const owner = (data as Partial<DedupeKey> | null)?.owner;
    return createHash('md5')
      .update(JSON.stringify(owner ?? null))
      .digest('base64');
  },
});

function isQueued(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { queued?: unknown }).queued === true;
}

/**
 * Wraps a publish in Powertools Idempotency (DynamoDB persistence), keyed by the delivery id: an in-progress
 * record (the lock, owned by the attempt that wrote it) expires with the Lambda's remaining time, the publish
 * runs only for the caller that wrote it, a failed publish deletes it, and a successful (or queued) one marks
 * it completed for `ttlSeconds`.
 */
export function createDedupedPublish(options: DedupeOptions): DedupedPublish {
  if (options?.client === undefined) throw new TypeError('"client" is required');
  if (!options.tableName) throw new TypeError('"tableName" is required');
  if (typeof options.publish !== 'function') throw new TypeError('"publish" must be a function');
  const ttlSeconds = options.ttlSeconds ?? AwsDefaults.dedupeTtlSeconds;
  const lockMs = (options.lockSeconds ?? AwsDefaults.dedupeLockSeconds) * 1000;
  if (!(ttlSeconds > 0)) throw new TypeError('"ttlSeconds" must be a positive number');
  if (!(lockMs > 0)) throw new TypeError('"lockSeconds" must be a positive number');
  const bySource = { ...(options.ttlSecondsBySource ?? {}) };
  for (const [source, seconds] of Object.entries(bySource)) {
    if (!(seconds > 0)) throw new TypeError(`"ttlSecondsBySource.${source}" must be a positive number`);
  }
  // One Powertools setup per record lifetime in use (its config fixes the expiry), made on first use.
  const byTtl = new Map<number, ReturnType<typeof idempotentPublishOf>>();
  const setupFor = (delivery: Delivery) => {
    const source = delivery.source ?? DEFAULT_SOURCE;
    const seconds = Object.hasOwn(bySource, source) ? (bySource[source] as number) : ttlSeconds;
    let setup = byTtl.get(seconds);
    if (setup === undefined) {
      setup = idempotentPublishOf(options, seconds);
      byTtl.set(seconds, setup);
    }
    return setup;
  };

  return async (delivery, context) => {
    const remaining = context?.getRemainingTimeInMillis?.();
    const { config, idempotentPublish } = setupFor(delivery);
    // Powertools reads only getRemainingTimeInMillis from the context it is given.
    config.registerLambdaContext({
      getRemainingTimeInMillis: () => (typeof remaining === 'number' && remaining > 0 ? remaining : lockMs),
    } as Context);
    const state: CallState = { delivery };
    try {
      await idempotentPublish({ id: dedupeKeyOf(delivery), owner: randomId(16) }, state);
    } catch (error) {
      if (state.done !== undefined) return { status: state.done, recordError: error };
      if (state.publishError !== undefined) {
        const { error: publishError } = state.publishError;
        throw new DedupePublishError(publishError, error === publishError ? undefined : error);
      }
      if (error instanceof IdempotencyAlreadyInProgressError) {
        throw new DedupeInProgressError('delivery is being processed', { cause: error });
      }
      throw error;
    }
    return state.done === undefined ? { status: 'duplicate' } : { status: state.done };
  };
}

/** The Powertools config and idempotent publish of one record lifetime. */
function idempotentPublishOf(options: DedupeOptions, ttlSeconds: number) {
  const { publish } = options;
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'id',
    payloadValidationJmesPath: 'owner',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: ttlSeconds,
  });
  const persistenceStore = new OwnedPersistenceLayer({
    tableName: options.tableName,
    awsSdkV3Client: options.client,
    keyAttr: DedupeTable.partitionKey,
    expiryAttr: DedupeTable.ttlAttribute,
    validationKeyAttr: DedupeTable.ownerAttribute,
  });
  const idempotentPublish = makeIdempotent(
    async (_key: DedupeKey, state: CallState) => {
      let result: unknown;
      try {
        result = await publish(state.delivery);
      } catch (error) {
        state.publishError = { error };
        throw error;
      }
      const queued = isQueued(result);
      state.done = queued ? 'queued' : 'published';
      // Stored as the record's response: a redelivery is a duplicate either way.
      return queued ? { delivery: state.delivery.id, queued: true } : { delivery: state.delivery.id };
    },
    { persistenceStore, config, keyPrefix: AwsDefaults.dedupeKeyPrefix, dataIndexArgument: 0 },
  );
  return { config, idempotentPublish };
}
