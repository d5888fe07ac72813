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
  return storage.run({ deadline, forgeWaitMs: 0 }, fn);
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
  return (...args: A) =>
    currentInvocation() === undefined ? runInvocation(args[1], () => handler(...args)) : handler(...args);
}
