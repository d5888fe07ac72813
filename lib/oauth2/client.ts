import { type AccessToken, type AccessTokenOptions, tokenFromResponse } from './access-token.js';
import { Authenticator } from './auth/authenticator.js';
import { config } from './configuration.js';
import { type AuthScheme, AuthSchemes, ClientDefaults, DEFAULT_HEADERS } from './constants.js';
import { DebugLog, OAUTH_DEBUG, stdoutLogger } from './debug-log.js';
import { discoverMetadata } from './discovery.js';
import { OAuth2Error } from './errors.js';
import { algorithmFor } from './jwt.js';
import { rememberSecrets } from './redact.js';
import { followRedirect, HTTP_PROTOCOLS, REDIRECT_STATUSES } from './redirect.js';
import { Response } from './response.js';
import type { SnakyHashClass } from './snaky-hash.js';
import { Assertion } from './strategy/assertion.js';
import { AuthCode } from './strategy/auth-code.js';
import { ClientCredentials } from './strategy/client-credentials.js';
import { Implicit } from './strategy/implicit.js';
import { Password } from './strategy/password.js';
import { Transport } from './transport.js';
import type {
  ClientOptions,
  ConnectionOptions,
  HttpRequest,
  Logger,
  ParseOption,
  RequestOptions,
} from './types.js';
import { buildUrl, encodeParams, normalizeSite, type Params } from './url.js';

const CLIENT_OPTION_KEYS: ReadonlySet<string> = new Set([
  'site',
  'authorizeUrl',
  'tokenUrl',
  'revokeUrl',
  'redirectUri',
  'authScheme',
  'basicAuthEncoding',
  'raiseErrors',
  'logger',
  'debug',
  'connection',
  'privateKey',
  'privateKeyAlg',
  'keyId',
  'assertionAudience',
  'assertionLifetime',
]);

const CONNECTION_OPTION_KEYS: ReadonlySet<string> = new Set([
  'timeout',
  'headers',
  'fetch',
  'dispatcher',
  'proxy',
  'tls',
  'maxRedirects',
  'maxResponseBytes',
  'onRequest',
  'onResponse',
]);

const AUTH_SCHEMES: ReadonlySet<string> = new Set(Object.values(AuthSchemes));
/** Endpoint options that may hold an absolute URL; `redirectUri` is not one (a native app's may be `com.app:/cb`). */
const ENDPOINT_OPTIONS = ['authorizeUrl', 'tokenUrl', 'revokeUrl'] as const;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Params of {@link Client.getToken}: wire parameters plus a few reserved keys. */
export interface TokenParams extends Params {
  /** Extra request headers, merged last. */
  headers?: Record<string, string>;
  /** How the token response is parsed. Default `'automatic'`. */
  parse?: ParseOption;
  /** Snake-case the token response. Default `true`. */
  snaky?: boolean;
  /** The hash class of the parsed token response. Default `SnakyHash`. */
  snakyHashClass?: SnakyHashClass;
}

/** The resolved options a {@link Client} works with (defaults applied; secrets not included). */
export interface ResolvedClientOptions {
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  redirectUri: string | undefined;
  authScheme: AuthScheme;
  basicAuthEncoding: 'form' | 'none';
  raiseErrors: boolean;
  debug: boolean;
  timeout: number;
  maxRedirects: number;
  maxResponseBytes: number;
}

function requireString(value: unknown, field: string): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`"${field}" must be a non-empty string`);
}

/** Throws unless `value` is an http: or https: URL (checked when it parses, or always with `absolute`). */
function requireHttpUrl(value: string, field: string, absolute: boolean): void {
  if (!absolute && !URL.canParse(value)) return;
  if (!HTTP_PROTOCOLS.has(URL.canParse(value) ? new URL(value).protocol : '')) {
    throw new TypeError(`"${field}" must be an http or https URL`);
  }
}

