// The inspector's secret for one run. The Host and Origin checks stop other sites' pages, not other processes on
// this machine: without a secret of its own, any of them could read delivery payloads and replay to a stage's bus
// with the user's AWS credentials. Each server start draws a random token (256 bits, base64url) that only the URL
// it hands out carries. Opening that URL (`/?token=…`) sets an HttpOnly, SameSite=Strict session cookie and
// redirects to the same page without the token, so it stays out of the history and of any Referer; every other
// request (the page, its files, the API, the event stream, replays) needs the cookie, or the token as
// `Authorization: Bearer <token>` for a client that is not a browser. Both are compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS, sendJson } from './http.js';

/** The token's query parameter in the URL the inspector hands out. */
export const TOKEN_PARAMETER = 'token';

/** One run's token and the check of every request. */
export interface InspectorAuth {
  /** This run's token: in the URL to print, nowhere else. */
  readonly token: string;
  /**
   * `true` when `request` may go on. Otherwise it has answered: a 303 with the cookie for the page opened with the
   * right token, a 401 (no data) for anything else.
   */
  admit(request: IncomingMessage, response: ServerResponse, url: URL, port: number): boolean;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * The cookie's name: one per port, since a browser keeps cookies per host and not per port, and two inspectors on
 * 127.0.0.1 must not overwrite each other's.
 */
export function cookieName(port: number): string {
  return `forgebridge_inspector_${port}`;
}

/** The values of cookie `name` in a `Cookie` header (a browser may send one name twice). */
function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) values.push(part.slice(at + 1).trim());
  }
  return values;
}

/** Draws a fresh token; `token` only for tests that need a known one. */
export function createInspectorAuth(token: string = randomBytes(32).toString('base64url')): InspectorAuth {
  const expected = digest(token);
  // Digests of equal length: timingSafeEqual tells nothing of the token's length or of a common prefix.
  const matches = (value: string | undefined) =>
    value !== undefined && timingSafeEqual(digest(value), expected);

  const refuse = (response: ServerResponse, message: string) => {
    sendJson(response, 401, { error: 'unauthorized', message });
    return false;
  };

  return {
    token,
    admit(request, response, url, port) {
      const name = cookieName(port);
      if (url.searchParams.has(TOKEN_PARAMETER)) {
        const given = url.searchParams.getAll(TOKEN_PARAMETER);
        if (request.method !== 'GET' || given.length !== 1 || !matches(given[0])) {
          return refuse(response, 'wrong token: open the URL the inspector printed');
        }
        url.searchParams.delete(TOKEN_PARAMETER);
        // A path of this origin only (`//host` would be another's).
        const path = url.pathname.startsWith('//') ? '/' : url.pathname;
        response.writeHead(303, {
          ...SECURITY_HEADERS,
          location: `${path}${url.search}`,
          'set-cookie': `${name}=${token}; HttpOnly; SameSite=Strict; Path=/`,
          'content-length': 0,
        });
        response.end();
        return false;
      }
      const authorization = request.headers.authorization;
      const bearer = authorization === undefined ? undefined : /^Bearer (\S+)$/i.exec(authorization)?.[1];
      if (matches(bearer)) return true;
      if (cookieValues(request.headers.cookie, name).some(matches)) return true;
      return refuse(response, 'no session: open the URL the inspector printed (it carries a token)');
    },
  };
}
