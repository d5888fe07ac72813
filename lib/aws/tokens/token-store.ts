import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { TokenStoreConflictError, TokenStoreError } from '../errors.js';
import type { LoggerLike, TokenKey, TokenLike } from '../types.js';
import { type StoredToken, TokenItem, tokenPartitionKey } from './token-item.js';

export { type StoredToken, tokenPartitionKey } from './token-item.js';

/** One token in the token table: its key, how to load it from its stored map, and how to get a new one. */
export interface TokenTarget<T extends TokenLike = TokenLike> {
  /** Which token: provider, client id and scope. */
  key: TokenKey;
  /** Rebuilds a token from its stored map, e.g. `(hash) => AccessToken.fromHash(client, hash)`. */
  fromHash: (hash: Record<string, unknown>) => T;
  /**
   * Gets a new token from the authorization server; `current` is the stored token, if any, e.g.
   * `(current) => current?.refreshToken ? current.refresh() : client.clientCredentials.getToken({ scope })`.
   */
  fetchToken: (current: T | undefined) => Promise<T>;
}

/** Options of {@link TokenStore}: its target, table and knobs (defaults in {@link AwsDefaults}). */
export interface TokenStoreOptions<T extends TokenLike> extends TokenTarget<T> {
  /** DocumentClient from `@aws-sdk/lib-dynamodb`. */
  client: DynamoDBDocumentClient;
  /** Table with partition key `pk` (S). */
  tableName: string;
  /** A token within this many seconds of expiry is refreshed. Default 300. */
  refreshWindowSeconds?: number | undefined;
  /** Lifetime of the refresh lease, in seconds. Default 15. */
  leaseSeconds?: number | undefined;
  /** How long a caller that lost the lease waits for the new token, in ms. Default 5000. */
  waitMs?: number | undefined;
  /** Poll interval while waiting, in ms. Default 100. */
  pollMs?: number | undefined;
  logger?: LoggerLike | undefined;
  /** Clock in ms (tests). Default `Date.now`. */
  now?: (() => number) | undefined;
  /** Sleep (tests). Default a timer. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/**
 * How {@link TokenStore.refresh} obtained its token.
 * - `fresh`: the stored (or in-memory) token was outside the window; nothing was fetched.
 * - `refreshed`: this caller took the lease and fetched a new token.
 * - `waited`: another process refreshed it while this caller waited.
 * - `stale`: another process holds the lease; the old token is returned because it is still valid.
 */
export type RefreshOutcome = 'fresh' | 'refreshed' | 'waited' | 'stale';

/** Result of {@link TokenStore.refresh}. */
export interface RefreshResult<T> {
  token: T;
  /** The stored version the token belongs to. */
  version: number;
  outcome: RefreshOutcome;
}

/**
 * OAuth tokens in DynamoDB, one item per provider, client and scope: the token's `toHash()` map under
 * `token`, a `version` incremented by every write, and a short refresh lease (`leaseOwner`, `leaseUntil`).
 *
 * `get()` serves the token from memory until it is within the refresh window, then from DynamoDB. An
 * expiring token is refreshed single-flight across processes: a conditional update takes the lease (version
 * unchanged, no live lease); the winner calls the authorization server and writes the new token with
 * version + 1, conditionally; the others keep using the old token while it is valid, or poll for the new
 * version. Every write is conditional; a lost race is a {@link TokenStoreConflictError}.
 *
 * @example
 * ```ts
 * const store = new TokenStore({
 *   client: DynamoDBDocumentClient.from(new DynamoDBClient()), tableName: 'tokens',
 *   key: { provider: 'forge', clientId: 'ci-bot', scope: 'repo' },
 *   fromHash: (hash) => AccessToken.fromHash(oauth, hash),
 *   fetchToken: () => oauth.clientCredentials.getToken({ scope: 'repo' }),
 * });
 * const token = await store.get();
 * ```
 */
export class TokenStore<T extends TokenLike = TokenLike> {
  readonly key: string;
  readonly #item: TokenItem<T>;
  readonly #fetchToken: (current: T | undefined) => Promise<T>;
  readonly #windowSeconds: number;
  readonly #waitMs: number;
  readonly #pollMs: number;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #memory: { token: T; version: number } | undefined;
  #inflight: Promise<RefreshResult<T>> | undefined;

