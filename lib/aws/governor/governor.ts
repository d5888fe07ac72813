/**
 * The forge API governor: one DynamoDB item per token owner, in the token table beside the token, that every forge
 * call of every Lambda instance draws from before it goes out (the item and its writes, what each call costs:
 * ./item.ts).
 */
import { randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ForgeRateLimitError, isConditionalCheckFailed } from '../errors.js';
import { afterInvocation } from '../invocation.js';
import type { LoggerLike } from '../types.js';
import {
  type GovernedAnswer,
  type GovernorEvent,
  type LimitVerdict,
  limitVerdict,
  primaryFigures,
} from './answers.js';
import {
  bookExpression,
  expressions,
  type Item,
  itemOf,
  MAX_RECLAIM,
  type Pace,
  paceOf,
  type Refusal,
  refusalOf,
  releaseExpression,
  stopExpression,
  takeExpression,
  turnOf,
} from './item.js';
import { checkLimits, countsAgainst, type ForgeLimits, formatBudgets } from './limits.js';

export type { GovernedAnswer, GovernorEvent, LimitVerdict };

/** Key prefix of a governor item in the token table. */
export const GOVERNOR_KEY_PREFIX = 'governor#';

// How long an idle owner's item is kept beyond its longest budget window; the waits between tries while every slot
// is taken, from the first to the last, doubling, with jitter.
const [ITEM_TTL_SECONDS, SLOT_POLL_FIRST_MS, SLOT_POLL_MAX_MS] = [3600, 20, 250] as const;

/** Options of {@link ForgeGovernor}. */
export interface ForgeGovernorOptions {
  client: DynamoDBDocumentClient;
  /** The token table. */
  tableName: string;
  /** Whose budget: the token table key of the token the calls carry. */
  owner: string;
  limits: ForgeLimits;
  /** Longest a call waits for its turn. Default 60 s. */
  maxWaitMs?: number | undefined;
  /** How long a slot is held when never given back. Default 30 s. */
  leaseSeconds?: number | undefined;
  logger?: LoggerLike | undefined;
  /** Told of every wait, refusal, limit answer and store failure. */
  onEvent?: ((event: GovernorEvent) => void) | undefined;
  now?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
}

/** One call's turn. */
export interface Permit {
  /** How long the call waited for it, in ms. */
  readonly waitedMs: number;
  /** `false` when the store could not be reached and the call goes on unthrottled. */
  readonly governed: boolean;
  /** Gives the slot back and records what the answer says of the forge's limits. Never throws. */
  release(answer?: GovernedAnswer): Promise<LimitVerdict>;
}

/** Options of one call's wait. */
export interface AcquireOptions {
  /** Epoch ms the caller must have its answer by (the Lambda's deadline); the wait ends before. */
  deadline?: number | undefined;
}

/**
 * The budget of one token owner, shared through DynamoDB by every instance. One per owner per process.
 *
 * @example
 * ```ts
 * const governor = new ForgeGovernor({ client, tableName, owner: source.key, limits: config.limits });
 * const permit = await governor.acquire('POST', { deadline: Date.now() + context.getRemainingTimeInMillis() });
 * const response = await fetch(url, { method: 'POST', ... });
 * await permit.release({ status: response.status, headers: response.headers });
 * ```
 */
export class ForgeGovernor {
  readonly owner: string;
  readonly limits: ForgeLimits;
  readonly #client: DynamoDBDocumentClient;
  readonly #tableName: string;
  readonly #key: string;
  readonly #paces: Pace[];
  readonly #maxWaitMs: number;
  readonly #leaseMs: number;
  readonly #ttlSeconds: number;
  readonly #logger: LoggerLike | undefined;
  readonly #onEvent: (event: GovernorEvent) => void;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  /** The item as this instance last saw it (after its own write or a refusal). */
  #seen: Item | undefined;

