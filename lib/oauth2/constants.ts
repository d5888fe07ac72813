/** Constants of the OAuth 2.0 client library: defaults, accepted option values and wire names. */

/** Client authentication schemes at the token endpoint. */
export const AuthSchemes = {
  BasicAuth: 'basic_auth',
  RequestBody: 'request_body',
  TlsClientAuth: 'tls_client_auth',
  PrivateKeyJwt: 'private_key_jwt',
} as const;

/** One of the {@link AuthSchemes} values. */
export type AuthScheme = (typeof AuthSchemes)[keyof typeof AuthSchemes];

/** How an access token travels on a request. */
export const TokenModes = {
  Header: 'header',
  Query: 'query',
  Body: 'body',
} as const;

/** One of the {@link TokenModes} values. */
export type TokenModeName = (typeof TokenModes)[keyof typeof TokenModes];

/** Defaults of {@link Client} options, in one place (the gem's defaults). */
export const ClientDefaults = {
  authorizeUrl: 'oauth/authorize',
  tokenUrl: 'oauth/token',
  revokeUrl: 'oauth/revoke',
  authScheme: 'basic_auth',
  raiseErrors: true,
  basicAuthEncoding: 'form',
  /** Request timeout in milliseconds. */
  timeout: 10_000,
  maxRedirects: 5,
  /** Largest response body read, in bytes (1 MiB). */
  maxResponseBytes: 1_048_576,
  privateKeyAlg: 'RS256',
  /** Lifetime of a generated `client_assertion`, in seconds. */
  assertionLifetime: 300,
} as const;

/** Headers of every request, under the connection's and the caller's; `accept` is the gem's (Net::HTTP's). */
export const DEFAULT_HEADERS: Readonly<Record<string, string>> = {
  accept: '*/*',
  'user-agent': 'forgebridge-oauth2',
};

/** Token-like keys, in the order the gem picks the access token from a token response. */
export const TOKEN_KEYS = ['access_token', 'id_token', 'token', 'accessToken', 'idToken'] as const;

/** Content types (type only, parameters dropped) whose body `Response#parsed` parses as JSON. */
export const JSON_CONTENT_TYPES: readonly string[] = [
  'application/json',
  'text/javascript',
  'application/hal+json',
  'application/vnd.api+json',
  'application/vnd.collection+json',
  'application/problem+json',
];

/** Content types whose body `Response#parsed` parses as a form (query string). */
export const FORM_CONTENT_TYPES: readonly string[] = ['application/x-www-form-urlencoded'];

/** The gem's default filtered debug keys, plus `client_assertion`, `code` and `password`. */
export const DEFAULT_FILTERED_DEBUG_KEYS: readonly string[] = [
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'assertion',
  'code_verifier',
  'token',
  'client_assertion',
  'code',
  'password',
];

/** Headers whose values are always replaced by the filtered label in debug output. */
export const FILTERED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
]);

/** Grant type URNs and names sent as `grant_type`. */
export const GrantTypes = {
  AuthorizationCode: 'authorization_code',
  Password: 'password',
  ClientCredentials: 'client_credentials',
  RefreshToken: 'refresh_token',
  JwtBearer: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
} as const;

/** `client_assertion_type` of `private_key_jwt`. */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