  constructor(options: TokenStoreOptions<T>) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    if (typeof options.fromHash !== 'function') throw new TypeError('"fromHash" must be a function');
    if (typeof options.fetchToken !== 'function') throw new TypeError('"fetchToken" must be a function');
    this.key = tokenPartitionKey(options.key);
    this.#fetchToken = options.fetchToken;
    this.#windowSeconds = options.refreshWindowSeconds ?? AwsDefaults.refreshWindowSeconds;
    const leaseSeconds = options.leaseSeconds ?? AwsDefaults.leaseSeconds;
    this.#waitMs = options.waitMs ?? AwsDefaults.leaseWaitMs;
    this.#pollMs = options.pollMs ?? AwsDefaults.leasePollMs;
    if (!(this.#windowSeconds >= 0))
      throw new TypeError('"refreshWindowSeconds" must be a non-negative number');
    if (!(leaseSeconds > 0)) throw new TypeError('"leaseSeconds" must be a positive number');
    if (!(this.#waitMs >= 0)) throw new TypeError('"waitMs" must be a non-negative number');
    if (!(this.#pollMs > 0)) throw new TypeError('"pollMs" must be a positive number');
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#item = new TokenItem({
      client: options.client,
      tableName: options.tableName,
      key: this.key,
      tokenKey: options.key,
      fromHash: options.fromHash,
      leaseSeconds,
      logger: this.#logger,
      seconds: () => this.#seconds(),
    });
  }

  #seconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /** Whether a token is valid for more than `windowSeconds` (a token without expiry always is). */
  #fresh(token: T, windowSeconds: number): boolean {
    return token.expiresAt === undefined || token.expiresAt - this.#seconds() > windowSeconds;
  }

  /** Whether a token has not expired yet. */
  #valid(token: T): boolean {
    return token.expiresAt === undefined || token.expiresAt > this.#seconds();
  }

  /**
   * A usable token: from memory while outside the refresh window, else from DynamoDB, refreshing it
   * (single-flight across processes) when it is within the window or missing.
   */
  async get(): Promise<T> {
    const memory = this.#memory;
    if (memory !== undefined && this.#fresh(memory.token, this.#windowSeconds)) return memory.token;
    return (await this.refresh()).token;
  }

  /**
   * Makes sure the stored token is valid for more than `windowSeconds` (default: the store's window),
   * refreshing it when not, or always with `force`. Concurrent calls in one process share one attempt.
   */
  refresh(options: { windowSeconds?: number; force?: boolean } = {}): Promise<RefreshResult<T>> {
    if (this.#inflight !== undefined && options.force !== true) return this.#inflight;
    const attempt = this.#refresh(
      options.windowSeconds ?? this.#windowSeconds,
      options.force === true,
    ).finally(() => {
      if (this.#inflight === attempt) this.#inflight = undefined;
    });
    this.#inflight = attempt;
    return attempt;
  }

  async #refresh(windowSeconds: number, force: boolean): Promise<RefreshResult<T>> {
    const deadline = this.#now() + this.#waitMs;
    let firstVersion: number | undefined;
    let contended = false;
    for (;;) {
      const stored = await this.read();
      firstVersion ??= stored?.version ?? 0;
      const version = stored?.version ?? 0;
      const token = stored?.token;
      // A version newer than the first one read was just written by another refresher: take it while valid,
      // even when the token's whole lifetime is shorter than the window (else every waiter would refresh again).
      const newer = version > firstVersion;
      if (
        token !== undefined &&
        ((!force && this.#fresh(token, windowSeconds)) || (newer && this.#valid(token)))
      ) {
        return this.#remember(token, version, contended ? 'waited' : 'fresh');
      }
      const leaseLive = stored?.leaseUntil !== undefined && stored.leaseUntil > this.#seconds();
      if (!leaseLive) {
        const owner = await this.#item.takeLease(stored);
        if (owner !== undefined) return this.#refreshAsOwner(owner, token, version);
      }
      contended = true;
      if (token !== undefined && this.#valid(token)) return this.#remember(token, version, 'stale');
      if (this.#now() >= deadline) {
        throw new TokenStoreError(
          AwsErrorCodes.refreshTimeout,
          `no fresh token for "${this.key}" within ${this.#waitMs} ms`,
        );
      }
      await this.#sleep(this.#pollMs);
    }
  }

  #remember(token: T, version: number, outcome: RefreshOutcome): RefreshResult<T> {
    this.#memory = { token, version };
    return { token, version, outcome };
  }

  async #refreshAsOwner(owner: string, current: T | undefined, version: number): Promise<RefreshResult<T>> {
    let next: T;
    try {
      next = await this.#fetchToken(current);
    } catch (error) {
      await this.#item.dropLease(owner);
      throw new TokenStoreError(AwsErrorCodes.refreshFailed, `token refresh failed for "${this.key}"`, {
        cause: error,
      });
    }
    try {
      const written = await this.#item.write(next, version, owner);
      return this.#remember(next, written, 'refreshed');
    } catch (error) {
      if (!(error instanceof TokenStoreConflictError)) throw error;
      // Our lease expired and someone else wrote meanwhile: theirs is the stored one; ours is still valid.
      this.#logger?.warn('token write lost its lease', { key: this.key });
      const stored = await this.read();
      if (stored?.token !== undefined && this.#fresh(stored.token, this.#windowSeconds)) {
        return this.#remember(stored.token, stored.version, 'waited');
      }
      return { token: next, version, outcome: 'refreshed' };
    }
  }

  /**
   * Writes a token if the stored version is still `expectedVersion` (0: none stored yet) and nobody holds a
   * live lease. Resolves the new version; rejects with {@link TokenStoreConflictError} when the race was lost.
   */
  async save(token: T, expectedVersion: number): Promise<number> {
    if (!Number.isInteger(expectedVersion) || expectedVersion < 0) {
      throw new TypeError('"expectedVersion" must be a non-negative integer');
    }
    const version = await this.#item.write(token, expectedVersion, undefined);
    this.#memory = { token, version };
    return version;
  }

  /**
   * Reads the stored item (strongly consistent). A `token` map written by the Ruby gem's `to_hash` (or a JSON
   * string of it) loads as well as ours.
   */
  read(): Promise<StoredToken<T> | undefined> {
    return this.#item.read();
  }
}
