/**
 * URL building with Faraday's rules: the site gets a trailing `/`, a path without a leading `/` resolves
 * under the site's path, a leading `/` replaces it, an absolute URL wins; query parameters are sorted and
 * a space is written as `%20`.
 */

/** Query or form parameters: a value may be repeated by giving an array. */
export type Params = Record<string, unknown>;

const EXTRA_RESERVED = /[!'()*~]/g;

function hex(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * Percent-encodes everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`); a space is `%20`.
 */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(EXTRA_RESERVED, (c) => (c === '~' ? c : hex(c)));
}

/**
 * `application/x-www-form-urlencoded` encoding of one value as RFC 6749 Appendix B asks for client
 * credentials: a space becomes `+`, every other reserved character is percent-encoded.
 */
export function formEncode(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()~]/g, hex)
    .replace(/%20/g, '+');
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

function pairsOf(params: Params): Array<[string, string | null]> {
  const pairs: Array<[string, string | null]> = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    // `null` is the gem's `nil`: Faraday writes the bare key (`state`), as `parseQuery` reads it back.
    if (value === null) pairs.push([key, null]);
    else if (Array.isArray(value)) {
      for (const item of value) if (item !== undefined && item !== null) pairs.push([key, stringify(item)]);
    } else {
      pairs.push([key, stringify(value)]);
    }
  }
  return pairs;
}

/**
 * Encodes parameters as a query string or form body: keys sorted, arrays as repeated keys, `undefined`
 * (and `null` inside an array) left out, a `null` value as its bare key (`state`), as Faraday writes `nil`.
 */
export function encodeParams(params: Params): string {
  return pairsOf(params)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([k, v]) => (v === null ? percentEncode(k) : `${percentEncode(k)}=${percentEncode(v)}`))
    .join('&');
}

/** Defines an own, enumerable property (safe for keys such as `__proto__`). */
export function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function decode(part: string): string {
  const spaced = part.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * Parses a query string or form body as Rack does for the gem: string keys, no snake-casing, a repeated
 * key becomes an array, a key without `=` is `null` (`flag&empty=` -> `{ flag: null, empty: '' }`).
 */
export function parseQuery(query: string): Record<string, string | null | Array<string | null>> {
  const result: Record<string, string | null | Array<string | null>> = {};
  const text = query.startsWith('?') || query.startsWith('#') ? query.slice(1) : query;
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decode(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? null : decode(part.slice(eq + 1));
    const existing = Object.hasOwn(result, key) ? result[key] : undefined;
    if (existing === undefined) setOwn(result, key, value);
    else if (Array.isArray(existing)) existing.push(value);
    else setOwn(result, key, [existing, value]);
  }
  return result;
}

/** Normalizes a `site`: it must be an absolute URL, and its path gets a trailing `/`. */
export function normalizeSite(site: string): URL {
  let url: URL;
  try {
    url = new URL(site);
  } catch (cause) {
    throw new TypeError(`"site" must be an absolute URL`, { cause });
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}

/** Resolves `path` against `site` (Faraday's rules) and merges `params` into the query, sorted. */
export function buildUrl(site: URL | undefined, path: string, params?: Params): string {
  let url: URL;
  try {
    url = site ? new URL(path, site) : new URL(path);
  } catch (cause) {
    throw new TypeError(`"url" ${site ? 'could not be resolved' : 'must be absolute when no site is set'}`, {
      cause,
    });
  }
  const hasParams = params !== undefined && Object.keys(params).length > 0;
  const siteQuery = site && site.search.length > 1 && url.origin === site.origin ? site.search : '';
  if (!hasParams && url.search === '' && siteQuery === '') return url.href;
  const merged: Params = { ...parseQuery(siteQuery), ...parseQuery(url.search), ...params };
  const query = encodeParams(merged);
  url.search = '';
  const base = url.href;
  const hashAt = base.indexOf('#');
  if (query === '') return base;
  return hashAt === -1 ? `${base}?${query}` : `${base.slice(0, hashAt)}?${query}${base.slice(hashAt)}`;
}
