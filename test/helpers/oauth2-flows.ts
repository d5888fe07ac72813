// Drives the authorization code flow through oidc-provider's development login and consent pages, as a
// browser would: fetch with `redirect: 'manual'`, a cookie jar, and the forms filled in and posted.
import { CookieJar } from './oauth2-cookie-jar.js';

export interface AuthorizationResult {
  /** The redirect back to the client (`redirect_uri?code=...&state=...&iss=...`). */
  callbackUrl: URL;
  code: string | null;
  state: string | null;
  error: string | null;
  /** Every URL requested on the way, in order. */
  visited: string[];
}

export interface AuthorizeOptions {
  /** The client's redirect_uri: the walk stops at the first redirect to it. */
  redirectUri: string;
  /** Login name typed into the login page. */
  login: string;
  password: string;
  /** Submit the consent page (default) or abort the interaction. */
  consent?: boolean;
  jar?: CookieJar;
  /** Upper bound on requests, so a loop fails instead of hanging. Default 12. */
  maxSteps?: number;
}

const decodeHtml = (value: string): string =>
  value
    .replaceAll('&#x2F;', '/')
    .replaceAll('&#x3D;', '=')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

interface HtmlForm {
  action: string;
  fields: Record<string, string>;
}

function readForm(html: string): HtmlForm | undefined {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form?.[1] || form[2] === undefined) return undefined;
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input([^>]*)>/gi)) {
    const attributes = input[1] ?? '';
    const name = /name="([^"]*)"/.exec(attributes)?.[1];
    const value = /value="([^"]*)"/.exec(attributes)?.[1] ?? '';
    if (name !== undefined) fields[name] = decodeHtml(value);
  }
  return { action: decodeHtml(form[1]), fields };
}

/**
 * Opens `authorizationUrl`, signs in on the login page, grants (or aborts) consent, and returns the
 * redirect back to the client without following it.
 *
 * @example
 * const { code } = await authorizeWithDevInteractions(url, { redirectUri, login: 'alice', password });
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 */
export async function authorizeWithDevInteractions(
  authorizationUrl: string,
  options: AuthorizeOptions,
): Promise<AuthorizationResult> {
  const jar = options.jar ?? new CookieJar();
  const visited: string[] = [];
  let request: { url: string; init: RequestInit } = { url: authorizationUrl, init: { method: 'GET' } };
  for (let step = 0; step < (options.maxSteps ?? 12); step += 1) {
    visited.push(request.url);
    const headers = { ...(request.init.headers as Record<string, string>), ...jar.headersFor(request.url) };
    const response = await fetch(request.url, { ...request.init, headers, redirect: 'manual' });
    jar.store(request.url, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const next = new URL(location, request.url);
      if (next.href.startsWith(options.redirectUri)) {
        return {
          callbackUrl: next,
          code: next.searchParams.get('code'),
          state: next.searchParams.get('state'),
          error: next.searchParams.get('error'),
          visited,
        };
      }
      request = { url: next.href, init: { method: 'GET' } };
      continue;
    }
    const html = await response.text();
    const form = response.status === 200 ? readForm(html) : undefined;
    if (form === undefined) {
      throw new Error(`unexpected ${response.status} from ${request.url}: ${html.slice(0, 300)}`);
    }
    const fields = { ...form.fields };
    if (fields.prompt === 'login')
      Object.assign(fields, { login: options.login, password: options.password });
    const abort = fields.prompt === 'consent' && options.consent === false;
    // The development pages post to /interaction/<uid>; their 'abort' link is /interaction/<uid>/abort.
    const target = new URL(abort ? `${form.action.replace(/\/$/, '')}/abort` : form.action, request.url);
    request = abort
      ? { url: target.href, init: { method: 'GET' } }
      : {
          url: target.href,
          init: {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          },
        };
  }
  throw new Error(`authorization did not reach ${options.redirectUri} within the step limit`);
}
