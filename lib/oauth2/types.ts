/** Shared types of the OAuth 2.0 client library. */
import type { JsonWebKey, KeyObject, webcrypto } from 'node:crypto';
import type { AuthScheme, TokenModeName } from './constants.js';
import type { Response } from './response.js';
import type { SnakyHashClass } from './snaky-hash.js';
import type { Params } from './url.js';

export type { Params };

/** Where debug lines go: anything with an `info(message)` method (console, pino, powertools Logger). */
export interface Logger {
  info(message: string): void;
}

/**
 * The part of an undici `Dispatcher` (`Agent`, `ProxyAgent`, `MockAgent`, ...) the library calls: its promise
 * form of `request`. Written out here so that the library, and its types, need no undici installed.
 */
export interface DispatcherLike {
  request(options: {
    origin: string;
    path: string;
    method: string;
    headers: Record<string, string>;
    body: string | Uint8Array | null;
    signal: AbortSignal;
  }): Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    body: AsyncIterable<Uint8Array> & { destroy(): unknown };
  }>;
}

/** What the library passes to a custom `fetch` (with the `dispatcher` when one is configured too). */
export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  redirect: 'manual';
  signal: AbortSignal;
  dispatcher?: DispatcherLike;
}

/** The part of a fetch `Response` the library reads. */
export interface FetchResponseLike {
  status: number;
  headers: Headers;
  /** The body stream: read chunk by chunk and cancelled past `maxResponseBytes` when there is one. */
  body?: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

/** A `fetch` implementation (Node's global fetch, undici's fetch, or a wrapper around one). */
export type FetchLike = (input: string, init: FetchInit) => Promise<FetchResponseLike>;

/** One HTTP request as the library is about to send it; an `onRequest` hook may change it. */
export interface HttpRequest {
  method: string;
  url: string;
  /** Lowercase header names. */
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
}

/** The TLS client certificate (RFC 8705 `tls_client_auth`) and trust settings of the connection. */
export interface TlsOptions {
  /** PEM client certificate (chain). */
  cert?: string | Buffer;
  /** PEM private key of the client certificate. */
  key?: string | Buffer;
  /** Passphrase of `key`. */
  passphrase?: string;
  /** PEM CA certificate(s) to trust for the server. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Default `true`. */
  rejectUnauthorized?: boolean;
  /** TLS server name (SNI). */
  servername?: string;
}

/**
 * Connection options: they replace the gem's Faraday connection builder.
 *
 * @example
 * ```ts
 * new Client('id', undefined, {
 *   site,
 *   authScheme: 'tls_client_auth',
 *   connection: { timeout: 5_000, tls: { cert, key, ca }, headers: { 'user-agent': 'forgebridge' } },
 * });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc8705#section-2
 */
export interface ConnectionOptions {
  /** Request timeout in milliseconds, for each hop (AbortSignal.timeout). Default `10_000`. */
  timeout?: number;
  /** Headers sent on every request (the caller's headers win). Default none. */
  headers?: Record<string, string>;
  /** A custom fetch. Default: Node's `http`/`https` on the client's own keep-alive agent. */
  fetch?: FetchLike;
  /** An undici dispatcher (Agent, ProxyAgent, MockAgent, ...). Default none. */
  dispatcher?: DispatcherLike;
  /** An HTTP(S) proxy URL, credentials in it (`http://user:pass@proxy:3128`), or `{ uri }`. Default none. */
  proxy?: string | { uri: string };
  /** TLS client certificate and trust settings (Node `https` TLS options). Default none. */
  tls?: TlsOptions;
  /**
   * Redirects followed per API request; a hop to another origin drops the token (header, query or body).
   * Token, revocation and introspection requests never follow one. Default `5`.
   */
  maxRedirects?: number;
  /**
   * Largest response body read, in bytes; past it reading stops, the connection is closed and
   * `ResponseTooLargeError` is thrown. Default `1_048_576` (1 MiB).
   */
  maxResponseBytes?: number;
  /** Called (and awaited) before each hop is sent; it may change the request in place or return a new one. */
  onRequest?: (request: HttpRequest) => unknown;
  /** Called after each hop's response arrived, before status handling. */
  onResponse?: (response: Response) => void | Promise<void>;
}

/** A key to sign a JWT with: a PEM string, a JWK, a CryptoKey, a KeyObject or (HS*) secret bytes. */
export type SigningKey = string | JsonWebKey | webcrypto.CryptoKey | KeyObject | Uint8Array;

/** Options of {@link Client}; every default is in `ClientDefaults`. */
export interface ClientOptions {
  /** Base URL of the provider; it may contain a nested path. Default none (absolute URLs only). */
  site?: string;
  /** Authorization endpoint. Default `'oauth/authorize'`. */
  authorizeUrl?: string;
  /** Token endpoint. Default `'oauth/token'`. */
  tokenUrl?: string;
  /** Revocation endpoint (RFC 7009). Default `'oauth/revoke'`. */
  revokeUrl?: string;
  /** A `redirect_uri` added to authorize URLs and code exchanges. Default none. */
  redirectUri?: string;
  /** Client authentication at the token endpoint. Default `'basic_auth'`. */
  authScheme?: AuthScheme;
  /**
   * `basic_auth` credential encoding: `'form'` form-encodes id and secret before base64 (RFC 6749
   * §2.3.1); `'none'` is the gem's unencoded form for providers that need it. Default `'form'`.
   */
  basicAuthEncoding?: 'form' | 'none';
  /** Whether a response with status >= 400 throws {@link OAuth2Error}. Default `true`. */
  raiseErrors?: boolean;
  /** Destination of debug lines. Default: standard output. */
  logger?: Logger;
  /** Debug logging on or off. Default: `OAUTH_DEBUG=true` in the environment (read once). */
  debug?: boolean;
  /** HTTP connection options. Default `{}`. */
  connection?: ConnectionOptions;
  /** `private_key_jwt` signing key. Required for that scheme. */
  privateKey?: SigningKey;
  /** `private_key_jwt` algorithm. Default `'RS256'` (or the JWK's `alg`). */
  privateKeyAlg?: string;
  /** `kid` header of the `private_key_jwt` assertion. Default: the JWK's `kid`, else none. */
  keyId?: string;
  /** `aud` of the `private_key_jwt` assertion. Default: the token endpoint URL. */
  assertionAudience?: string | string[];
  /** Lifetime of the `private_key_jwt` assertion in seconds. Default `300`. */
  assertionLifetime?: number;
}

/** How the token travels: a mode name, a function of the lowercase verb, or a per-verb object. */
export type TokenMode =
  | TokenModeName
  | ((verb: string) => TokenModeName)
  | Partial<Record<string, TokenModeName>>;

/** How `Response#parsed` parses: `'automatic'` by content type, a registered parser name, or a function. */
export type ParseOption =
  | 'automatic'
  | 'json'
  | 'query'
  | 'text'
  | (string & {})
  | ((body: string) => unknown);

/** Options of one request through `Client#request` or an `AccessToken`. */
export interface RequestOptions {
  /** Query parameters, merged into the URL (sorted). */
  params?: Params;
  /**
   * The body: a string or bytes as is; an object is form-encoded, or JSON when the headers say
   * `Content-Type: application/json`.
   */
  body?: string | Uint8Array | URLSearchParams | Params;
  /** Request headers, merged last. */
  headers?: Record<string, string>;
  /** Overrides the client's `raiseErrors` for this request. */
  raiseErrors?: boolean;
  /** How `parsed` parses. Default `'automatic'`. */
  parse?: ParseOption;
  /** Snake-case parsed objects. Default `true`. */
  snaky?: boolean;
  /** The hash class of parsed objects. Default {@link SnakyHash}. */
  snakyHashClass?: SnakyHashClass;
  /** Extra values (tokens, secrets) to redact from debug output and error messages. */
  redact?: ReadonlyArray<string | undefined>;
  /** Overrides `connection.maxResponseBytes` for this request (an API call with a large answer). */
  maxResponseBytes?: number;
}

/** The parsed body of a response. */
export type ParsedBody = Record<string, unknown> | unknown[] | string;
