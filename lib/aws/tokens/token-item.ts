import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AwsErrorCodes, TokenTable } from '../constants.js';
import { isConditionalCheckFailed, TokenStoreConflictError, TokenStoreError } from '../errors.js';
import type { LoggerLike, TokenKey, TokenLike } from '../types.js';

/** A stored token and its concurrency attributes, as {@link TokenStore.read} returns it. */
export interface StoredToken<T> {
  /** Absent while the very first token is being fetched (the item then only holds a lease). */
  token: T | undefined;
  /** Incremented by every write; 0 before the first. */
  version: number;
  /** Epoch seconds until which a refresher holds the lease. */
  leaseUntil: number | undefined;
  leaseOwner: string | undefined;
}

/**
 * The partition key of a token: `provider#clientId#scope`, each part URI-encoded (so `#` in a part cannot
 * collide) and the scope normalized (whitespace-separated, deduplicated, sorted): `forge#ci-bot#read%3Aorg%20repo`.
 */
export function tokenPartitionKey(key: TokenKey): string {
  if (!key?.provider) throw new TypeError('"key.provider" is required');
  if (!key.clientId) throw new TypeError('"key.clientId" is required');
  const scope = [...new Set((key.scope ?? '').split(/\s+/).filter((part) => part !== ''))].sort().join(' ');
  return [key.provider, key.clientId, scope].map(encodeURIComponent).join('#');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps only the placeholders an expression uses: DynamoDB rejects unused names and values. */
function used<V>(placeholders: Record<string, V>, ...expressions: string[]): Record<string, V> {
  const text = expressions.join(' ');
  return Object.fromEntries(
    Object.entries(placeholders).filter(([name]) => new RegExp(`${name}(?![A-Za-z0-9_])`).test(text)),
  );
}

/** A map DynamoDB can hold: JSON semantics (undefined dropped, dates as strings). */
function storable(hash: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(hash)) as Record<string, unknown>;
}

/** Where a {@link TokenItem} lives and what it needs: checked by the token store before it builds one. */
export interface TokenItemOptions<T extends TokenLike> {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** The partition key ({@link tokenPartitionKey}). */
  key: string;
  /** Which token: provider, client id and scope. */
  tokenKey: TokenKey;
  /** Rebuilds a token from its stored map. */
  fromHash: (hash: Record<string, unknown>) => T;
  /** Lifetime of the refresh lease, in seconds. */
  leaseSeconds: number;
  logger: LoggerLike | undefined;
  /** The clock, in epoch seconds. */
  seconds: () => number;
}

/**
 * The DynamoDB item of one token: reads it into a {@link StoredToken}, and makes each conditional write (take and
 * drop the refresh lease, write a new version). The item holds the token's `toHash()` map under `token`, a
 * `version` incremented by every write, and the lease (`leaseOwner`, `leaseUntil`).
 */
export class TokenItem<T extends TokenLike> {
  /** The partition key ({@link tokenPartitionKey}). */
  readonly key: string;
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #tokenKey: TokenKey;
  readonly #fromHash: (hash: Record<string, unknown>) => T;
  readonly #leaseSeconds: number;
  readonly #logger: LoggerLike | undefined;
  readonly #seconds: () => number;

  constructor(options: TokenItemOptions<T>) {
    this.key = options.key;
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#tokenKey = options.tokenKey;
    this.#fromHash = options.fromHash;
    this.#leaseSeconds = options.leaseSeconds;
    this.#logger = options.logger;
    this.#seconds = options.seconds;
  }

