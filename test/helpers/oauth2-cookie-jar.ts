// A small cookie jar for driving the authorization server's login and consent pages with fetch: keeps the
// cookies a server sets (RFC 6265 §5.3, for one host), honours Path, Max-Age and Expires, and sends back the
// ones whose path matches.

interface StoredCookie {
  name: string;
  value: string;
  path: string;
  expiresAt: number;
}

function defaultPath(url: URL): string {
  const slash = url.pathname.lastIndexOf('/');
  return slash <= 0 ? '/' : url.pathname.slice(0, slash);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/**
 * Cookie jar for one origin.
 *
 * @example
 * const jar = new CookieJar();
 * const response = await fetch(url, { headers: jar.headersFor(url), redirect: 'manual' });
 * jar.store(url, response);
 * @see https://www.rfc-editor.org/rfc/rfc6265#section-5.3
 */
export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();

  /** Reads every Set-Cookie header of a response received from `url`. */
  store(url: string | URL, response: Response): void {
    const origin = new URL(url);
    for (const header of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = header.split(';');
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const cookie: StoredCookie = {
        name: pair.slice(0, equals).trim(),
        value: pair.slice(equals + 1).trim(),
        path: defaultPath(origin),
        expiresAt: Number.POSITIVE_INFINITY,
      };
      for (const attribute of attributes) {
        const [rawKey = '', ...rest] = attribute.split('=');
        const key = rawKey.trim().toLowerCase();
        const value = rest.join('=').trim();
        if (key === 'path' && value.startsWith('/')) cookie.path = value;
        if (key === 'max-age') cookie.expiresAt = Date.now() + Number(value) * 1000;
        if (key === 'expires' && cookie.expiresAt === Number.POSITIVE_INFINITY) {
          cookie.expiresAt = Date.parse(value);
        }
      }
      const key = `${cookie.name};${cookie.path}`;
      if (cookie.expiresAt <= Date.now()) this.#cookies.delete(key);
      else this.#cookies.set(key, cookie);
    }
  }

  /** The Cookie header value for a request to `url` (empty string when none apply). */
  cookieHeader(url: string | URL): string {
    const { pathname } = new URL(url);
    const now = Date.now();
    return [...this.#cookies.values()]
      .filter((cookie) => cookie.expiresAt > now && pathMatches(pathname, cookie.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join('; ');
  }

  /** Headers carrying the matching cookies, to spread into a fetch call. */
  headersFor(url: string | URL): Record<string, string> {
    const cookie = this.cookieHeader(url);
    return cookie === '' ? {} : { cookie };
  }

  /** Number of cookies held. */
  get size(): number {
    return this.#cookies.size;
  }
}
