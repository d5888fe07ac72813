/**
 * What the forge API governor holds every caller of one token to: how many requests may be in flight at once, and
 * how many requests (all of them, or the content-creating ones) a window of time takes. A preset per forge gives the
 * limits its documentation states; `FORGEBRIDGE_FORGE_API_*` settings override them. No AWS SDK here: the stage
 * reader (lib/aws/stage-config.ts) checks these settings at package time with the same parser.
 */
import { type Env, numberEnv, optionalEnv } from '../env.js';

/** Which requests a budget counts: the content-creating ones (POST, PATCH, PUT, DELETE) or every request. */
export type BudgetScope = 'writes' | 'all';

/**
 * One budget: at most `limit` requests of `scope` in any `seconds`-long window, however the forge counts them
 * (a sliding window or fixed ones). The governor paces them: a bucket of `burst` requests, refilled at
 * `(limit - burst) / seconds` a second, so that a burst and the refill that follows it never exceed `limit`.
 */
export interface RequestBudget {
  scope: BudgetScope;
  limit: number;
  seconds: number;
  /** Requests that may go at once after a quiet spell. Default 1: strictly paced. */
  burst: number;
}

/** The limits of one token owner (a GitHub App installation, an OAuth client). */
export interface ForgeLimits {
  /** Requests in flight at once, across every Lambda instance. */
  concurrency: number;
  budgets: RequestBudget[];
}

/**
 * How far the settings go. Each request in flight is an entry of the owner's one DynamoDB item (an item holds at
 * most 400 KB) and each budget a clause of its writes (an expression holds at most 4 KB): 1,000 in flight and 4
 * budgets keep the item under 60 KB and every expression under 1.5 KB, far beyond any forge's documented figures.
 */
export const ForgeLimitBounds = { concurrency: 1000, budgets: 4 } as const;

/**
 * Checks limits against {@link ForgeLimitBounds}: a `TypeError` naming where each figure came from (`names`: the
 * option, by default, or the environment variable) for limits out of them.
 */
export function checkLimits(
  limits: ForgeLimits,
  names: { concurrency: string; budgets: string } = {
    concurrency: '"limits.concurrency"',
    budgets: '"limits.budgets"',
  },
): void {
  const { concurrency, budgets } = limits;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > ForgeLimitBounds.concurrency) {
    throw new TypeError(
      `${names.concurrency} must be a whole number from 1 to ${ForgeLimitBounds.concurrency}`,
    );
  }
  if (budgets.length > ForgeLimitBounds.budgets) {
    throw new TypeError(`${names.budgets} holds at most ${ForgeLimitBounds.budgets} budgets`);
  }
}

/** The forges with a preset. `generic` is a forge whose limits nobody stated. */
export const ForgeLimitPresetNames = [
  'github',
  'gitlab',
  'gitea',
  'forgejo',
  'bitbucket',
  'generic',
] as const;
export type ForgeLimitPresetName = (typeof ForgeLimitPresetNames)[number];

/** A preset: the limits, and the page of the forge's documentation they come from. */
export interface ForgeLimitPreset extends ForgeLimits {
  source: string;
}

/**
 * Each forge's documented limits (docs/rate-limits.md says which figure comes from where). The primary budget a
 * forge announces in its answers (`x-ratelimit-remaining`, GitHub's 5,000 an hour per installation and up) is not
 * configured: the governor learns it from the answers.
 */
export const ForgeLimitPresets: Readonly<Record<ForgeLimitPresetName, ForgeLimitPreset>> = {
  // "No more than 100 concurrent requests"; "no more than 80 content-generating requests per minute and no more
  // than 500 content-generating requests per hour". The hour's bucket lets 420 go in a burst (the minute's pace
  // still applies) and refills 80 an hour: never more than 500 in any hour.
  github: {
    concurrency: 100,
    budgets: [
      { scope: 'writes', limit: 80, seconds: 60, burst: 1 },
      { scope: 'writes', limit: 500, seconds: 3600, burst: 420 },
    ],
    source: 'https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api',
  },
  // GitLab's note-creation limit (300 a minute per user, the default of every instance); GitLab states no
  // concurrency limit: 100, as GitHub's.
  gitlab: {
    concurrency: 100,
    budgets: [{ scope: 'writes', limit: 300, seconds: 60, burst: 1 }],
    source: 'https://docs.gitlab.com/administration/settings/rate_limit_on_notes_creation/',
  },
  // Gitea and Forgejo enforce no API rate limit of their own (an operator puts one in a proxy): a self-hosted
  // server is spared with 20 requests in flight at most.
  gitea: { concurrency: 20, budgets: [], source: 'https://docs.gitea.com/administration/config-cheat-sheet' },
  forgejo: {
    concurrency: 20,
    budgets: [],
    source: 'https://forgejo.org/docs/latest/admin/config-cheat-sheet/',
  },
  // Bitbucket Cloud: 1,000 requests an hour per user to repository data (a one-hour rolling window).
  bitbucket: {
    concurrency: 20,
    budgets: [{ scope: 'all', limit: 1000, seconds: 3600, burst: 500 }],
    source: 'https://support.atlassian.com/bitbucket-cloud/docs/api-request-limits/',
  },
  generic: { concurrency: 20, budgets: [], source: '' },
};