  constructor(options: ForgeGovernorOptions) {
    if (options?.client === undefined) throw new TypeError('"client" is required');
    if (!options.tableName) throw new TypeError('"tableName" is required');
    if (!options.owner) throw new TypeError('"owner" is required');
    this.limits = { concurrency: options.limits?.concurrency, budgets: [...(options.limits?.budgets ?? [])] };
    checkLimits(this.limits);
    this.owner = options.owner;
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#key = `${GOVERNOR_KEY_PREFIX}${options.owner}`;
    this.#paces = this.limits.budgets.map(paceOf);
    this.#maxWaitMs = options.maxWaitMs ?? 60_000;
    this.#leaseMs = (options.leaseSeconds ?? 30) * 1000;
    if (!(this.#maxWaitMs >= 0)) throw new TypeError('"maxWaitMs" must be a non-negative number');
    if (!(this.#leaseMs > 0)) throw new TypeError('"leaseSeconds" must be a positive number');
    const longest = Math.max(0, ...this.limits.budgets.map((budget) => budget.seconds));
    this.#ttlSeconds = longest + ITEM_TTL_SECONDS;
    this.#logger = options.logger;
    this.#onEvent = options.onEvent ?? (() => undefined);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
  }

  #emit(event: GovernorEvent): void {
    try {
      this.#onEvent(event);
    } catch {
      // A metric never fails a call.
    }
  }

  /**
   * Waits for a turn of a `method` request: a slot below the concurrency limit and room in every budget the
   * method counts against, with no stop in force. Rejects with a {@link ForgeRateLimitError} when the turn cannot
   * come before the deadline (or `maxWaitMs`); goes on unthrottled (`governed: false`) when the store fails.
   */
  async acquire(method: string, options: AcquireOptions = {}): Promise<Permit> {
    const started = this.#now();
    const deadline = Math.min(started + this.#maxWaitMs, options.deadline ?? Number.POSITIVE_INFINITY);
    const lease = randomUUID();
    // The budgets not yet drawn from: a call that had to wait for one booked its turn there already.
    const counted = this.#paces.filter((pace) => countsAgainst(pace.budget.scope, method));
    let pending = counted;
    let reclaim: string[] = [];
    let polls = 0;
    let guesses = 0;
    let lastLimit: string | undefined;
    const refuse = (limit: string, resetAt: number): never => {
      this.#emit({ type: 'refused', limit });
      throw new ForgeRateLimitError(this.owner, limit, new Date(resetAt), {
        waitedMs: this.#now() - started,
      });
    };
    for (;;) {
      const now = this.#now();
      let refusal: Refusal | undefined;
      try {
        this.#seen = await this.#take(lease, pending, reclaim, now);
        const waitedMs = this.#now() - started;
        if (lastLimit !== undefined) this.#emit({ type: 'waited', ms: waitedMs, limit: lastLimit });
        return this.#permit(lease, waitedMs);
      } catch (error) {
        if (!isConditionalCheckFailed(error)) return this.#unavailable(error, started);
        const item = itemOf(error);
        this.#seen = item;
        reclaim = [];
        if (item === undefined || item.leases === undefined) {
          // A new owner, or its item expired: make it, then try again at once.
          await this.#create().catch(() => undefined);
          continue;
        }
        refusal = refusalOf(item, pending, this.limits.concurrency, this.#now());
        if (refusal?.limit === 'concurrency') {
          reclaim = Object.entries(item.leases)
            .filter(([, until]) => until <= now)
            .slice(0, MAX_RECLAIM)
            .map(([id]) => id);
          if (reclaim.length > 0) continue;
        }
        // A budget ahead of now: book this call's turn there (the budget's next arrival moves on by one interval,
        // so each waiter gets a turn of its own and none wakes only to be refused again), then sleep until it.
        const late = pending.filter((pace) => {
          const tat = item[pace.attribute];
          return typeof tat === 'number' && tat - now > pace.toleranceMs;
        });
        const stopped = typeof item.stopUntil === 'number' && item.stopUntil > now;
        // A stop voids the turns booked before it: after it, they would all go at once. The call books again.
        if (stopped) pending = counted;
        if (late.length > 0 && !stopped) {
          lastLimit = refusal?.limit ?? formatBudgets([(late[0] as Pace).budget]);
          let turn: number | undefined;
          try {
            turn = await this.#book(late, this.#now(), deadline);
          } catch (bookError) {
            if (!isConditionalCheckFailed(bookError)) return this.#unavailable(bookError, started);
            const seen = itemOf(bookError);
            this.#seen = seen;
            for (const pace of late) {
              const tat = seen?.[pace.attribute];
              if (typeof tat === 'number' && tat - pace.toleranceMs > deadline) {
                refuse(formatBudgets([pace.budget]), tat - pace.toleranceMs);
              }
            }
            continue;
          }
          pending = pending.filter((pace) => !late.includes(pace));
          await this.#sleep(Math.max(0, turn - this.#now()));
          continue;
        }
      }
      if (refusal === undefined) {
        // Only this instance's guess of a budget's state was wrong: the item it holds now is right. A guess wrong
        // again and again (clocks apart) waits as for a slot.
        if (++guesses <= 3) continue;
        refusal = { limit: 'concurrency', at: undefined, resetAt: this.#now() + SLOT_POLL_MAX_MS };
      }
      lastLimit = refusal.limit;
      const wake =
        refusal.at ??
        this.#now() + Math.min(SLOT_POLL_MAX_MS, SLOT_POLL_FIRST_MS * 2 ** polls++) * (0.5 + this.#random());
      if (wake > deadline) refuse(refusal.limit, refusal.resetAt);
      await this.#sleep(Math.max(0, wake - this.#now()));
    }
  }

  /**
   * Books a turn in each of `paces` (each ahead of now): one write that moves each budget's next arrival on by its
   * interval, if the turn it gives comes before `deadline`. Resolves the turn (epoch ms); a refused write (the turn
   * would come too late, or the budget went idle meanwhile) rejects with the condition check's error and the item.
   */
  async #book(paces: Pace[], now: number, deadline: number): Promise<number> {
    const { names, values, ...parts } = bookExpression(paces, now, deadline);
    const output = await this.#client.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { pk: this.#key },
        ...expressions(parts),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    const item = (output.Attributes ?? {}) as Item;
    this.#seen = item;
    return turnOf(item, paces);
  }

  /** The store failed: the call goes on without a turn (said in a metric and a log line, once per call). */
  #unavailable(error: unknown, started: number): Permit {
    this.#emit({ type: 'unavailable' });
    this.#logger?.warn('forge api governor unavailable, calling unthrottled', {
      owner: this.owner,
      error: (error as { name?: unknown })?.name,
    });
    const release = async (answer?: GovernedAnswer) => this.#verdict(answer, this.#now());
    return { waitedMs: this.#now() - started, governed: false, release };
  }

  #permit(lease: string, waitedMs: number): Permit {
    let released = false;
    return {
      waitedMs,
      governed: true,
      release: async (answer) => {
        const now = this.#now();
        const verdict = this.#verdict(answer, now);
        if (released) return verdict;
        released = true;
        const writes = (async () => {
          try {
            if (verdict.stopUntil !== undefined) await this.#stop(verdict.stopUntil, verdict.limited, now);
            await this.#release(lease, answer, now);
          } catch (error) {
            // The slot then frees itself when its lease expires.
            this.#logger?.warn('forge api governor could not give a slot back', {
              owner: this.owner,
              error: (error as { name?: unknown })?.name,
            });
          }
        })();
        // Inside an invocation, the slot goes back beside what the caller does next (the invocation waits for it
        // before it ends); a stop is written before the caller hears of it, so that its retry finds it in force.
        if (verdict.stopUntil === undefined && afterInvocation(writes)) return verdict;
        await writes;
        return verdict;
      },
    };
  }

