/**
 * One forge call through the governor: its turn, the call, the answer read for the forge's limits, the slot given
 * back; a secondary-limit answer waited out and tried once more; a primary budget run out, or a limit that holds
 * past the deadline, a `ForgeRateLimitError`.
 */
import { ForgeRateLimitError } from '../errors.js';
import type { ForgeGovernor, GovernedAnswer } from './governor.js';

/** Options of {@link governedCall}. */
export interface GovernedCallOptions {
  /** Epoch ms the answer is needed by. */
  deadline?: number | undefined;
  /** Told how long each turn was waited for (ms), when it was. */
  onWait?: ((ms: number) => void) | undefined;
}

/** The status and headers of a result, or of an error that carries the forge's answer (lib/oauth2's `OAuth2Error`). */
function answerOf(value: unknown): GovernedAnswer | undefined {
  const candidate = (value as { response?: unknown } | null | undefined)?.response ?? value;
  const { status, headers } = (candidate ?? {}) as { status?: unknown; headers?: unknown };
  if (typeof status !== 'number' || !(headers instanceof Headers)) return undefined;
  return { status, headers };
}

/**
 * Sends `send()` as a `method` request of `governor`'s owner. Resolves what `send` resolves, rejects with what it
 * rejects, except for a rate-limit answer of the forge: waited out and tried once more when it is a secondary limit
 * and the wait ends before the deadline, else a {@link ForgeRateLimitError} naming the limit and when it resets.
 */
export async function governedCall<T>(
  governor: ForgeGovernor,
  method: string,
  send: () => Promise<T>,
  options: GovernedCallOptions = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const permit = await governor.acquire(method, { deadline: options.deadline });
    if (permit.waitedMs > 0) options.onWait?.(permit.waitedMs);
    let result: T | undefined;
    let failure: { error: unknown } | undefined;
    try {
      result = await send();
    } catch (error) {
      failure = { error };
    }
    const verdict = await permit.release(answerOf(failure === undefined ? result : failure.error));
    if (verdict.limited === undefined) {
      if (failure !== undefined) throw failure.error;
      return result as T;
    }
    const until = verdict.stopUntil ?? Date.now();
    const retry = verdict.limited === 'secondary' && attempt === 0;
    if (retry && (options.deadline === undefined || until < options.deadline)) {
      // Without the store the stop is this call's own to keep.
      if (!permit.governed)
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
      continue;
    }
    throw new ForgeRateLimitError(
      governor.owner,
      verdict.limited === 'primary' ? 'primary' : 'retry-after',
      new Date(until),
    );
  }
}
