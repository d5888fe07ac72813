/**
 * The governor's item and its one conditional write, as plain data: what a try of a call's turn writes, what a
 * refused try's item says of why, and each budget's pace (the generic cell rate algorithm's interval and tolerance).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { formatBudgets, type RequestBudget } from './limits.js';

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
