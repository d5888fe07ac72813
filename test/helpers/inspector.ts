// A client of the inspector other than a browser: the token of the URL it printed (`/?token=…`), sent as
// `Authorization: Bearer <token>` (lib/inspector/auth.ts), as a browser sends the cookie it traded it for.

/** The token in an inspector's printed URL. */
export function inspectorToken(url: string): string {
  const token = new URL(url).searchParams.get('token');
  if (token === null) throw new Error(`no token in the inspector URL ${url}`);
  return token;
}

/**
 * fetch of `path` (`/api/deliveries`, or relative: `api/deliveries`) on the inspector whose printed URL is `url`,
 * with its token as a bearer.
 */
export function inspectorFetch(url: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${inspectorToken(url)}`);
  return fetch(new URL(path, url), { ...init, headers });
}