function requireByteCount(value: unknown, field: string): void {
  if (!Number.isSafeInteger(value) || (value as number) <= 0) {
    throw new TypeError(`"${field}" must be a positive integer number of bytes`);
  }
}

function validateOptions(options: ClientOptions): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`"options" must be an object`);
  for (const key of Object.keys(options)) {
    if (!CLIENT_OPTION_KEYS.has(key)) throw new TypeError(`"${key}" is not a known client option`);
  }
  for (const field of [
    'authorizeUrl',
    'tokenUrl',
    'revokeUrl',
    'redirectUri',
    'privateKeyAlg',
    'keyId',
  ] as const) {
    if (options[field] !== undefined) requireString(options[field], field);
  }
  // An unparseable site keeps its own message ("must be an absolute URL"); a parseable one must be http(s):
  // `javascript:`, `ftp:` and `localhost:8080` (a scheme, to the URL parser) are refused here.
  if (typeof options.site === 'string') requireHttpUrl(options.site, 'site', false);
  for (const field of ENDPOINT_OPTIONS) {
    const value = options[field];
    if (value !== undefined && SCHEME.test(value)) requireHttpUrl(value, field, true);
  }
  if (options.authScheme !== undefined && !AUTH_SCHEMES.has(options.authScheme)) {
    throw new TypeError(`"authScheme" must be one of ${[...AUTH_SCHEMES].map((s) => `"${s}"`).join(', ')}`);
  }
  if (options.basicAuthEncoding !== undefined && !['form', 'none'].includes(options.basicAuthEncoding)) {
    throw new TypeError(`"basicAuthEncoding" must be "form" or "none"`);
  }
  for (const field of ['raiseErrors', 'debug'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'boolean') {
      throw new TypeError(`"${field}" must be a boolean`);
    }
  }
  if (options.logger !== undefined && typeof options.logger?.info !== 'function') {
    throw new TypeError(`"logger" must have an info(message) method`);
  }
  if (options.assertionLifetime !== undefined) {
    if (!Number.isInteger(options.assertionLifetime) || options.assertionLifetime <= 0) {
      throw new TypeError(`"assertionLifetime" must be a positive integer`);
    }
  }
  if (options.authScheme === 'private_key_jwt' && options.privateKey === undefined) {
    throw new TypeError(`"privateKey" is required when "authScheme" is "private_key_jwt"`);
  }
  if (options.connection !== undefined) validateConnection(options.connection);
}

function validateConnection(connection: ConnectionOptions): void {
  if (connection === null || typeof connection !== 'object')
    throw new TypeError(`"connection" must be an object`);
  for (const key of Object.keys(connection)) {
    if (!CONNECTION_OPTION_KEYS.has(key))
      throw new TypeError(`"connection.${key}" is not a known connection option`);
  }
  if (connection.timeout !== undefined && (!Number.isFinite(connection.timeout) || connection.timeout <= 0)) {
    throw new TypeError(`"connection.timeout" must be a positive number of milliseconds`);
  }
  if (
    connection.maxRedirects !== undefined &&
    (!Number.isInteger(connection.maxRedirects) || connection.maxRedirects < 0)
  ) {
    throw new TypeError(`"connection.maxRedirects" must be a non-negative integer`);
  }
  if (connection.maxResponseBytes !== undefined) {
    requireByteCount(connection.maxResponseBytes, 'connection.maxResponseBytes');
  }
  for (const field of ['fetch', 'onRequest', 'onResponse'] as const) {
    if (connection[field] !== undefined && typeof connection[field] !== 'function') {
      throw new TypeError(`"connection.${field}" must be a function`);
    }
  }
  if (
    connection.headers !== undefined &&
    (connection.headers === null || typeof connection.headers !== 'object')
  ) {
    throw new TypeError(`"connection.headers" must be an object`);
  }
  if (connection.tls !== undefined && (connection.tls === null || typeof connection.tls !== 'object')) {
    throw new TypeError(`"connection.tls" must be an object`);
  }
  if (connection.proxy !== undefined) {
    const uri = typeof connection.proxy === 'string' ? connection.proxy : connection.proxy?.uri;
    if (typeof uri !== 'string' || !URL.canParse(uri))
      throw new TypeError(`"connection.proxy" must be a URL`);
    if (typeof connection.proxy === 'object' && 'token' in connection.proxy) {
      throw new TypeError('"connection.proxy.token" is not supported: put the credentials in the proxy URL');
    }
  }
}

function lowerHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

function encodeBody(
  body: RequestOptions['body'],
  headers: Record<string, string>,
): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  const raw = typeof body === 'string' || body instanceof Uint8Array;
  if (!raw && !(body instanceof URLSearchParams) && isJsonContentType(headers['content-type'])) {
    return JSON.stringify(body);
  }
  // The gem (Faraday's url_encoded middleware) labels any body without a type as a form, a raw one too.
  headers['content-type'] ??= 'application/x-www-form-urlencoded';
  if (raw) return body;
  return body instanceof URLSearchParams ? body.toString() : encodeParams(body);
}

/**
 * An OAuth 2.0 client (the gem's `OAuth2::Client`): builds authorization URLs, requests tokens with the
 * grant strategies, and makes requests relative to `site`.
 *
 * @example
 * ```ts
 * const client = new Client('client-id', 'client-secret', { site: 'https://id.example.com/realm' });
 * const token = await client.clientCredentials.getToken({ resource: 'https://api.example.com' });
 * const response = await token.get('https://api.example.com/things');
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749
 */
export class Client {
  /** The client id. */
  readonly id: string;
  /** The resolved options (defaults applied). */
  readonly options: Readonly<ResolvedClientOptions>;
  /** Provider metadata, when the client was made by {@link Client.discover}. */
  metadata: Readonly<Record<string, unknown>> | undefined;
  readonly #secret: string | undefined;
  readonly #site: URL | undefined;
  readonly #connection: ConnectionOptions;
  readonly #transport: Transport;
  readonly #authenticator: Authenticator;
  readonly #logger: Logger;
  readonly #debugLog: DebugLog | undefined;
  #authCode: AuthCode | undefined;
  #implicit: Implicit | undefined;
  #password: Password | undefined;
  #clientCredentials: ClientCredentials | undefined;
  #assertion: Assertion | undefined;

