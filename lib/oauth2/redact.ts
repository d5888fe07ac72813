/**
 * Redaction of secrets and tokens for debug output, error messages and `inspect`. Values of
 * `config.filteredDebugKeys` (in form bodies, JSON bodies and query strings) and of sensitive headers
 * become `config.filteredLabel`.
 */
import { config } from './configuration.js';
import { FILTERED_HEADERS } from './constants.js';
import { toSnakeCase } from './snaky-hash.js';
import { formEncode, percentEncode, setOwn } from './url.js';

function filteredKeys(): Set<string> {
  return new Set(config.filteredDebugKeys.map((k) => k.toLowerCase()));
}

/**
 * Whether a key is filtered under any spelling the library reads it in: `access_token`, `accessToken`,
 * `AccessToken`, `access-token` and `Access Token` all name the filtered `access_token`.
 */
function isFiltered(key: string, keys: Set<string>): boolean {
  return keys.has(key.toLowerCase()) || keys.has(toSnakeCase(key));
}

/** A deep copy of a JSON-like value with every filtered key's value replaced by the label. */
export function redactValue(value: unknown, keys: Set<string> = filteredKeys()): unknown {
  if (Array.isArray(value)) return value.map((item) => redactValue(item, keys));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const hidden = isFiltered(k, keys) && v !== null && v !== undefined;
      setOwn(out, k, hidden ? config.filteredLabel : redactValue(v, keys));
    }
    return out;
  }
  return value;
}

/** Redacts the values of filtered keys in a query string or form body, keeping its shape. */
export function redactParams(query: string, keys: Set<string> = filteredKeys()): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq === -1) return part;
      let key = part.slice(0, eq);
      try {
        key = decodeURIComponent(key.replace(/\+/g, ' '));
      } catch {
        // keep the raw key
      }
      return isFiltered(key, keys) ? `${part.slice(0, eq)}=${config.filteredLabel}` : part;
    })
    .join('&');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Last-resort redaction of free text: `key: value`, `key=value` and `"key":"value"` forms of filtered keys.
 */
export function redactText(text: string, keys: Set<string> = filteredKeys()): string {
  if (keys.size === 0) return text;
  // `access_token` also matches `accessToken`, `access-token` and `access token` (case-insensitive).
  const names = [...keys].map((key) => escapeRegExp(key).replace(/_/g, '[_ -]?')).join('|');
  const pattern = new RegExp(
    `((?:^|[^A-Za-z0-9_])(?:${names})["']?\\s*[:=]\\s*["']?)([^"'&\\s,;}\\][][^"'&\\s,;}\\]]*)`,
    'gi',
  );
  return text.replace(pattern, (_m, prefix: string) => `${prefix}${config.filteredLabel}`);
}

/**
 * Redacts a body for display: JSON (by key, recursively), form bodies (by key), anything else as free text.
 */
export function redactBody(body: string | undefined, contentType?: string): string {
  if (body === undefined || body === '') return '';
  const keys = filteredKeys();
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.stringify(redactValue(JSON.parse(body), keys));
    } catch {
      // not JSON after all: fall through
    }
  }
  if (contentType === 'application/x-www-form-urlencoded' || /^[^\s=&]+=[^\s]*$/.test(body)) {
    return redactParams(body, keys);
  }
  return redactText(body, keys);
}

/** The most characters (code points) of a body an error message quotes. */
export const EXCERPT_CHARS = 200;
/** Bodies longer than this are redacted as free text over their start only: a message never needs more. */
const EXCERPT_WINDOW = 65_536;

/**
 * A short, redacted excerpt of a body for an error message: redacted (by key, and every known secret) and
 * then cut to {@link EXCERPT_CHARS} code points, with `…` when cut. Redacting before cutting keeps a
 * cut from leaving part of a secret or a key's value behind.
 */
export function bodyExcerpt(
  body: string | undefined,
  contentType: string | undefined,
  secrets: ReadonlyArray<string | undefined> = [],
): string {
  if (body === undefined || body === '') return '';
  const redacted =
    body.length > EXCERPT_WINDOW ? redactText(body.slice(0, EXCERPT_WINDOW)) : redactBody(body, contentType);
  const head = [...redactSecrets(redacted, secrets).slice(0, EXCERPT_CHARS * 2 + 1)];
  return head.length > EXCERPT_CHARS ? `${head.slice(0, EXCERPT_CHARS).join('')}…` : head.join('');
}

/** Redacts a URL's userinfo password and the query values of filtered keys. */
export function redactUrl(url: string): string {
  let text = url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') {
      parsed.password = 'FILTERED';
      text = parsed.href;
    }
  } catch {
    // not a URL: redact the query part only
  }
  const q = text.indexOf('?');
  if (q === -1) return text;
  const hash = text.indexOf('#', q);
  const query = hash === -1 ? text.slice(q + 1) : text.slice(q + 1, hash);
  return `${text.slice(0, q + 1)}${redactParams(query)}${hash === -1 ? '' : text.slice(hash)}`;
}

/** Redacts sensitive header values (`Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`). */
export function redactHeaders(
  headers: Iterable<[string, string]> | Record<string, string>,
): Record<string, string> {
  const entries =
    Symbol.iterator in headers ? [...(headers as Iterable<[string, string]>)] : Object.entries(headers);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) out[k] = FILTERED_HEADERS.has(k.toLowerCase()) ? config.filteredLabel : v;
  return out;
}

/**
 * Replaces every occurrence of known secret values (client secret, tokens) in a text: the last line of
 * defence for debug lines.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 4) continue;
    // Every way the library or a caller writes a value: raw, in a URL or form, inside a JSON string
    // (a debug line of JSON headers or body), and inside a JSON string in JSON (a serialized message).
    const json = JSON.stringify(secret).slice(1, -1);
    for (const form of [
      secret,
      encodeURIComponent(secret),
      percentEncode(secret),
      formEncode(secret),
      json,
      JSON.stringify(json).slice(1, -1),
    ]) {
      forms.add(form);
    }
  }
  let out = text;
  // Longest first, so that a secret containing another one is replaced whole.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    if (out.includes(form)) out = out.split(form).join(config.filteredLabel);
  }
  return out;
}

const knownSecrets = new WeakMap<object, ReadonlyArray<string | undefined>>();

/** Records the secrets of the request a response answers, for the messages of errors built from it. */
export function rememberSecrets(response: object, secrets: ReadonlyArray<string | undefined>): void {
  knownSecrets.set(response, secrets);
}

/** The secrets of the request a response answers (client secret, tokens, filtered params), or none. */
export function secretsOf(response: object): ReadonlyArray<string | undefined> {
  return knownSecrets.get(response) ?? [];
}
