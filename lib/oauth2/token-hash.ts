/**
 * How an {@link AccessToken} reads and writes the gem's hashes: its options (camelCase or snake_case), a token
 * response or `toHash()` result, an `application/x-www-form-urlencoded` string, and the hash it persists as.
 */
import type { AccessToken, AccessTokenOptions, OnRefresh, Refresher } from './access-token.js';
import { config } from './configuration.js';
import { TOKEN_KEYS, type TokenModeName, TokenModes } from './constants.js';
import { toSnakeCase } from './snaky-hash.js';
import type { TokenMode } from './types.js';
import { parseQuery } from './url.js';

/** `mode`, `headerFormat`, `paramName` and `tokenName` (when set) of an {@link AccessToken}. */
export interface TokenOptions {
  mode: TokenMode;
  headerFormat: string;
  paramName: string;
  tokenName?: string;
}

/** What an {@link AccessToken} keeps of its options, read and checked by {@link readTokenOptions}. */
export interface ReadTokenOptions {
  refreshToken: string | undefined;
  expiresIn: number | undefined;
  expiresAt: number | undefined;
  expiresLatency: number | undefined;
  options: TokenOptions;
  autoRefresh: Refresher | undefined;
  onRefresh: OnRefresh | undefined;
  /** The options no field consumed: the token's extra params. */
  params: Record<string, unknown>;
}

export const MODE_NAMES: ReadonlySet<string> = new Set(Object.values(TokenModes));
const CONSUMED = [
  ['refreshToken', 'refresh_token'],
  ['expiresIn', 'expires_in'],
  ['expiresAt', 'expires_at'],
  ['expiresLatency', 'expires_latency'],
  ['headerFormat', 'header_format'],
  ['paramName', 'param_name'],
  ['tokenName', 'token_name'],
  ['autoRefresh', 'auto_refresh'],
  ['onRefresh', 'on_refresh'],
  ['mode', 'mode'],
] as const;

/** Fields a token reads as one value: repeated in a form, they are an error, never joined. */
const SINGLE_VALUED: readonly string[] = [...TOKEN_KEYS, ...CONSUMED.flat(), 'expires', 'token_type'];

export function now(): number {
  return Math.floor(Date.now() / 1000);
}

function toInteger(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Math.trunc(Number(value));
  throw new TypeError(`"${field}" must be a number of seconds`);
}

function toEpoch(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string') {
    if (/^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Math.trunc(Number(value));
    const ms = Date.parse(value);
    if (!Number.isNaN(ms)) return Math.floor(ms / 1000);
  }
  throw new TypeError(`"expires_at" must be epoch seconds, an epoch string or an ISO 8601 time`);
}

function validateMode(mode: unknown): TokenMode {
  if (typeof mode === 'string' && MODE_NAMES.has(mode)) return mode as TokenModeName;
  if (typeof mode === 'function') return mode as TokenMode;
  if (mode !== null && typeof mode === 'object' && !Array.isArray(mode)) {
    for (const [verb, value] of Object.entries(mode)) {
      if (typeof value !== 'string' || !MODE_NAMES.has(value)) {
        throw new TypeError(`"mode.${verb}" must be "header", "query" or "body"`);
      }
    }
    return mode as TokenMode;
  }
  throw new TypeError(
    `"mode" must be "header", "query", "body", a function of the verb or a per-verb object`,
  );
}

export function warn(message: string, code: string): void {
  process.emitWarning(message, { type: 'OAuth2Warning', code });
}

/**
 * Reads an {@link AccessToken}'s options: each field in camelCase or snake_case, checked (a `TypeError` naming
 * it), `expiresAt` computed from `expiresIn` and `expiresLatency`; every other key is kept as a param.
 */