  constructor(clientId: string, clientSecret: string | undefined, options: ClientOptions = {}) {
    requireString(clientId, 'clientId');
    if (clientSecret !== undefined && typeof clientSecret !== 'string') {
      throw new TypeError(`"clientSecret" must be a string or undefined`);
    }
    validateOptions(options);
    this.id = clientId;
    this.#secret = clientSecret;
    this.#site = options.site === undefined ? undefined : normalizeSite(options.site);
    this.#connection = { ...options.connection };
    const timeout = this.#connection.timeout ?? ClientDefaults.timeout;
    this.options = Object.freeze({
      authorizeUrl: options.authorizeUrl ?? ClientDefaults.authorizeUrl,
      tokenUrl: options.tokenUrl ?? ClientDefaults.tokenUrl,
      revokeUrl: options.revokeUrl ?? ClientDefaults.revokeUrl,
      redirectUri: options.redirectUri,
      authScheme: options.authScheme ?? ClientDefaults.authScheme,
      basicAuthEncoding: options.basicAuthEncoding ?? ClientDefaults.basicAuthEncoding,
      raiseErrors: options.raiseErrors ?? ClientDefaults.raiseErrors,
      debug: options.debug ?? OAUTH_DEBUG,
      timeout,
      maxRedirects: this.#connection.maxRedirects ?? ClientDefaults.maxRedirects,
      maxResponseBytes: this.#connection.maxResponseBytes ?? ClientDefaults.maxResponseBytes,
    });
    this.#transport = new Transport(this.#connection, timeout);
    this.#logger = options.logger ?? stdoutLogger;
    this.#debugLog = this.options.debug ? new DebugLog(this.#logger) : undefined;
    const privateKey = options.privateKey;
    this.#authenticator = new Authenticator({
      id: clientId,
      secret: clientSecret,
      scheme: this.options.authScheme,
      basicAuthEncoding: this.options.basicAuthEncoding,
      privateKey,
      privateKeyAlg:
        privateKey === undefined
          ? ClientDefaults.privateKeyAlg
          : algorithmFor(privateKey, options.privateKeyAlg, ClientDefaults.privateKeyAlg),
      keyId: options.keyId,
      assertionAudience: options.assertionAudience,
      assertionLifetime: options.assertionLifetime ?? ClientDefaults.assertionLifetime,
    });
  }

  /** The client secret (shown as the filtered label by `inspect` and `toJSON`). */
  get secret(): string | undefined {
    return this.#secret;
  }

  /** The provider's base URL (with its trailing `/`), or `undefined`. */
  get site(): string | undefined {
    return this.#site?.href;
  }

  /** The logger debug lines go to. */
  get logger(): Logger {
    return this.#logger;
  }

  /** The authorization code strategy. */
  get authCode(): AuthCode {
    this.#authCode ??= new AuthCode(this);
    return this.#authCode;
  }

  /** The implicit strategy (omitted from OAuth 2.1: avoid it). */
  get implicit(): Implicit {
    this.#implicit ??= new Implicit(this);
    return this.#implicit;
  }

  /** The resource owner password credentials strategy (omitted from OAuth 2.1: avoid it). */
  get password(): Password {
    this.#password ??= new Password(this);
    return this.#password;
  }

  /** The client credentials strategy. */
  get clientCredentials(): ClientCredentials {
    this.#clientCredentials ??= new ClientCredentials(this);
    return this.#clientCredentials;
  }

  /** The JWT bearer assertion strategy (RFC 7523). */
  get assertion(): Assertion {
    this.#assertion ??= new Assertion(this);
    return this.#assertion;
  }

  /** Resolves a URL against `site` (Faraday's rules) with `params` merged into its query, sorted. */
  buildUrl(url: string, params?: Params): string {
    return buildUrl(this.#site, url, params);
  }

  /**
   * The authorization endpoint URL with `params` in its query.
   *
   * @see https://www.rfc-editor.org/rfc/rfc6749#section-3.1
   */
  authorizeUrl(params?: Params): string {
    return this.buildUrl(this.options.authorizeUrl, params);
  }

  /** The token endpoint URL. */
  tokenUrl(params?: Params): string {
    return this.buildUrl(this.options.tokenUrl, params);
  }

  /** The revocation endpoint URL. */
  revokeUrl(params?: Params): string {
    return this.buildUrl(this.options.revokeUrl, params);
  }

  /** The `redirect_uri` params configured on the client, if any. */
  redirectionParams(): Params {
    return this.options.redirectUri === undefined ? {} : { redirect_uri: this.options.redirectUri };
  }

  /**
   * Makes a request relative to `site` (or to an absolute URL) and returns the {@link Response}. Follows
   * up to `connection.maxRedirects` redirects (301, 302, 303, 307, 308) as browsers do: 303, and 301/302
   * after a POST, become a GET without a body. A hop to another origin drops `Authorization` and any query
   * parameter holding a token or secret, and a 307/308 whose body carries one is not followed there
   * ({@link OAuth2Error}). A status >= 400 throws {@link OAuth2Error} unless `raiseErrors` is false, in
   * which case the response carries the error in `error`.
   *
   * @example
   * ```ts
   * const response = await client.request('POST', 'oauth/token', {
   *   body: { grant_type: 'client_credentials' },
   *   headers: { authorization: 'Basic ...' },
   * });
   * ```
   */
  request(verb: string, url: string, opts: RequestOptions = {}): Promise<Response> {
    return this.#request(verb, url, opts, true);
  }

  async #request(verb: string, url: string, opts: RequestOptions, follow: boolean): Promise<Response> {
    requireString(verb, 'verb');
    if (opts.maxResponseBytes !== undefined) requireByteCount(opts.maxResponseBytes, 'maxResponseBytes');
    const limit = opts.maxResponseBytes ?? this.options.maxResponseBytes;
    let method = verb.toUpperCase();
    let target = this.buildUrl(url, opts.params);
    const headers = {
      ...DEFAULT_HEADERS,
      ...lowerHeaders(this.#connection.headers),
      ...lowerHeaders(opts.headers),
    };
    let body = encodeBody(opts.body, headers);
    const raiseErrors = opts.raiseErrors ?? this.options.raiseErrors;
    const responseOptions = {
      ...(opts.parse === undefined ? {} : { parse: opts.parse }),
      ...(opts.snaky === undefined ? {} : { snaky: opts.snaky }),
      ...(opts.snakyHashClass === undefined ? {} : { snakyHashClass: opts.snakyHashClass }),
    };
    const secrets = [this.#secret, ...(opts.redact ?? [])];
    for (let redirects = 0; ; redirects++) {
      let request: HttpRequest = { method, url: target, headers: { ...headers }, body };
      if (this.#connection.onRequest) {
        const replaced = await this.#connection.onRequest(request);
        if (replaced !== null && typeof replaced === 'object' && 'url' in replaced)
          request = replaced as HttpRequest;
      }
      this.#debugLog?.request(request, secrets);
      let result: Awaited<ReturnType<Transport['send']>>;
      try {
        result = await this.#transport.send(request, limit, secrets);
      } catch (error) {
        this.#debugLog?.failure(request, error as Error, secrets);
        throw error;
      }
      const response = new Response(result, responseOptions);
      rememberSecrets(response, secrets);
      this.#debugLog?.response(response, secrets);
      if (this.#connection.onResponse) await this.#connection.onResponse(response);
      const { status } = response;
      if (REDIRECT_STATUSES.has(status)) {
        const outcome = followRedirect({
          response,
          requestUrl: request.url,
          method,
          body,
          headers,
          secrets,
          follow,
          redirects,
          maxRedirects: this.options.maxRedirects,
          raiseErrors,
        });
        if ('done' in outcome) return outcome.done;
        ({ method, body, url: target } = outcome.next);
        continue;
      }
      if (status >= 200 && status < 400) return response;
      if (status >= 400 && status < 600) {
        const error = new OAuth2Error(response);
        if (raiseErrors) throw error;
        response.error = error;
        return response;
      }
      throw new OAuth2Error(response, `unhandled status code value of ${status}`);
    }
  }

  /**
   * Requests a token at the token endpoint with any grant's params (form-encoded, or JSON when the
   * `headers` say `Content-Type: application/json`), authenticating the client per `authScheme`, and
   * builds an {@link AccessToken} from the response merged with `accessTokenOptions`. A response the token
   * cannot be built from rejects with an {@link OAuth2Error} carrying it: no object (also with
   * `raiseErrors: false`), a field of the wrong type, or no token (`TokenError`; with
   * `raiseErrors: false` the gem's token with an empty string and a warning instead).
   *
   * @example
   * ```ts
   * const token = await client.getToken({ grant_type: 'client_credentials', scope: 'read' });
   * ```
   */
  async getToken(params: TokenParams, accessTokenOptions: AccessTokenOptions = {}): Promise<AccessToken> {
    const response = await this.tokenRequest(this.tokenUrl(), params);
    if (response.error) throw response.error;
    return tokenFromResponse(this, response, accessTokenOptions);
  }

  /** Sends an authenticated form POST to a token-endpoint-like URL (token, revocation). */
  async tokenRequest(
    url: string,
    params: TokenParams,
    extraSecrets: ReadonlyArray<string | undefined> = [],
  ): Promise<Response> {
    if (params === null || typeof params !== 'object') throw new TypeError(`"params" must be an object`);
    const { headers, parse, snaky, snakyHashClass, ...wire } = params;
    const auth = await this.#authenticator.apply(wire, this.tokenUrl());
    const callerHeaders = lowerHeaders(headers);
    const mergedHeaders = { ...auth.headers, ...callerHeaders };
    const json = isJsonContentType(mergedHeaders['content-type']);
    const body = json ? JSON.stringify(auth.params) : encodeParams(auth.params);
    if (!json) mergedHeaders['content-type'] ??= 'application/x-www-form-urlencoded';
    const filtered = new Set(config.filteredDebugKeys.map((k) => k.toLowerCase()));
    const redact = [...extraSecrets];
    for (const [key, value] of Object.entries(auth.params)) {
      if (typeof value === 'string' && filtered.has(key.toLowerCase())) redact.push(value);
    }
    return this.#request(
      'POST',
      url,
      {
        body,
        headers: mergedHeaders,
        redact,
        ...(parse === undefined ? {} : { parse }),
        ...(snaky === undefined ? {} : { snaky }),
        ...(snakyHashClass === undefined ? {} : { snakyHashClass }),
      },
      false,
    );
  }

  /**
   * Revokes a token (RFC 7009): POSTs `token` and `token_type_hint` in the form body to the revocation
   * endpoint, with client authentication.
   *
   * @see https://www.rfc-editor.org/rfc/rfc7009#section-2.1
   */
  async revokeToken(token: string, tokenTypeHint?: string, params: TokenParams = {}): Promise<Response> {
    requireString(token, 'token');
    if (tokenTypeHint !== undefined) requireString(tokenTypeHint, 'tokenTypeHint');
    return this.tokenRequest(this.revokeUrl(), {
      ...params,
      token,
      ...(tokenTypeHint === undefined ? {} : { token_type_hint: tokenTypeHint }),
    });
  }

  /**
   * Builds a client from OpenID Connect discovery (`<issuer>/.well-known/openid-configuration`), falling
   * back to RFC 8414 (`<origin>/.well-known/oauth-authorization-server<issuer path>`). The document's
   * `issuer` must equal `issuer`. Endpoints come from the document (explicit options win); the document
   * is kept in `client.metadata`.
   */
  static async discover(
    issuer: string,
    clientId: string,
    clientSecret: string | undefined,
    options: ClientOptions = {},
  ): Promise<Client> {
    requireString(issuer, 'issuer');
    validateOptions(options);
    const probe = new Client(clientId, clientSecret, {
      ...(options.connection ? { connection: options.connection } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.debug === undefined ? {} : { debug: options.debug }),
    });
    const metadata = await discoverMetadata(issuer, (url) =>
      probe.request('GET', url, {
        raiseErrors: false,
        snaky: false,
        headers: { accept: 'application/json' },
      }),
    );
    const endpoint = (key: string): string | undefined =>
      typeof metadata[key] === 'string' ? (metadata[key] as string) : undefined;
    const authorizeUrl = options.authorizeUrl ?? endpoint('authorization_endpoint');
    const tokenUrl = options.tokenUrl ?? endpoint('token_endpoint');
    const revokeUrl = options.revokeUrl ?? endpoint('revocation_endpoint');
    const client = new Client(clientId, clientSecret, {
      ...options,
      site: options.site ?? issuer,
      ...(authorizeUrl ? { authorizeUrl } : {}),
      ...(tokenUrl ? { tokenUrl } : {}),
      ...(revokeUrl ? { revokeUrl } : {}),
    });
    client.metadata = Object.freeze({ ...metadata });
    return client;
  }

  /** A redacted, serializable view: never the secret or the private key. */
  toJSON(): Record<string, unknown> {
    return {
      id: this.id,
      secret: this.#secret === undefined ? undefined : config.filteredLabel,
      site: this.site,
      options: { ...this.options },
    };
  }

  [Symbol.for('nodejs.util.inspect.custom')](
    _depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `Client ${inspect(this.toJSON(), options)}`;
  }
}
