import type { Client } from './client.js';
import { config } from './configuration.js';
import { GrantTypes, TOKEN_KEYS, type TokenModeName, TokenModes } from './constants.js';
import { OAuth2Error, TokenError } from './errors.js';
import { redactValue } from './redact.js';
import type { Response } from './response.js';
import { toSnakeCase } from './snaky-hash.js';
import type { Params, RequestOptions, TokenMode } from './types.js';
import { parseQuery, percentEncode } from './url.js';

/** Called after an automatic refresh. */
export type OnRefresh = (token: AccessToken) => void | Promise<void>;

/** A function that makes a fresh token for {@link AccessTokenOptions.autoRefresh}. */
export type Refresher = (token: AccessToken) => Promise<AccessToken>;

/**
 * Options of {@link AccessToken} (the gem's opts hash). Each option is accepted in camelCase and in the
 * gem's snake_case; any other key is kept as an extra param (`token_type`, `scope`, ...).
 */
export interface AccessTokenOptions {
  /** The refresh token. Default none. */
  refreshToken?: string | null;
  /** Seconds until expiry; `0` means the token never expires. Default none. */
  expiresIn?: number | string;
  /** Expiry as epoch seconds, an epoch string or an ISO 8601 string. Default `now + expiresIn`. */
  expiresAt?: number | string | Date;
  /** Seconds subtracted once from the stored `expiresAt` (clock skew, latency). Default none. */
  expiresLatency?: number | string;
  /** How the token is sent. Default `'header'`. */
  mode?: TokenMode;
  /** `Authorization` header format. Default `'Bearer %s'`. */
  headerFormat?: string;
  /** Query/body parameter name in `'query'`/`'body'` modes. Default `'access_token'`. */
  paramName?: string;
  /** Which response field is the access token. Default: first of `TOKEN_KEYS`. */
  tokenName?: string;
  /**
   * Refresh an expired token before a request: `true` uses {@link AccessToken.refresh}; a function makes
   * the new token (for example a new client-credentials grant). Concurrent callers share one refresh.
   * Default `false`.
   */
  autoRefresh?: boolean | Refresher;
  /** Called after an automatic refresh (for example to persist `toHash()`). */
  onRefresh?: (token: AccessToken) => void | Promise<void>;
  [param: string]: unknown;
}

interface TokenOptions {
  mode: TokenMode;
  headerFormat: string;
  paramName: string;
  tokenName?: string;
}

const MODE_NAMES: ReadonlySet<string> = new Set(Object.values(TokenModes));
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

function now(): number {
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

function warn(message: string, code: string): void {
  process.emitWarning(message, { type: 'OAuth2Warning', code });
}

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() !== 'authorization') out[k] = v;
  return out;
}

/**
 * An access token (the gem's `OAuth2::AccessToken`): signs requests per `mode`, tracks expiry,
 * refreshes, revokes and serializes to a snake_case hash.
 *
 * @example
 * ```ts
 * const token = AccessToken.fromHash(client, { access_token: 'abc', expires_in: 3600 });
 * token.expired(); // false
 * const response = await token.get('/api/things', { params: { page: 2 } });
 * await store.put(token.toHash());
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6750
 */
export class AccessToken {
  /** The client this token makes requests with. */
  readonly client: Client;
  /** Extra params of the token response (`token_type`, `scope`, `id_token`, ...). */
  params: Record<string, unknown>;
  /** `mode`, `headerFormat`, `paramName` and `tokenName` (when set). */
  options: TokenOptions;
  /** The token response this token was built from, when there was one. */
  response: Response | undefined;
  #token: string;
  #refreshToken: string | undefined;
  #expiresIn: number | undefined;
  #expiresAt: number | undefined;
  #expiresLatency: number | undefined;
  #autoRefresh: Refresher | undefined;
  #onRefresh: OnRefresh | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(client: Client, token: string | null | undefined, options: AccessTokenOptions = {}) {
    if (client === null || typeof client !== 'object' || typeof client.request !== 'function') {
      throw new TypeError(`"client" must be a Client`);
    }
    if (token !== null && token !== undefined && typeof token !== 'string') {
      throw new TypeError(`"token" must be a string`);
    }
    if (options === null || typeof options !== 'object') throw new TypeError(`"options" must be an object`);
    this.client = client;
    this.#token = token ?? '';
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
    this.#refreshToken = refresh === '' ? undefined : refresh;

