/**
 * The Lambda invocation a piece of code runs in, for the calls it makes that must not outlive it: a subscriber's
 * handler runs inside one (`withDeliveryReport` starts it), so the forge API governor knows how long a call may
 * wait for its turn, and the delivery log's report says how long the forge calls waited.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One invocation: its deadline and what its forge calls waited. */
export interface Invocation {
  /** Epoch ms the invocation times out at (`context.getRemainingTimeInMillis()`), when known. */
  readonly deadline: number | undefined;
  /** Time the forge calls of this invocation waited for their turn, in ms. */
  forgeWaitMs: number;
  /** Work that must be done before the invocation ends (the governor giving slots back). */
  readonly pending: Promise<unknown>[];
}

const storage = new AsyncLocalStorage<Invocation>();

/** Runs `fn` as the invocation of `context` (a Lambda context, or anything without `getRemainingTimeInMillis`). */
export function runInvocation<R>(context: unknown, fn: () => R): R {
  const remaining = (context as { getRemainingTimeInMillis?: unknown } | undefined)?.getRemainingTimeInMillis;
  let deadline: number | undefined;
  if (typeof remaining === 'function') {
    const ms = Number(remaining.call(context));
    if (Number.isFinite(ms) && ms > 0) deadline = Date.now() + ms;
  }
  return storage.run({ deadline, forgeWaitMs: 0, pending: [] }, fn);
}

/** The invocation the caller runs in, if any. */
export function currentInvocation(): Invocation | undefined {
  return storage.getStore();
}

/**
 * The handler, each call of it run as an invocation of its second argument (the Lambda context), unless it already
 * runs inside one.
 */
export function inInvocation<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args: A) => {
    if (currentInvocation() !== undefined) return handler(...args);
    return runInvocation(args[1], async () => {
      try {
        return await handler(...args);
      } finally {
        // What must not outlive the invocation is done before Lambda freezes it.
        const pending = currentInvocation()?.pending ?? [];
        while (pending.length > 0) await Promise.allSettled(pending.splice(0));
      }
    });
  };
}

/**
 * Leaves `work` to the invocation the caller runs in, which waits for it before it ends: `true`; without an
 * invocation, `false` (the caller awaits it itself).
 */
export function afterInvocation(work: Promise<unknown>): boolean {
  const invocation = currentInvocation();
  if (invocation === undefined) return false;
  invocation.pending.push(work);
  return true;
}
