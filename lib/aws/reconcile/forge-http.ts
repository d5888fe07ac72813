/**
 * The reconciler's one HTTP call to a forge API (fetch, a timeout, a bounded body), and the error every forge
 * answer that is not a success becomes. Tokens never reach an error message: only the method, the path and the
 * forge's status (and its `message`, cleaned) do.
 */
import { ForgeApiError, ForgeApiErrorCodes, ForgeRateLimitError } from '../errors.js';
import type { HookAuth } from './types.js';

/** One forge answer, its body read as text (and parsed when JSON). */
export interface ForgeAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; `undefined` for an empty body. */
  json: unknown;
}

/** What a forge request needs: the method, the absolute URL, the authorization header value and a body. */
export interface ForgeRequest {
  method: 'GET' | 'POST';
  url: string;
  authorization: string;
  /** Extra headers (the API's media type and version). */
  headers?: Record<string, string>;
  body?: unknown;
}

/** Options of {@link sendForgeRequest}. */
export interface ForgeHttpOptions {
  /** Default the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per request, in ms. Default 10000. */
  timeoutMs?: number | undefined;
  /** Largest body read, in bytes. Default 32 MiB (GitHub keeps payloads up to 25 MB). */
  maxBodyBytes?: number | undefined;
}

const MAX_MESSAGE = 200;

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function forgeMessage(json: unknown): string {
  const message = (json as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || message === '') return '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is stripped
  const line = message.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return ` ${JSON.stringify(line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line)}`;
}

function retryAfter(headers: Headers): number | undefined {
  const after = headers.get('retry-after');
  if (after !== null && /^\d+$/.test(after.trim())) return Number(after.trim());
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null && /^\d+$/.test(reset.trim())) {
    return Math.max(0, Number(reset.trim()) - Math.floor(Date.now() / 1000));
  }
  return undefined;
}

/** Whether a 403/429 is a rate limit (GitHub answers both; GitLab 429), not a missing permission. */
function isRateLimit(status: number, headers: Headers): boolean {
  if (status === 429) return true;
  return status === 403 && (headers.get('x-ratelimit-remaining') === '0' || headers.has('retry-after'));
}

/**
 * The body as text, counted while it is read: past `max` bytes the stream is cancelled and this rejects, so an
 * answer without (or lying about) its `content-length` is never buffered whole.
 */
async function readBounded(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error('body too large');
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel().catch(() => undefined);
      throw new Error('body too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Sends one request and reads its answer. A 2xx resolves; a 401 resolves too (the caller refreshes its token
 * once); anything else rejects with a {@link ForgeApiError} of the matching code.
 */
export async function sendForgeRequest(
  request: ForgeRequest,
  options: ForgeHttpOptions = {},
): Promise<ForgeAnswer> {
  const doFetch = options.fetch ?? fetch;
  const what = `${request.method} ${pathOf(request.url)}`;
  let response: Response;
  try {
    response = await doFetch(request.url, {
      method: request.method,
      headers: {
        accept: 'application/json',
        'user-agent': 'forgebridge-reconciler',
        ...request.headers,
        authorization: request.authorization,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      redirect: 'error',
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'no connection';
    throw new ForgeApiError(ForgeApiErrorCodes.unavailable, `${what} failed: ${reason}`, { cause: error });
  }
  let text: string;
  try {
    text = await readBounded(response, options.maxBodyBytes ?? 32 * 1024 * 1024);
  } catch (error) {
    throw new ForgeApiError(ForgeApiErrorCodes.unavailable, `${what} failed: the answer could not be read`, {
      status: response.status,
      cause: error,
    });
  }
  let json: unknown;
  let parsed = true;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = false;
  }
  const { status, headers } = response;
  if ((status >= 200 && status < 300) || status === 401) {
    if (!parsed) {
      throw new ForgeApiError(
        ForgeApiErrorCodes.malformed,
        `${what} answered ${status} with a body that is not json`,
        {
          status,
        },
      );
    }
    return { status, headers, json };
  }
  const message = parsed ? forgeMessage(json) : '';
  if (isRateLimit(status, headers)) {
    const wait = retryAfter(headers);
    throw new ForgeApiError(ForgeApiErrorCodes.rateLimited, `${what} was rate limited: ${status}${message}`, {
      status,
      ...(wait === undefined ? {} : { retryAfterSeconds: wait }),
    });
  }
  const code = status >= 500 ? ForgeApiErrorCodes.unavailable : ForgeApiErrorCodes.refused;
  throw new ForgeApiError(code, `${what} failed: ${status}${message}`, { status });
}

/**
 * Sends one request with the hook's token ({@link sendForgeRequest}); a 401 renews the token once and sends it
 * again, and a second 401 rejects as `forge_unauthorized`.
 */
export async function sendAuthorized(
  auth: HookAuth,
  request: Omit<ForgeRequest, 'authorization'>,
  options: ForgeHttpOptions = {},
): Promise<ForgeAnswer> {
  const send = async () =>
    governed(auth, request, async () =>
      sendForgeRequest({ ...request, authorization: await auth.authorization() }, options),
    );
  let answer = await send();
  if (answer.status !== 401) return answer;
  await auth.renew();
  answer = await send();
  if (answer.status === 401) {
    throw new ForgeApiError(
      ForgeApiErrorCodes.unauthorized,
      `${request.method} ${pathOf(request.url)} failed: 401 with a renewed token`,
      { status: 401 },
    );
  }
  return answer;
}

/**
 * One request through the hook's governor, when it has one: its turn first (a turn that cannot come in time is a
 * rate limit of the forge's, `forge_rate_limited`, for the reconciler to stop on), then the answer's limits read and
 * the slot given back. A rate-limit answer stops every instance of the owner until its `retry-after`.
 */
async function governed(
  auth: HookAuth,
  request: Omit<ForgeRequest, 'authorization'>,
  send: () => Promise<ForgeAnswer>,
): Promise<ForgeAnswer> {
  const governor = auth.governor;
  if (governor === undefined) return send();
  let permit: Awaited<ReturnType<typeof governor.acquire>>;
  try {
    permit = await governor.acquire(request.method);
  } catch (error) {
    if (!(error instanceof ForgeRateLimitError)) throw error;
    throw new ForgeApiError(
      ForgeApiErrorCodes.rateLimited,
      `${request.method} ${pathOf(request.url)} waits for the forge api limit "${error.limit}"`,
      {
        retryAfterSeconds: Math.max(0, Math.ceil((error.resetAt.getTime() - Date.now()) / 1000)),
        cause: error,
      },
    );
  }
  try {
    const answer = await send();
    await permit.release({ status: answer.status, headers: answer.headers });
    return answer;
  } catch (error) {
    const limited = error instanceof ForgeApiError && error.code === ForgeApiErrorCodes.rateLimited;
    await permit.release(
      limited
        ? {
            status: error.status ?? 429,
            headers: new Headers(
              error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) },
            ),
          }
        : undefined,
    );
    throw error;
  }
}
