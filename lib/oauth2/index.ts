/**
 * forgebridge OAuth 2.0 client library: a TypeScript port of the Ruby oauth2 gem's interface, with
 * PKCE, RFC 7009 revocation, OpenID Connect / RFC 8414 discovery, `private_key_jwt` and opt-in
 * auto-refresh. HTTP goes through Node's fetch or undici; JWTs through jose. No AWS imports.
 */

export type { AccessTokenOptions, OnRefresh, Refresher } from './access-token.js';
export { AccessToken } from './access-token.js';
export { basicAuthHeader } from './auth/authenticator.js';
export type { ResolvedClientOptions, TokenParams } from './client.js';
export { Client } from './client.js';
export type { OAuth2Config, OAuth2ConfigWithAliases } from './configuration.js';
export { config, configure, resetConfig } from './configuration.js';
export type { AuthScheme, TokenModeName } from './constants.js';
export {
  AuthSchemes,
  CLIENT_ASSERTION_TYPE,
  ClientDefaults,
  DEFAULT_FILTERED_DEBUG_KEYS,
  GrantTypes,
  JSON_CONTENT_TYPES,
  TOKEN_KEYS,
  TokenModes,
} from './constants.js';
export { OAUTH_DEBUG } from './debug-log.js';
export { discoveryUrls } from './discovery.js';
export {
  ConnectionError,
  DiscoveryError,
  OAuth2BaseError,
  OAuth2Error,
  ResponseTooLargeError,
  SigningError,
  TimeoutError,
  TokenError,
} from './errors.js';
export { ExtensionRegistry } from './extension-registry.js';
export { codeChallenge, generateCodeVerifier } from './pkce.js';
export type { ResponseInit, ResponseOptions } from './response.js';
export { Response } from './response.js';
export type { HashExtension, SnakyHashClass, ValueExtension } from './snaky-hash.js';
export { SnakyHash, toSnakeCase } from './snaky-hash.js';
export type { Assertion, AssertionClaims, AssertionEncoding } from './strategy/assertion.js';
export type { AuthCode } from './strategy/auth-code.js';
export type { ClientCredentials } from './strategy/client-credentials.js';
export type { Implicit } from './strategy/implicit.js';
export type { Password } from './strategy/password.js';
export type {
  ClientOptions,
  ConnectionOptions,
  DispatcherLike,
  FetchLike,
  HttpRequest,
  Logger,
  Params,
  ParsedBody,
  ParseOption,
  RequestOptions,
  SigningKey,
  TlsOptions,
  TokenMode,
} from './types.js';
