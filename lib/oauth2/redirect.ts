/**
 * The client's redirect policy: which 3xx answers are followed, how the next hop's method and body change, and
 * what never crosses to another origin (credential headers, a token in the query, path or body).
 */
import { OAuth2Error } from './errors.js';
import type { Response } from './response.js';
import { formEncode, percentEncode } from './url.js';

/** The redirect statuses followed (up to `connection.maxRedirects`). */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** The protocols a request, and a redirect, may use. */
export const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:']);

/** `redirect 302 to "https://other.example"`: the status and the target's origin only, never its path or query. */
function redirectPhrase(status: number, location: string | null, base: string): string {
  if (location === null) return `redirect ${status} without a location`;
  const next = URL.canParse(location, base) ? new URL(location, base) : undefined;
  if (next === undefined) return `redirect ${status} to an invalid location`;
  return `redirect ${status} to "${HTTP_PROTOCOLS.has(next.protocol) ? next.origin : next.protocol}"`;
}

/** The 3xx answer as an {@link OAuth2Error}: thrown, or kept in `response.error` with `raiseErrors: false`. */
function refuse(response: Response, message: string, raiseErrors: boolean): Response {
  const error = new OAuth2Error(response, message);
  if (raiseErrors) throw error;
  response.error = error;
  return response;
}

/** Whether a text or body carries one of the secrets, raw or in any encoding the library or a caller writes. */
function carriesSecret(body: string | Uint8Array, secrets: ReadonlyArray<string | undefined>): boolean {
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  for (const secret of secrets) {
    if (secret === undefined || secret === '') continue;
    const json = JSON.stringify(secret).slice(1, -1);
    const forms = [secret, encodeURIComponent(secret), percentEncode(secret), formEncode(secret), json];
    forms.push(JSON.stringify(json).slice(1, -1));
    if (forms.some((form) => text.includes(form))) return true;
  }
  return false;
}

/** Headers a browser never carries to another origin (Fetch), whatever their value. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'] as const;

/**
 * Drops the headers that must not reach another origin: the credential headers, and any header whose value
 * carries a secret of the request (a token a caller put in `x-api-key`, say).
 */
function dropSecretHeaders(
  headers: Record<string, string>,
  secrets: ReadonlyArray<string | undefined>,
): void {
  for (const name of CREDENTIAL_HEADERS) delete headers[name];
  for (const [name, value] of Object.entries(headers)) {
    if (carriesSecret(value, secrets)) delete headers[name];
  }
}

/** Removes the query parameters whose value is a secret: the token in query mode, under any `param_name`. */
function dropSecretParams(url: URL, secrets: ReadonlyArray<string | undefined>): void {
  if (url.search === '') return;
  const known = new Set(secrets.filter((secret) => secret !== undefined && secret !== ''));
  const found = [...url.searchParams].filter(([, value]) => known.has(value));
  for (const [name, value] of found) url.searchParams.delete(name, value);
}

/** One redirect answer and the request it answered. */
export interface RedirectHop {
  response: Response;
  /** The URL the answered request went to. */
  requestUrl: string;
  method: string;
  body: string | Uint8Array | undefined;
  /** The headers of the next hop: changed in place (a body's headers and, across origins, the secret ones). */
  headers: Record<string, string>;
  secrets: ReadonlyArray<string | undefined>;
  /** False for a request carrying client credentials or a grant: it never follows a redirect. */
  follow: boolean;
  /** Redirects followed so far. */
  redirects: number;
  maxRedirects: number;
  raiseErrors: boolean;
}

/** The answer to return (refused, or past `maxRedirects`), or the next hop to send. */
export type RedirectOutcome =
  | { done: Response }
  | { next: { url: string; method: string; body: string | Uint8Array | undefined } };

/**
 * Decides what a redirect answer leads to. Follows as browsers do: 303, and 301/302 after a POST, become a
 * GET without a body. A hop to another origin drops `Authorization`, `Cookie`, `Proxy-Authorization`, any
 * header and query parameter holding a secret; one whose body or URL still carries a secret is refused
 * ({@link OAuth2Error}, thrown or kept in `response.error` per `raiseErrors`).
 *
 * @throws OAuth2Error when the answer to follow has no `Location`.
 */
export function followRedirect(hop: RedirectHop): RedirectOutcome {
  const { response, requestUrl, headers, secrets, follow, redirects, maxRedirects, raiseErrors } = hop;
  const { status } = response;
  let { method, body } = hop;
  const location = response.headers.get('location');
  if (!follow) {
    // RFC 9700 §4.11: a token, revocation or introspection request carries client credentials or a
    // grant secret in its body; it is never re-sent, as oauth4webapi does not follow them either.
    return {
      done: refuse(
        response,
        `${redirectPhrase(status, location, requestUrl)} not followed: a request carrying client credentials or a grant never follows a redirect`,
        raiseErrors,
      ),
    };
  }
  if (redirects >= maxRedirects) return { done: response };
  if (location === null) {
    throw new OAuth2Error(response, `got ${status} status code, but no location header was present`);
  }
  const next = URL.canParse(location, requestUrl) ? new URL(location, requestUrl) : undefined;
  if (next === undefined || !HTTP_PROTOCOLS.has(next.protocol)) {
    return {
      done: refuse(
        response,
        `${redirectPhrase(status, location, requestUrl)} not followed: only http and https URLs are`,
        raiseErrors,
      ),
    };
  }
  if (status === 303 ? method !== 'HEAD' : status <= 302 && method === 'POST') {
    method = 'GET';
    body = undefined;
    delete headers['content-type'];
    delete headers['content-length'];
  }
  if (next.origin !== new URL(requestUrl).origin) {
    // Refused rather than stripped: the body is the caller's payload, and a body without its token is
    // a different request the caller never made.
    if (body !== undefined && carriesSecret(body, secrets)) {
      return {
        done: refuse(
          response,
          `${redirectPhrase(status, location, requestUrl)} not followed: the body carries a token or secret and the target is another origin`,
          raiseErrors,
        ),
      };
    }
    dropSecretParams(next, secrets);
    // A token left in the path or under a second encoding of the query (a careless server rewrote it):
    // the hop is refused, never sent.
    if (carriesSecret(`${next.pathname}${next.search}`, secrets)) {
      return {
        done: refuse(
          response,
          `${redirectPhrase(status, location, requestUrl)} not followed: the target URL carries a token or secret and is another origin`,
          raiseErrors,
        ),
      };
    }
    dropSecretHeaders(headers, secrets);
  }
  return { next: { url: next.href, method, body } };
}
