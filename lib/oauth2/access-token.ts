import type { Client } from './client.js';
import { config } from './configuration.js';
import { GrantTypes } from './constants.js';
import { TokenError } from './errors.js';
import { redactValue } from './redact.js';
import type { Response } from './response.js';
import { signedRequest } from './signed-request.js';
import {
  now,
  parseKvform,
  readTokenOptions,
  splitHash,
  type TokenOptions,
  tokenToHash,
  warn,
} from './token-hash.js';
import type { Params, RequestOptions, TokenMode } from './types.js';

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
    const read = readTokenOptions(options);
    this.#refreshToken = read.refreshToken;
    this.#expiresIn = read.expiresIn;
    this.#expiresLatency = read.expiresLatency;
    this.#expiresAt = read.expiresAt;
    this.options = read.options;
    this.#autoRefresh = read.autoRefresh;
    this.#onRefresh = read.onRefresh;
    this.params = read.params;
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
    const { token, options } = splitHash(hash);
    return new AccessToken(client, token, options);
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
    return AccessToken.fromHash(client, parseKvform(kvform));
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
    return this.client.request(verb, path, signedRequest(this, verb.toLowerCase(), opts));
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
    return tokenToHash(this);
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
