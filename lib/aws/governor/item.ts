/**
 * The governor's item and its one conditional write, as plain data: what a try of a call's turn writes, what a
 * refused try's item says of why, and each budget's pace (the generic cell rate algorithm's interval and tolerance).
 *
 * The item (`governor#<owner>`) holds
 * - `leases`: one entry per request in flight (lease id -> epoch ms it expires at). A call takes one while fewer than
 *   the concurrency limit are held and gives it back after the answer; a crashed holder's entry expires and the next
 *   caller that finds the limit reached removes it.
 * - per budget, the theoretical arrival time of the next request (`pace:<budget>`, epoch ms; the generic cell rate
 *   algorithm): a request conforms while that time is at most `(burst - 1)` intervals ahead of now, and pushes it one
 *   interval (`seconds / (limit - burst)`) further. Never more than `limit` requests in any `seconds`-long window.
 * - `stopUntil` / `stopReason`: a time before which nobody calls (a `retry-after` or a primary budget of 0 that one
 *   instance was told of stops them all).
 * - `remaining` / `resetAt` / `total`: the primary budget as the last answer stated it.
 * - `expiresAt`: its TTL; an idle owner's item disappears.
 *
 * A call below every limit costs one conditional `UpdateItem` before it goes out (it takes the lease and draws from
 * every budget at once; `ReturnValues` hands back the item, so no read) and one plain `UpdateItem` after the answer
 * (the lease back, the primary budget's figures). A call that is refused learns why from the same write
 * (`ReturnValuesOnConditionCheckFailure`). Held by a budget, it books its turn there (the budget's next arrival moves
 * on by one interval: each waiter gets a turn of its own) and sleeps until it; held by the concurrency limit, it
 * tries again after a short wait.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { formatBudgets, type RequestBudget } from './limits.js';

/**
 * Expired leases one try removes at most: after a mass crash, the slots come back 25 a try, and the try's
 * expressions stay well under DynamoDB's 4 KB.
 */
export const MAX_RECLAIM = 25;

/** The expressions of a write, as DynamoDB takes them. */
export function expressions(parts: { set: string[]; remove?: string[]; conditions: string[] }) {
  const remove = parts.remove ?? [];
  return {
    UpdateExpression: `SET ${parts.set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: parts.conditions.join(' AND '),
  };
}

/** A budget's pace: where its next arrival time is kept, its interval and how far ahead it may run (burst - 1 intervals). */
export interface Pace {
  budget: RequestBudget;
  attribute: string;
  intervalMs: number;
  toleranceMs: number;
}

/** The governor's item as read back (leases, stop, each budget's next arrival under its `pace:` attribute). */
export interface Item {
  leases?: Record<string, number>;
  stopUntil?: number;
  stopReason?: string;
  [attribute: string]: unknown;
}

/**
 * The write that books a call's turn in budgets ahead of now: each one's next arrival moves on by its interval,
 * provided it is ahead of now beyond its tolerance (else the call conforms at once) and the turn comes by `deadline`.
 */
export function bookExpression(paces: Pace[], now: number, deadline: number) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const set: string[] = [];
  const conditions: string[] = [];
  paces.forEach((pace, index) => {
    const p = `#p${index}`;
    names[p] = pace.attribute;
    values[`:i${index}`] = pace.intervalMs;
    values[`:a${index}`] = now + pace.toleranceMs;
    values[`:b${index}`] = deadline + pace.toleranceMs;
    set.push(`${p} = ${p} + :i${index}`);
    conditions.push(`(${p} > :a${index} AND ${p} <= :b${index})`);
  });
  return { names, values, set, conditions };
}

/** The turn a booking gave (epoch ms): each budget's next arrival before the write, less its tolerance; the latest. */
export function turnOf(item: Item, paces: Pace[]): number {
  return Math.max(
    ...paces.map((pace) => (item[pace.attribute] as number) - pace.intervalMs - pace.toleranceMs),
  );
}

/** The write after the answer: the lease given back, the primary budget's figures as the answer stated them. */
export function releaseExpression(
  lease: string,
  figures: { remaining: number; resetAt: number; total: number | undefined } | undefined,
  ttl: number,
) {
  const names: Record<string, string> = { '#l': 'leases', '#id': lease, '#ttl': 'expiresAt' };
  const values: Record<string, unknown> = { ':ttl': ttl };
  const set = ['#ttl = :ttl'];
  if (figures !== undefined) {
    Object.assign(names, { '#rem': 'remaining', '#reset': 'resetAt' });
    Object.assign(values, { ':rem': figures.remaining, ':reset': figures.resetAt });
    set.push('#rem = :rem', '#reset = :reset');
    if (figures.total !== undefined) {
      names['#total'] = 'total';
      values[':total'] = figures.total;
      set.push('#total = :total');
    }
  }
  return { names, values, set };
}