  /** Takes the refresh lease; resolves the owner id, or `undefined` when another caller won it. */
  async takeLease(stored: StoredToken<T> | undefined): Promise<string | undefined> {
    const owner = randomUUID();
    const now = this.#seconds();
    const names: Record<string, string> = { '#pk': TokenTable.partitionKey, '#version': 'version' };
    const values: Record<string, unknown> = {
      ':owner': owner,
      ':until': now + this.#leaseSeconds,
      ':zero': 0,
      ':provider': this.#tokenKey.provider,
      ':clientId': this.#tokenKey.clientId,
      ':scope': this.#tokenKey.scope ?? '',
    };
    let condition: string;
    if (stored === undefined) {
      condition = 'attribute_not_exists(#pk)';
    } else {
      values[':now'] = now;
      const versionCondition =
        stored.version === 0 ? '(attribute_not_exists(#version) OR #version = :zero)' : '#version = :v';
      if (stored.version !== 0) values[':v'] = stored.version;
      condition = `${versionCondition} AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)`;
    }
    const update =
      'SET leaseOwner = :owner, leaseUntil = :until, #version = if_not_exists(#version, :zero), ' +
      'provider = :provider, clientId = :clientId, #scope = :scope';
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#tableName,
          Key: { [TokenTable.partitionKey]: this.key },
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: used({ ...names, '#scope': 'scope' }, update, condition),
          ExpressionAttributeValues: used(values, update, condition),
        }),
      );
      return owner;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  async dropLease(owner: string): Promise<void> {
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#tableName,
          Key: { [TokenTable.partitionKey]: this.key },
          UpdateExpression: 'REMOVE leaseOwner, leaseUntil',
          ConditionExpression: 'leaseOwner = :owner',
          ExpressionAttributeValues: { ':owner': owner },
        }),
      );
    } catch (error) {
      // The lease expires on its own; a failed release only delays the next refresher.
      this.#logger?.warn('token lease release failed', { key: this.key, error: (error as Error)?.name });
    }
  }

  /**
   * Writes `token` as version `expectedVersion + 1` if the stored version is still `expectedVersion` and the
   * lease is `leaseOwner`'s (or, without one, nobody's). Resolves the new version; rejects with
   * {@link TokenStoreConflictError} when the condition failed.
   */
  async write(token: T, expectedVersion: number, leaseOwner: string | undefined): Promise<number> {
    const next = expectedVersion + 1;
    const item: Record<string, unknown> = {
      [TokenTable.partitionKey]: this.key,
      provider: this.#tokenKey.provider,
      clientId: this.#tokenKey.clientId,
      scope: this.#tokenKey.scope ?? '',
      token: storable(token.toHash()),
      version: next,
      updatedAt: this.#seconds(),
    };
    // Not `expiresAt`: that is the table's TTL attribute, and an expired access token must not take its refresh
    // token with it.
    if (token.expiresAt !== undefined) item.tokenExpiresAt = token.expiresAt;
    const values: Record<string, unknown> = {};
    let condition: string;
    if (expectedVersion === 0) {
      condition = '(attribute_not_exists(#pk) OR attribute_not_exists(#version) OR #version = :zero)';
      values[':zero'] = 0;
    } else {
      condition = '#version = :v';
      values[':v'] = expectedVersion;
    }
    if (leaseOwner !== undefined) {
      condition += ' AND leaseOwner = :owner';
      values[':owner'] = leaseOwner;
    } else {
      condition += ' AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)';
      values[':now'] = this.#seconds();
    }
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: used(
            { '#pk': TokenTable.partitionKey, '#version': 'version' },
            condition,
          ),
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) {
        throw new TokenStoreConflictError(
          `token "${this.key}" changed since version ${expectedVersion} or is leased by another refresher`,
          { cause: error },
        );
      }
      throw error;
    }
    return next;
  }

  /** Reads the item, strongly consistent; its `token` map (or a JSON string of one) is loaded with `fromHash`. */
  async read(): Promise<StoredToken<T> | undefined> {
    const output = await this.#client.send(
      new GetCommand({
        TableName: this.#tableName,
        Key: { [TokenTable.partitionKey]: this.key },
        ConsistentRead: true,
      }),
    );
    const item = output.Item;
    if (item === undefined) return undefined;
    let hash: unknown = item.token;
    if (typeof hash === 'string') {
      try {
        hash = JSON.parse(hash);
      } catch (error) {
        throw new TokenStoreError(AwsErrorCodes.invalidItem, `stored token "${this.key}" is not a map`, {
          cause: error,
        });
      }
    }
    let token: T | undefined;
    if (hash !== undefined && hash !== null) {
      if (!isRecord(hash))
        throw new TokenStoreError(AwsErrorCodes.invalidItem, `stored token "${this.key}" is not a map`);
      try {
        token = this.#fromHash(hash);
      } catch (error) {
        throw new TokenStoreError(
          AwsErrorCodes.invalidItem,
          `stored token "${this.key}" could not be loaded`,
          {
            cause: error,
          },
        );
      }
    }
    const version = typeof item.version === 'number' ? item.version : 0;
    const leaseUntil = typeof item.leaseUntil === 'number' ? item.leaseUntil : undefined;
    const leaseOwner = typeof item.leaseOwner === 'string' ? item.leaseOwner : undefined;
    return { token, version, leaseUntil, leaseOwner };
  }
}
