/** The checks of a {@link Client}'s options: every unknown key, wrong type or unsafe URL is a `TypeError` naming it. */
import { AuthSchemes } from './constants.js';
import { HTTP_PROTOCOLS } from './redirect.js';
import type { ClientOptions, ConnectionOptions } from './types.js';

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

export function requireString(value: unknown, field: string): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`"${field}" must be a non-empty string`);
}

/** Throws unless `value` is an http: or https: URL (checked when it parses, or always with `absolute`). */
function requireHttpUrl(value: string, field: string, absolute: boolean): void {
  if (!absolute && !URL.canParse(value)) return;
  if (!HTTP_PROTOCOLS.has(URL.canParse(value) ? new URL(value).protocol : '')) {
    throw new TypeError(`"${field}" must be an http or https URL`);
  }
}

export function requireByteCount(value: unknown, field: string): void {
  if (!Number.isSafeInteger(value) || (value as number) <= 0) {
    throw new TypeError(`"${field}" must be a positive integer number of bytes`);
  }
}

export function validateOptions(options: ClientOptions): void {
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