export function readTokenOptions(options: AccessTokenOptions): ReadTokenOptions {
  const rest: Record<string, unknown> = { ...options };
  const taken: Record<string, unknown> = {};
  for (const [camel, snake] of CONSUMED) {
    const value = rest[snake] ?? rest[camel];
    delete rest[snake];
    delete rest[camel];
    if (value !== undefined && value !== null) taken[camel] = value;
  }
  const refresh = taken.refreshToken;
  if (refresh !== undefined && typeof refresh !== 'string')
    throw new TypeError(`"refresh_token" must be a string`);
  const refreshToken = refresh === '' ? undefined : refresh;

  let expiresIn = toInteger(taken.expiresIn, 'expires_in');
  if (expiresIn === undefined && rest.expires !== undefined && rest.expires !== null) {
    expiresIn = toInteger(rest.expires, 'expires');
    delete rest.expires;
  }
  const expiresLatency = toInteger(taken.expiresLatency, 'expires_latency');
  let expiresAt = toEpoch(taken.expiresAt);
  if (expiresAt === undefined && expiresIn !== undefined && expiresIn !== 0) expiresAt = now() + expiresIn;
  if (expiresAt !== undefined && expiresLatency) expiresAt -= expiresLatency;

  for (const field of ['headerFormat', 'paramName', 'tokenName'] as const) {
    if (taken[field] !== undefined && typeof taken[field] !== 'string') {
      throw new TypeError(`"${field}" must be a string`);
    }
  }
  const tokenOptions: TokenOptions = {
    mode: validateMode(taken.mode ?? TokenModes.Header),
    headerFormat: (taken.headerFormat as string | undefined) ?? 'Bearer %s',
    paramName: (taken.paramName as string | undefined) ?? 'access_token',
    ...(taken.tokenName === undefined ? {} : { tokenName: taken.tokenName as string }),
  };
  const auto = taken.autoRefresh;
  if (auto !== undefined && typeof auto !== 'boolean' && typeof auto !== 'function') {
    throw new TypeError(`"autoRefresh" must be a boolean or a function`);
  }
  const autoRefresh: Refresher | undefined =
    auto === true
      ? (t: AccessToken) => t.refresh()
      : typeof auto === 'function'
        ? (auto as Refresher)
        : undefined;
  if (taken.onRefresh !== undefined && typeof taken.onRefresh !== 'function') {
    throw new TypeError(`"onRefresh" must be a function`);
  }
  return {
    refreshToken,
    expiresIn,
    expiresAt,
    expiresLatency,
    options: tokenOptions,
    autoRefresh,
    onRefresh: taken.onRefresh as OnRefresh | undefined,
    params: rest,
  };
}

/**
 * Splits a hash (a token response or a `toHash()` result, snake_case or camelCase) into the token and the
 * options of {@link AccessToken.fromHash}: the token is the `token_name` field when set, else the first of
 * `TOKEN_KEYS` (warning about extra ones unless `config.silenceExtraTokensWarning`).
 */
export function splitHash(hash: Record<string, unknown>): {
  token: string | null | undefined;
  options: Record<string, unknown>;
} {
  if (hash === null || typeof hash !== 'object' || Array.isArray(hash)) {
    throw new TypeError(`"hash" must be an object`);
  }
  const fresh: Record<string, unknown> = { ...hash };
  const tokenName = fresh.token_name ?? fresh.tokenName;
  let key: string | undefined;
  if (typeof tokenName === 'string' && tokenName !== '') {
    if (Object.hasOwn(fresh, tokenName)) key = tokenName;
    else if (Object.hasOwn(fresh, toSnakeCase(tokenName))) key = toSnakeCase(tokenName);
    else {
      if (!config.silenceNoTokensWarning) {
        warn(
          `AccessToken.fromHash: token_name "${tokenName}" is not among the keys (${Object.keys(fresh).join(', ')}); you may need snaky: false`,
          'OAUTH2_NO_TOKENS',
        );
      }
      if (Object.hasOwn(fresh, 'access_token')) key = 'access_token';
    }
  } else {
    const present = TOKEN_KEYS.filter((k) => fresh[k] !== undefined && fresh[k] !== null);
    key = present[0];
    if (present.length > 1 && !config.silenceExtraTokensWarning) {
      warn(
        `AccessToken.fromHash: hash contained more than one token key (${present.join(', ')}); using "${key}"`,
        'OAUTH2_EXTRA_TOKENS',
      );
    }
  }
  let token: unknown = '';
  if (key !== undefined) {
    token = fresh[key];
    delete fresh[key];
  }
  if (token !== null && token !== undefined && typeof token !== 'string') {
    // Never coerced: an object would become "[object Object]", a repeated form key "a,b".
    throw new TypeError(`"${key}" must be a string`);
  }
  return { token: token as string | null | undefined, options: fresh };
}

/** The hash of an `application/x-www-form-urlencoded` string, as {@link AccessToken.fromKvform} reads it. */
export function parseKvform(kvform: string): Record<string, unknown> {
  if (typeof kvform !== 'string') throw new TypeError(`"kvform" must be a string`);
  // The gem hands the string to Rack, which keeps a leading "#" or "?" in the first key, so no token is
  // found and it raises; refuse it up front, saying what to pass instead.
  if (kvform.startsWith('#') || kvform.startsWith('?')) {
    throw new TypeError(
      `"kvform" starts with "${kvform[0]}": pass the fragment or query without it (new URL(url).hash.slice(1))`,
    );
  }
  const hash = parseQuery(kvform);
  for (const field of SINGLE_VALUED) {
    if (Array.isArray(hash[field])) throw new TypeError(`"${field}" is repeated`);
  }
  return hash;
}

/** The plain snake_case hash of a token, with the gem's keys (see {@link AccessToken.toHash}). */
export function tokenToHash(token: AccessToken): Record<string, unknown> {
  const hash: Record<string, unknown> = {
    ...token.params,
    access_token: token.token,
    refresh_token: token.refreshToken ?? null,
    expires_at: token.expiresAt ?? null,
    mode: token.options.mode,
    header_format: token.options.headerFormat,
    param_name: token.options.paramName,
  };
  if (token.options.tokenName !== undefined) hash.token_name = token.options.tokenName;
  return hash;
}
