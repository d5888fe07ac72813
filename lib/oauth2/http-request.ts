/**
 * The request plumbing of a {@link Client}: headers and body encoding, the `onRequest`/`onResponse` hooks, the
 * debug log, the transport, the redirect loop and the error for a status >= 400.
 */

import { requireByteCount, requireString } from './client-options.js';
import { DEFAULT_HEADERS } from './constants.js';
import type { DebugLog } from './debug-log.js';
import { OAuth2Error } from './errors.js';
import { rememberSecrets } from './redact.js';
import { followRedirect, REDIRECT_STATUSES } from './redirect.js';
import { Response } from './response.js';
import type { Transport } from './transport.js';
import type { ConnectionOptions, HttpRequest, RequestOptions } from './types.js';
import { encodeParams, type Params } from './url.js';

/** What {@link sendRequest} sends with: the client's connection, transport and debug log, secret and defaults. */
export interface HttpContext {
  connection: ConnectionOptions;
  transport: Transport;
  debugLog: DebugLog | undefined;
  /** The client secret: redacted from the debug log and never carried to another origin. */
  secret: string | undefined;
  maxResponseBytes: number;
  maxRedirects: number;
  raiseErrors: boolean;
  /** Resolves a URL against the client's `site` with params merged into its query. */
  buildUrl: (url: string, params?: Params) => string;
}

export function lowerHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

function encodeBody(
  body: RequestOptions['body'],
  headers: Record<string, string>,
): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  const raw = typeof body === 'string' || body instanceof Uint8Array;
  if (!raw && !(body instanceof URLSearchParams) && isJsonContentType(headers['content-type'])) {
    return JSON.stringify(body);
  }
  // The gem (Faraday's url_encoded middleware) labels any body without a type as a form, a raw one too.
  headers['content-type'] ??= 'application/x-www-form-urlencoded';
  if (raw) return body;
  return body instanceof URLSearchParams ? body.toString() : encodeParams(body);
}

/**
 * Sends one request (see {@link Client.request}) and follows its redirects unless `follow` is false (a request
 * carrying client credentials or a grant).
 */
export async function sendRequest(
  via: HttpContext,
  verb: string,
  url: string,
  opts: RequestOptions,
  follow: boolean,
): Promise<Response> {
  requireString(verb, 'verb');
  if (opts.maxResponseBytes !== undefined) requireByteCount(opts.maxResponseBytes, 'maxResponseBytes');
  const limit = opts.maxResponseBytes ?? via.maxResponseBytes;
  let method = verb.toUpperCase();
  let target = via.buildUrl(url, opts.params);
  const headers = {
    ...DEFAULT_HEADERS,
    ...lowerHeaders(via.connection.headers),
    ...lowerHeaders(opts.headers),
  };
  let body = encodeBody(opts.body, headers);
  const raiseErrors = opts.raiseErrors ?? via.raiseErrors;
  const responseOptions = {
    ...(opts.parse === undefined ? {} : { parse: opts.parse }),
    ...(opts.snaky === undefined ? {} : { snaky: opts.snaky }),
    ...(opts.snakyHashClass === undefined ? {} : { snakyHashClass: opts.snakyHashClass }),
  };
  const secrets = [via.secret, ...(opts.redact ?? [])];
  for (let redirects = 0; ; redirects++) {
    let request: HttpRequest = { method, url: target, headers: { ...headers }, body };
    if (via.connection.onRequest) {
      const replaced = await via.connection.onRequest(request);
      if (replaced !== null && typeof replaced === 'object' && 'url' in replaced)
        request = replaced as HttpRequest;
    }
    via.debugLog?.request(request, secrets);
    let result: Awaited<ReturnType<Transport['send']>>;
    try {
      result = await via.transport.send(request, limit, secrets);
    } catch (error) {
      via.debugLog?.failure(request, error as Error, secrets);
      throw error;
    }
    const response = new Response(result, responseOptions);
    rememberSecrets(response, secrets);
    via.debugLog?.response(response, secrets);
    if (via.connection.onResponse) await via.connection.onResponse(response);
    const { status } = response;
    if (REDIRECT_STATUSES.has(status)) {
      const outcome = followRedirect({
        response,
        requestUrl: request.url,
        method,
        body,
        headers,
        secrets,
        follow,
        redirects,
        maxRedirects: via.maxRedirects,
        raiseErrors,
      });
      if ('done' in outcome) return outcome.done;
      ({ method, body, url: target } = outcome.next);
      continue;
    }
    if (status >= 200 && status < 400) return response;
    if (status >= 400 && status < 600) {
      const error = new OAuth2Error(response);
      if (raiseErrors) throw error;
      response.error = error;
      return response;
    }
    throw new OAuth2Error(response, `unhandled status code value of ${status}`);
  }
}
