/** How an {@link AccessToken} puts itself on a request: in the header, the query or the body, per `mode`. */
import type { AccessToken } from './access-token.js';
import { type TokenModeName, TokenModes } from './constants.js';
import { MODE_NAMES } from './token-hash.js';
import type { Params, RequestOptions, TokenMode } from './types.js';
import { percentEncode } from './url.js';

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() !== 'authorization') out[k] = v;
  return out;
}

function modeFor(mode: TokenMode, verb: string): TokenModeName {
  let resolved: unknown;
  if (typeof mode === 'function') resolved = mode(verb);
  else if (typeof mode === 'object') resolved = mode[verb] ?? mode[verb.toUpperCase()] ?? TokenModes.Header;
  else resolved = mode;
  if (typeof resolved !== 'string' || !MODE_NAMES.has(resolved)) {
    throw new TypeError(`"mode" resolved to an invalid mode for "${verb}"`);
  }
  return resolved as TokenModeName;
}

/**
 * The request options of `opts` with the token on them, per its `mode` for `verb` (lowercase): the
 * `Authorization` header (replacing the caller's), a query param, or a body param (a raw string body gets it
 * appended); the token and the refresh token are added to `redact`.
 */
export function signedRequest(token: AccessToken, verb: string, opts: RequestOptions): RequestOptions {
  const mode = modeFor(token.options.mode, verb);
  const value = token.token;
  const name = token.options.paramName;
  const next: RequestOptions = { ...opts, redact: [...(opts.redact ?? []), value, token.refreshToken] };
  if (mode === 'header') {
    next.headers = { ...withoutAuthorization(opts.headers), ...token.headers() };
  } else if (mode === 'query') {
    next.params = { ...opts.params, [name]: value };
  } else {
    const body = opts.body;
    if (body === undefined) next.body = { [name]: value };
    else if (typeof body === 'string')
      next.body = `${body}${body === '' ? '' : '&'}${percentEncode(name)}=${percentEncode(value)}`;
    else if (body instanceof URLSearchParams) {
      const copy = new URLSearchParams(body);
      copy.set(name, value);
      next.body = copy;
    } else if (body instanceof Uint8Array) {
      throw new TypeError(`"body" must be a string or an object in "body" mode`);
    } else next.body = { ...(body as Params), [name]: value };
  }
  return next;
}