    let expiresIn = toInteger(taken.expiresIn, 'expires_in');
    if (expiresIn === undefined && rest.expires !== undefined && rest.expires !== null) {
      expiresIn = toInteger(rest.expires, 'expires');
      delete rest.expires;
    }
    this.#expiresIn = expiresIn;
    this.#expiresLatency = toInteger(taken.expiresLatency, 'expires_latency');
    let expiresAt = toEpoch(taken.expiresAt);
    if (expiresAt === undefined && expiresIn !== undefined && expiresIn !== 0) expiresAt = now() + expiresIn;
    if (expiresAt !== undefined && this.#expiresLatency) expiresAt -= this.#expiresLatency;
    this.#expiresAt = expiresAt;

    for (const field of ['headerFormat', 'paramName', 'tokenName'] as const) {
      if (taken[field] !== undefined && typeof taken[field] !== 'string') {
        throw new TypeError(`"${field}" must be a string`);
      }
    }
    this.options = {
      mode: validateMode(taken.mode ?? TokenModes.Header),
      headerFormat: (taken.headerFormat as string | undefined) ?? 'Bearer %s',
      paramName: (taken.paramName as string | undefined) ?? 'access_token',
      ...(taken.tokenName === undefined ? {} : { tokenName: taken.tokenName as string }),
    };
    const auto = taken.autoRefresh;
    if (auto !== undefined && typeof auto !== 'boolean' && typeof auto !== 'function') {
      throw new TypeError(`"autoRefresh" must be a boolean or a function`);
    }
    this.#autoRefresh =
      auto === true ? (t) => t.refresh() : typeof auto === 'function' ? (auto as Refresher) : undefined;
    if (taken.onRefresh !== undefined && typeof taken.onRefresh !== 'function') {
      throw new TypeError(`"onRefresh" must be a function`);
    }
    this.#onRefresh = taken.onRefresh as OnRefresh | undefined;
    this.params = rest;
    this.response = undefined;

    if (this.#token === '' && this.#refreshToken === undefined) {
      if (client.options.raiseErrors) throw new TokenError('missing_token', 'access token has no token');
      if (!config.silenceNoTokensWarning) warn('AccessToken has no token', 'OAUTH2_NO_TOKENS');
    }
  }

  /**
   * Builds a token from a hash: a token response or a `toHash()` result, snake_case or camelCase. The
   * token is the `token_name` field when set, else the first of `access_token`, `id_token`, `token`,
   * `accessToken`, `idToken` (warning about extra ones unless `config.silenceExtraTokensWarning`). A token
   * that is not a string (object, number, array) is a `TypeError` naming its field.
   */
  static fromHash(client: Client, hash: Record<string, unknown>): AccessToken {
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
    return new AccessToken(client, token as string | null | undefined, fresh);
  }

  /**
   * Builds a token from an `application/x-www-form-urlencoded` string (an implicit-grant callback
   * fragment): string keys, no snake-casing, a repeated key becomes an array; a repeated token, expiry,
   * `token_type` or other single-valued field is a `TypeError` naming it, and so is a leading `#` or `?` (as
   * in the gem, which finds no token then).
   *
   * @example
   * ```ts
   * AccessToken.fromKvform(client, 'access_token=abc&token_type=bearer&expires_in=3600');
   * ```
   */
  static fromKvform(client: Client, kvform: string): AccessToken {
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
    return AccessToken.fromHash(client, hash);
  }

  /** The access token string. */
  get token(): string {
    return this.#token;
  }

  /** The refresh token, when there is one. */
  get refreshToken(): string | undefined {
    return this.#refreshToken;
  }

  set refreshToken(value: string | undefined) {
    this.#refreshToken = value === '' ? undefined : value;
  }

  /** `expires_in` as given, in seconds. */
  get expiresIn(): number | undefined {
    return this.#expiresIn;
  }

  /** Expiry in epoch seconds, with `expiresLatency` already subtracted; `undefined` when it never expires. */
  get expiresAt(): number | undefined {
    return this.#expiresAt;
  }

  /** The latency (seconds) subtracted from `expiresAt`. */
  get expiresLatency(): number | undefined {
    return this.#expiresLatency;
  }

  /** Whether the token expires at all. */
  expires(): boolean {
    return this.#expiresAt !== undefined;
  }

  /** Whether the token is expired: `expiresAt <= now`. */
  expired(): boolean {
    return this.#expiresAt !== undefined && this.#expiresAt <= now();
  }