  /** The one conditional write of a call: the lease, every budget, no stop in force. */
  async #take(lease: string, paces: Pace[], reclaim: string[], now: number): Promise<Item> {
    const { names, values, ...parts } = takeExpression({
      lease,
      leaseUntil: now + this.#leaseMs,
      limit: this.limits.concurrency + reclaim.length,
      ttl: Math.ceil(now / 1000) + this.#ttlSeconds,
      reclaim,
      paces,
      seen: this.#seen,
      now,
    });
    const output = await this.#client.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { pk: this.#key },
        ...expressions(parts),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return (output.Attributes ?? {}) as Item;
  }

  /** Makes the owner's item, empty, unless another instance just did. */
  async #create(): Promise<void> {
    await this.#client.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { pk: this.#key },
        UpdateExpression: 'SET #l = if_not_exists(#l, :empty), #ttl = :ttl',
        ExpressionAttributeNames: { '#l': 'leases', '#ttl': 'expiresAt' },
        ExpressionAttributeValues: { ':empty': {}, ':ttl': Math.ceil(this.#now() / 1000) + this.#ttlSeconds },
      }),
    );
  }

  #verdict(answer: GovernedAnswer | undefined, now: number): LimitVerdict {
    const verdict = limitVerdict(answer, now, (header) => this.#malformed(header));
    if (verdict.limited !== undefined) {
      this.#emit({
        type: 'limit-answer',
        status: answer?.status ?? 0,
        limit: verdict.limited === 'primary' ? 'primary' : 'retry-after',
      });
    }
    return verdict;
  }

  #malformed(header: string): void {
    this.#emit({ type: 'malformed-header', header });
    this.#logger?.warn('forge api answer has a malformed rate-limit header, ignored', { header });
  }

  /** Stops every instance until `until` (never shortening a longer stop another instance set). */
  async #stop(until: number, limited: LimitVerdict['limited'], now: number): Promise<void> {
    const reason = limited === 'secondary' ? 'retry-after' : 'primary';
    try {
      const ttl = Math.ceil(now / 1000) + this.#ttlSeconds;
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#tableName,
          Key: { pk: this.#key },
          ...stopExpression(until, reason, ttl),
        }),
      );
      this.#logger?.warn('forge api limit answer: every call of this owner waits', {
        owner: this.owner,
        reason,
        until: new Date(until).toISOString(),
      });
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /** Gives the lease back and records the primary budget's figures the answer states. */
  async #release(lease: string, answer: GovernedAnswer | undefined, now: number): Promise<void> {
    const { names, values, set } = releaseExpression(
      lease,
      primaryFigures(answer, now),
      Math.ceil(now / 1000) + this.#ttlSeconds,
    );
    await this.#client.send(
      new UpdateCommand({
        TableName: this.#tableName,
        Key: { pk: this.#key },
        UpdateExpression: `SET ${set.join(', ')} REMOVE #l.#id`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}