/** The write that stops every call of the owner until `until`, never shortening a longer stop already in force. */
export function stopExpression(until: number, reason: string, ttl: number) {
  return {
    UpdateExpression: 'SET #s = :until, #r = :reason, #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#s) OR #s < :until',
    ExpressionAttributeNames: { '#s': 'stopUntil', '#r': 'stopReason', '#ttl': 'expiresAt' },
    ExpressionAttributeValues: { ':until': until, ':reason': reason, ':ttl': ttl },
  };
}

/** Why a try was refused, and when to try again (`undefined`: at once). */
export interface Refusal {
  limit: string;
  at: number | undefined;
  resetAt: number;
}

/** The pace of a budget: `limit - burst` arrivals a window after a burst of `burst`. */
export function paceOf(budget: RequestBudget): Pace {
  const intervalMs = (budget.seconds * 1000) / (budget.limit - budget.burst);
  return {
    budget,
    attribute: `pace:${formatBudgets([budget])}`,
    intervalMs,
    toleranceMs: (budget.burst - 1) * intervalMs,
  };
}

/** What one try of a call's turn needs. */
export interface TakeInput {
  lease: string;
  leaseUntil: number;
  /** The concurrency limit, plus the expired leases this try removes. */
  limit: number;
  ttl: number;
  /** Expired leases to remove, each checked to be there still. */
  reclaim: string[];
  paces: Pace[];
  /** The item as this instance last saw it: whether each budget is busy (its next arrival ahead of now) or idle. */
  seen: Item | undefined;
  now: number;
}

/**
 * The one conditional write of a call: its lease below the concurrency limit, every budget it counts against, no
 * stop in force. A budget busy as last seen moves its next arrival one interval on (if within the tolerance); an idle
 * one sets it one interval from now. A wrong guess fails the condition, and the refused write's item sets it right.
 */
export function takeExpression(input: TakeInput) {
  const names: Record<string, string> = {
    '#l': 'leases',
    '#id': input.lease,
    '#s': 'stopUntil',
    '#ttl': 'expiresAt',
  };
  const values: Record<string, unknown> = {
    ':lease': input.leaseUntil,
    ':now': input.now,
    ':limit': input.limit,
    ':ttl': input.ttl,
  };
  const set = ['#l.#id = :lease', '#ttl = :ttl'];
  const remove: string[] = [];
  const conditions = ['size(#l) < :limit', '(attribute_not_exists(#s) OR #s <= :now)'];
  input.reclaim.forEach((id, index) => {
    names[`#r${index}`] = id;
    remove.push(`#l.#r${index}`);
    conditions.push(`attribute_exists(#l.#r${index})`);
  });
  input.paces.forEach((pace, index) => {
    const p = `#p${index}`;
    names[p] = pace.attribute;
    const tat = input.seen?.[pace.attribute];
    if (typeof tat === 'number' && tat > input.now) {
      values[`:i${index}`] = pace.intervalMs;
      values[`:t${index}`] = input.now + pace.toleranceMs;
      set.push(`${p} = ${p} + :i${index}`);
      conditions.push(`(${p} > :now AND ${p} <= :t${index})`);
    } else {
      values[`:n${index}`] = input.now + pace.intervalMs;
      set.push(`${p} = :n${index}`);
      conditions.push(`(attribute_not_exists(${p}) OR ${p} <= :now)`);
    }
  });
  return { names, values, set, remove, conditions };
}

/** Which limit refused a try, and when it frees up; `undefined` when none does (a wrong guess of a budget's state). */
export function refusalOf(item: Item, paces: Pace[], concurrency: number, now: number): Refusal | undefined {
  const refusals: Refusal[] = [];
  if (typeof item.stopUntil === 'number' && item.stopUntil > now) {
    const limit = item.stopReason === 'primary' ? 'primary' : 'retry-after';
    refusals.push({ limit, at: item.stopUntil, resetAt: item.stopUntil });
  }
  const leases = Object.values(item.leases ?? {});
  if (leases.length >= concurrency) {
    refusals.push({ limit: 'concurrency', at: undefined, resetAt: Math.min(...leases) });
  }
  for (const pace of paces) {
    const tat = item[pace.attribute];
    if (typeof tat === 'number' && tat - now > pace.toleranceMs) {
      const at = tat - pace.toleranceMs;
      refusals.push({ limit: formatBudgets([pace.budget]), at, resetAt: at });
    }
  }
  if (refusals.length === 0) return undefined;
  // The one that frees up last decides; a slot (no time) only when nothing else holds the call.
  const timed = refusals.filter((refusal) => refusal.at !== undefined);
  if (timed.length === 0) return refusals[0];
  return timed.reduce((a, b) => ((a.at as number) >= (b.at as number) ? a : b));
}

/** The item a refused write returned (`ReturnValuesOnConditionCheckFailure`), read back from its wire form. */
export function itemOf(error: unknown): Item | undefined {
  const raw = (error as { Item?: Record<string, AttributeValue> }).Item;
  if (raw === undefined || raw === null || Object.keys(raw).length === 0) return undefined;
  return unmarshall(raw) as Item;
}