  /** The `Authorization` header for this token. */
  headers(): { Authorization: string } {
    return { Authorization: this.options.headerFormat.replace('%s', this.#token) };
  }

  #modeFor(verb: string): TokenModeName {
    const { mode } = this.options;
    let resolved: unknown;
    if (typeof mode === 'function') resolved = mode(verb);
    else if (typeof mode === 'object') resolved = mode[verb] ?? mode[verb.toUpperCase()] ?? TokenModes.Header;
    else resolved = mode;
    if (typeof resolved !== 'string' || !MODE_NAMES.has(resolved)) {
      throw new TypeError(`"mode" resolved to an invalid mode for "${verb}"`);
    }
    return resolved as TokenModeName;
  }

  async #ensureFresh(): Promise<void> {
    const refresher = this.#autoRefresh;
    if (refresher === undefined || !this.expired()) return;
    this.#refreshing ??= (async () => {
      const next = await refresher(this);
      this.#adopt(next);
      await this.#onRefresh?.(this);
    })().finally(() => {
      this.#refreshing = undefined;
    });
    await this.#refreshing;
  }

  #adopt(next: AccessToken): void {
    if (next === this) return;
    this.#token = next.token;
    this.#refreshToken = next.refreshToken ?? this.#refreshToken;
    this.#expiresIn = next.expiresIn;
    this.#expiresAt = next.expiresAt;
    this.params = next.params;
    this.response = next.response;
  }

  /**
   * Makes a request with the token (per `mode`) through the client. With `autoRefresh`, an expired token
   * is refreshed first.
   *
   * @example
   * ```ts
   * await token.request('PATCH', 'api/things/1', { body: { name: 'x' } });
   * ```
   */
  async request(verb: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    if (typeof verb !== 'string' || verb === '') throw new TypeError(`"verb" must be a non-empty string`);
    await this.#ensureFresh();
    const mode = this.#modeFor(verb.toLowerCase());
    const token = this.#token;
    const name = this.options.paramName;
    const next: RequestOptions = { ...opts, redact: [...(opts.redact ?? []), token, this.#refreshToken] };
    if (mode === 'header') {
      next.headers = { ...withoutAuthorization(opts.headers), ...this.headers() };
    } else if (mode === 'query') {
      next.params = { ...opts.params, [name]: token };
    } else {
      const body = opts.body;
      if (body === undefined) next.body = { [name]: token };
      else if (typeof body === 'string')
        next.body = `${body}${body === '' ? '' : '&'}${percentEncode(name)}=${percentEncode(token)}`;
      else if (body instanceof URLSearchParams) {
        const copy = new URLSearchParams(body);
        copy.set(name, token);
        next.body = copy;
      } else if (body instanceof Uint8Array) {
        throw new TypeError(`"body" must be a string or an object in "body" mode`);
      } else next.body = { ...(body as Params), [name]: token };
    }
    return this.client.request(verb, path, next);
  }

  /** GET with the token. */
  get(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('GET', path, opts);
  }

  /** POST with the token. */
  post(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('POST', path, opts);
  }

  /** PUT with the token. */
  put(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('PUT', path, opts);
  }

  /** PATCH with the token. */
  patch(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('PATCH', path, opts);
  }

  /** DELETE with the token. */
  delete(path: string, opts?: RequestOptions): Promise<Response> {
    return this.request('DELETE', path, opts);
  }

  /**
   * Refreshes the token (`grant_type=refresh_token`) and returns a new one; this token is not changed.
   * The old refresh token is kept when the response omits it; `mode`, formats and latency carry over.
   *
   * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
   */
  async refresh(params: Params = {}, accessTokenOptions: AccessTokenOptions = {}): Promise<AccessToken> {
    const refreshToken = this.#refreshToken;
    if (refreshToken === undefined) {
      throw new TokenError('missing_refresh_token', `no "refresh_token" is available to refresh with`);
    }
    const carried: AccessTokenOptions = {
      mode: this.options.mode,
      header_format: this.options.headerFormat,
      param_name: this.options.paramName,
      ...(this.options.tokenName === undefined ? {} : { token_name: this.options.tokenName }),
      ...(this.#expiresLatency === undefined ? {} : { expires_latency: this.#expiresLatency }),
      ...(this.#onRefresh === undefined ? {} : { onRefresh: this.#onRefresh }),
      ...(this.#autoRefresh === undefined ? {} : { autoRefresh: this.#autoRefresh }),
    };
    const fresh = await this.client.getToken(
      { ...params, grant_type: GrantTypes.RefreshToken, refresh_token: refreshToken },
      { ...carried, ...accessTokenOptions },
    );
    if (fresh.refreshToken === undefined) fresh.refreshToken = refreshToken;
    return fresh;
  }

  /**
   * Revokes the token at the authorization server (RFC 7009). `token_type_hint` picks the access or the
   * refresh token; by default the access token, else the refresh token.
   *
   * @see https://www.rfc-editor.org/rfc/rfc7009#section-2.1
   */
  async revoke(
    params: Params & { token_type_hint?: 'access_token' | 'refresh_token' } = {},
  ): Promise<Response> {
    const { token_type_hint: hint, ...rest } = params;
    let value: string | undefined;
    let type: string;
    if (hint === 'access_token') [value, type] = [this.#token, 'access_token'];
    else if (hint === 'refresh_token') [value, type] = [this.#refreshToken, 'refresh_token'];
    else if (hint === undefined) {
      [value, type] =
        this.#token !== '' ? [this.#token, 'access_token'] : [this.#refreshToken, 'refresh_token'];
    } else {
      throw new TokenError(
        'invalid_token_type_hint',
        `"token_type_hint" must be "access_token" or "refresh_token"`,
      );
    }
    if (value === undefined || value === '') {
      throw new TokenError('missing_token', `no "${type}" is available to revoke`);
    }
    return this.client.revokeToken(value, type, rest);
  }

  /**
   * The token as a plain snake_case hash for persistence, with the gem's keys: the extra params plus
   * `access_token`, `refresh_token`, `expires_at`, `mode`, `header_format`, `param_name` and
   * `token_name` when set (no `expires_in`: `expires_at` already holds the latency-adjusted expiry).
   * `AccessToken.fromHash(client, token.toHash()).toHash()` equals `token.toHash()`.
   */
  toHash(): Record<string, unknown> {
    const hash: Record<string, unknown> = {
      ...this.params,
      access_token: this.#token,
      refresh_token: this.#refreshToken ?? null,
      expires_at: this.#expiresAt ?? null,
      mode: this.options.mode,
      header_format: this.options.headerFormat,
      param_name: this.options.paramName,
    };
    if (this.options.tokenName !== undefined) hash.token_name = this.options.tokenName;
    return hash;
  }

  /** A redacted, serializable view: never the token or the refresh token. Use `toHash()` to persist. */
  toJSON(): Record<string, unknown> {
    return {
      token: config.filteredLabel,
      refresh_token: this.#refreshToken === undefined ? undefined : config.filteredLabel,
      expires_at: this.#expiresAt,
      expires_in: this.#expiresIn,
      mode: typeof this.options.mode === 'function' ? '[Function]' : this.options.mode,
      params: redactValue(this.params),
    };
  }

  [Symbol.for('nodejs.util.inspect.custom')](
    _depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `AccessToken ${inspect(this.toJSON(), options)}`;
  }
}

/**
 * The token of a token response (what `Client#getToken` returns). Every failure caused by the server's
 * answer is an {@link OAuth2Error} carrying the response: no object or an empty one, no token at all
 * ({@link TokenError} `missing_token`, unless `raiseErrors` is false: then, as the gem does, a token with an
 * empty string and a warning), or a field of the wrong type (`expires_in: "soon"`). A wrong field among
 * the caller's own `accessTokenOptions` stays the caller's `TypeError`.
 */
export function tokenFromResponse(
  client: Client,
  response: Response,
  accessTokenOptions: AccessTokenOptions,
): AccessToken {
  const parsed = response.parsed;
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    Object.keys(parsed).length === 0
  ) {
    throw new OAuth2Error(response, 'token response holds no token');
  }
  let token: AccessToken;
  try {
    token = AccessToken.fromHash(client, { ...parsed, ...accessTokenOptions });
  } catch (error) {
    if (error instanceof TokenError && error.response === undefined) {
      throw new TokenError(error.code ?? 'missing_token', 'token response holds no token', response);
    }
    if (error instanceof TypeError) {
      // The options alone, on a placeholder token: a TypeError there is the caller's, not the server's.
      new AccessToken(client, 'placeholder', accessTokenOptions);
      throw new OAuth2Error(response, `token response: ${error.message}`, { cause: error });
    }
    throw error;
  }
  token.response = response;
  return token;
}
