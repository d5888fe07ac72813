import type { AccessToken, AccessTokenOptions } from './access-token.js';
import { Authenticator } from './auth/authenticator.js';
import { requireString, validateOptions } from './client-options.js';
import { config } from './configuration.js';
import { type AuthScheme, ClientDefaults } from './constants.js';
import { DebugLog, OAUTH_DEBUG, stdoutLogger } from './debug-log.js';
import { discoverMetadata } from './discovery.js';
import { type HttpContext, sendRequest } from './http-request.js';
import { algorithmFor } from './jwt.js';
import type { Response } from './response.js';
import type { SnakyHashClass } from './snaky-hash.js';
import { Assertion } from './strategy/assertion.js';
import { AuthCode } from './strategy/auth-code.js';
import { ClientCredentials } from './strategy/client-credentials.js';
import { Implicit } from './strategy/implicit.js';
import { Password } from './strategy/password.js';
import { tokenFromResponse, tokenRequestOptions } from './token-request.js';
import { Transport } from './transport.js';
import type { ClientOptions, Logger, ParseOption, RequestOptions } from './types.js';
import { buildUrl, normalizeSite, type Params } from './url.js';

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
  readonly #http: HttpContext;
  readonly #authenticator: Authenticator;
  readonly #logger: Logger;
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
    const connection = { ...options.connection };
    const timeout = connection.timeout ?? ClientDefaults.timeout;
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
      maxRedirects: connection.maxRedirects ?? ClientDefaults.maxRedirects,
      maxResponseBytes: connection.maxResponseBytes ?? ClientDefaults.maxResponseBytes,
    });
    const transport = new Transport(connection, timeout);
    this.#logger = options.logger ?? stdoutLogger;
    this.#http = {
      connection,
      transport,
      debugLog: this.options.debug ? new DebugLog(this.#logger) : undefined,
      secret: clientSecret,
      maxResponseBytes: this.options.maxResponseBytes,
      maxRedirects: this.options.maxRedirects,
      raiseErrors: this.options.raiseErrors,
      buildUrl: (url, params) => this.buildUrl(url, params),
    };
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
    return sendRequest(this.#http, verb, url, opts, true);
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
    const opts = await tokenRequestOptions(this.#authenticator, () => this.tokenUrl(), params, extraSecrets);
    return sendRequest(this.#http, 'POST', url, opts, false);
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
