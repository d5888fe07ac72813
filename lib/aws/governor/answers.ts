/**
 * What a forge's answer says of its rate limits: a 403/429 that is a limit answer (GitHub's secondary limits with
 * `retry-after`, its primary budget at `x-ratelimit-remaining: 0` with `x-ratelimit-reset`, GitLab's and Bitbucket's
 * 429), the stop it calls for, and the primary budget's figures. GitLab states its budget in `RateLimit-Remaining`,
 * `RateLimit-Reset` and `RateLimit-Limit` (no `x-` prefix), read where GitHub's names are absent. A header that is
 * not what the forge documents is ignored (and said so), never a number taken on trust: a stop lasts an hour at most.
 */

/** An answer of the forge, as far as the governor reads it. */
export interface GovernedAnswer {
  status: number;
  headers: Headers;
}

/** What the governor saw, for metrics and logs. */
export type GovernorEvent =
  | { type: 'waited'; ms: number; limit: string }
  | { type: 'refused'; limit: string }
  | { type: 'limit-answer'; status: number; limit: string }
  | { type: 'unavailable' }
  | { type: 'malformed-header'; header: string };

/** What an answer says of the forge's limits. */
export interface LimitVerdict {
  /** A 403/429 that is a rate limit: `secondary` (retry after the wait) or `primary` (do not spend more). */
  limited?: 'secondary' | 'primary' | undefined;
  /** Epoch ms before which nobody calls, when the answer set one. */
  stopUntil?: number | undefined;
}

/** The longest stop a forge's answer can impose (a careless `retry-after` of a year is an hour). */
const MAX_STOP_MS = 3_600_000;
/** A limit answer that names no time: GitHub's advice, wait at least a minute. */
const UNTIMED_STOP_MS = 60_000;

/** A whole number of seconds, or an HTTP date, from now; `undefined` for anything else. */
function retryAfterMs(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A non-negative whole number of at most 12 digits; `undefined` for anything else. */
function wholeNumber(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  return /^\d{1,12}$/.test(text) ? Number(text) : undefined;
}

/** The budget's headers of an answer: GitHub's `x-ratelimit-*`, else GitLab's `ratelimit-*`; name and value each. */
function budgetHeaders(headers: Headers) {
  const prefix =
    headers.has('x-ratelimit-remaining') || headers.has('x-ratelimit-reset') ? 'x-ratelimit-' : 'ratelimit-';
  const read = (field: string) => ({ name: `${prefix}${field}`, text: headers.get(`${prefix}${field}`) });
  return {
    gitHub: prefix === 'x-ratelimit-',
    remaining: read('remaining'),
    reset: read('reset'),
    limit: read('limit'),
  };
}

/**
 * A reset time as epoch ms: GitHub and GitLab document epoch seconds. A GitLab figure too small to be one (below
 * 10^9, before 2001) is read as seconds from now, as the IETF's RateLimit header draft and some GitLab endpoints send it.
 */
function resetAtMs(reset: number | undefined, gitHub: boolean, now: number): number | undefined {
  if (reset === undefined) return undefined;
  return !gitHub && reset < 1_000_000_000 ? now + reset * 1000 : reset * 1000;
}

/**
 * Reads an answer's limits at `now` (epoch ms). `onMalformed` is told the name of each rate-limit header present
 * but unreadable.
 */
export function limitVerdict(
  answer: GovernedAnswer | undefined,
  now: number,
  onMalformed: (header: string) => void = () => undefined,
): LimitVerdict {
  if (answer === undefined) return {};
  const { status, headers } = answer;
  const budget = budgetHeaders(headers);
  const afterText = headers.get('retry-after');
  const remaining = wholeNumber(budget.remaining.text);
  const reset = wholeNumber(budget.reset.text);
  const after = afterText === null ? undefined : retryAfterMs(afterText, now);
  if (budget.remaining.text !== null && remaining === undefined) onMalformed(budget.remaining.name);
  if (budget.reset.text !== null && reset === undefined) onMalformed(budget.reset.name);
  if (afterText !== null && after === undefined) onMalformed('retry-after');
  const resetAt = resetAtMs(reset, budget.gitHub, now);
  const cap = (ms: number) => now + Math.min(MAX_STOP_MS, Math.max(0, ms));
  const limitAnswer = status === 429 || (status === 403 && (remaining === 0 || afterText !== null));
  if (limitAnswer) {
    const limited = remaining === 0 && after === undefined ? 'primary' : 'secondary';
    const stopUntil =
      after !== undefined
        ? cap(after)
        : limited === 'primary' && resetAt !== undefined
          ? cap(resetAt - now)
          : cap(UNTIMED_STOP_MS);
    return { limited, stopUntil };
  }
  // A success that spent the last of the primary budget: nobody spends more until it resets.
  if (remaining === 0) return { stopUntil: cap(resetAt === undefined ? UNTIMED_STOP_MS : resetAt - now) };
  return {};
}

/**
 * The primary budget as an answer states it at `now` (`x-ratelimit-remaining`, `-reset`, `-limit`, or GitLab's
 * `ratelimit-*`), when it does.
 */
export function primaryFigures(
  answer: GovernedAnswer | undefined,
  now: number = Date.now(),
): { remaining: number; resetAt: number; total: number | undefined } | undefined {
  if (answer === undefined) return undefined;
  const budget = budgetHeaders(answer.headers);
  const remaining = wholeNumber(budget.remaining.text);
  const resetAt = resetAtMs(wholeNumber(budget.reset.text), budget.gitHub, now);
  if (remaining === undefined || resetAt === undefined) return undefined;
  return { remaining, resetAt, total: wholeNumber(budget.limit.text) };
}