/** The governor's settings, as the functions read them. */
export interface GovernorConfig {
  /** `FORGEBRIDGE_FORGE_API_GOVERNOR` is not `off`. */
  enabled: boolean;
  preset: ForgeLimitPresetName;
  limits: ForgeLimits;
  /** Longest a call waits for its turn (the Lambda's remaining time bounds it too). */
  maxWaitMs: number;
  /** How long a slot is held when its holder never gives it back (a crashed instance). */
  leaseSeconds: number;
}

/** Defaults of the governor's settings. */
export const GovernorDefaults = {
  preset: 'github' as ForgeLimitPresetName,
  maxWaitMs: 60_000,
  /** Longer than a forge request may take (lib/oauth2's request timeout is 10 s by default). */
  leaseSeconds: 30,
} as const;

const BUDGET = /^(writes|all):(\d+)\/(\d+)s(?:~(\d+))?$/;

/**
 * Parses a budget list: `writes:80/60s, writes:500/3600s~420, all:1000/3600s~500` (scope, limit, window in seconds,
 * and after `~` the burst). `none` (or an empty text) is no budget. A `TypeError` naming `name` for anything else.
 */
export function parseBudgets(text: string, name = 'budgets'): RequestBudget[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'none') return [];
  return trimmed.split(',').map((part) => {
    const match = BUDGET.exec(part.trim());
    if (match === null) {
      throw new TypeError(
        `"${name}": "${part.trim()}" is not a budget (writes|all:<limit>/<seconds>s[~<burst>], e.g. writes:80/60s)`,
      );
    }
    const [, scope, limit, seconds, burst] = match;
    const budget: RequestBudget = {
      scope: scope as BudgetScope,
      limit: Number(limit),
      seconds: Number(seconds),
      burst: burst === undefined ? 1 : Number(burst),
    };
    if (budget.limit < 2 || budget.seconds < 1) {
      throw new TypeError(
        `"${name}": "${part.trim()}" needs a limit of at least 2 and a window of at least 1 s`,
      );
    }
    if (budget.burst < 1 || budget.burst >= budget.limit) {
      throw new TypeError(`"${name}": "${part.trim()}" needs a burst from 1 to below its limit`);
    }
    return budget;
  });
}

/** Writes budgets back as {@link parseBudgets} reads them. */
export function formatBudgets(budgets: readonly RequestBudget[]): string {
  if (budgets.length === 0) return 'none';
  return budgets
    .map((b) => `${b.scope}:${b.limit}/${b.seconds}s${b.burst === 1 ? '' : `~${b.burst}`}`)
    .join(', ');
}

/** Whether a request of `method` counts against budgets of `scope`. */
export function countsAgainst(scope: BudgetScope, method: string): boolean {
  return scope === 'all' || !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}

/**
 * Reads the governor's settings: `FORGEBRIDGE_FORGE_API_GOVERNOR` (`on`, default, or `off`),
 * `FORGEBRIDGE_FORGE_API_PRESET` (a forge; default `github`), and overrides of the preset's figures:
 * `FORGEBRIDGE_FORGE_API_CONCURRENCY`, `FORGEBRIDGE_FORGE_API_BUDGETS`, `FORGEBRIDGE_FORGE_API_MAX_WAIT_MS`,
 * `FORGEBRIDGE_FORGE_API_LEASE_SECONDS`. A `TypeError` naming the variable for a wrong value.
 */
export function readGovernorConfig(env: Env = process.env): GovernorConfig {
  const switchValue = optionalEnv('FORGEBRIDGE_FORGE_API_GOVERNOR', env) ?? 'on';
  if (switchValue !== 'on' && switchValue !== 'off') {
    throw new TypeError('environment variable "FORGEBRIDGE_FORGE_API_GOVERNOR" must be "on" or "off"');
  }
  const presetName = optionalEnv('FORGEBRIDGE_FORGE_API_PRESET', env) ?? GovernorDefaults.preset;
  if (!(ForgeLimitPresetNames as readonly string[]).includes(presetName)) {
    throw new TypeError(
      `environment variable "FORGEBRIDGE_FORGE_API_PRESET" must be one of ${ForgeLimitPresetNames.join(', ')}`,
    );
  }
  const preset = ForgeLimitPresets[presetName as ForgeLimitPresetName];
  const concurrency = numberEnv('FORGEBRIDGE_FORGE_API_CONCURRENCY', env) ?? preset.concurrency;
  const budgetsText = optionalEnv('FORGEBRIDGE_FORGE_API_BUDGETS', env);
  const budgets =
    budgetsText === undefined
      ? preset.budgets.map((budget) => ({ ...budget }))
      : parseBudgets(budgetsText, 'FORGEBRIDGE_FORGE_API_BUDGETS');
  checkLimits(
    { concurrency, budgets },
    {
      concurrency: 'environment variable "FORGEBRIDGE_FORGE_API_CONCURRENCY"',
      budgets: 'environment variable "FORGEBRIDGE_FORGE_API_BUDGETS"',
    },
  );
  return {
    enabled: switchValue === 'on',
    preset: presetName as ForgeLimitPresetName,
    limits: { concurrency, budgets },
    maxWaitMs: numberEnv('FORGEBRIDGE_FORGE_API_MAX_WAIT_MS', env) ?? GovernorDefaults.maxWaitMs,
    leaseSeconds: numberEnv('FORGEBRIDGE_FORGE_API_LEASE_SECONDS', env) ?? GovernorDefaults.leaseSeconds,
  };
}
