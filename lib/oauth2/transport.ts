import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { config } from './configuration.js';
import { ConnectionError, ResponseTooLargeError, TimeoutError } from './errors.js';
import { redactSecrets, redactUrl } from './redact.js';
import { Response } from './response.js';
import type {
  ConnectionOptions,
  DispatcherLike,
  FetchInit,
  FetchResponseLike,
  HttpRequest,
} from './types.js';

/** What one hop returned. */
export interface HttpResult {
  status: number;
  headers: Headers;
  body: string;
  url: string;
}

function toHeaders(raw: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

/**
 * The body bytes a `content-length` header announces (`NaN` when absent or unreadable). A response to HEAD,
 * a 204 and a 304 have no body: their `content-length` describes another response and is not a size.
 */
function declaredLength(value: string | string[] | null | undefined, method: string, status: number): number {
  if (method === 'HEAD' || status === 204 || status === 304) return Number.NaN;
  return typeof value === 'string' ? Number(value) : Number.NaN;
}

/** Thrown inside a transport path when a body passes the limit; `send` turns it into the public error. */
class TooLarge {
  constructor(
    readonly status: number,
    readonly headers: Headers,
  ) {}
}

const TLS_CODE =
  /^(?:ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH$|EPROTO$)/;
const PLAIN_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed',
  EAI_FAIL: 'DNS lookup failed',
  EAI_NONAME: 'DNS lookup failed',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed by the server',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ERR_INVALID_PROTOCOL: 'unsupported protocol',
};

/** The first error code along an error's `cause` chain (and an AggregateError's first error). */
function errorCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth += 1) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown; cause?: unknown };
    // A code is an identifier of Node or undici; anything else is not quoted into a message.
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code)) return code;
    current = cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return undefined;
}

/**
 * Why a request got no response, in plain words and never from the cause's own message (which may quote a
 * URL): connection refused, DNS lookup failed, a TLS error with its code, reset, ...
 */
export function describeCause(error: unknown): string | undefined {
  const code = errorCode(error);
  if (code === undefined) return undefined;
  if (TLS_CODE.test(code)) return `TLS error (${code})`;
  const plain = PLAIN_CAUSES[code];
  return plain === undefined ? `error ${code}` : `${plain} (${code})`;
}

/**
 * A URL for an error message: the password and filtered query keys redacted (as in debug lines), and then
 * every query value equal to a secret of the request (a token under a custom `param_name`, say).
 */
export function redactRequestUrl(url: string, secrets: ReadonlyArray<string | undefined>): string {
  const text = redactUrl(url);
  const q = text.indexOf('?');
  if (q === -1) return redactSecrets(text, secrets);
  const hash = text.indexOf('#', q);
  const end = hash === -1 ? text.length : hash;
  const known = new Set(secrets.filter((s): s is string => s !== undefined && s !== ''));
  const query = text
    .slice(q + 1, end)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq === -1) return part;
      let value = part.slice(eq + 1);
      try {
        value = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {
        // compare the raw value
      }
      return known.has(value) ? `${part.slice(0, eq)}=${config.filteredLabel}` : part;
    })
    .join('&');
  return redactSecrets(`${text.slice(0, q + 1)}${query}${text.slice(end)}`, secrets);
}

/**
 * The request's headers with a `content-length` for its body when it has none. Node's `http` frames a body
 * only on the verbs it expects one on (POST, PUT, PATCH): a GET or DELETE body (a token in `'body'` mode) would
 * go out unframed, the server would read an empty body, and the bytes would start the next request on the
 * connection. Net::HTTP, under the Ruby gem, sends a Content-Length with every body.
 */
function withContentLength(request: HttpRequest): Record<string, string> {
  if (request.body === undefined) return request.headers;
  if (Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-length'))
    return request.headers;
  return { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) };
}

/**
 * Sends one HTTP request (no redirects followed) with exactly the headers it is given. Every request of a
 * client takes the same way, chosen by its options: the caller's `connection.fetch`, else the caller's
 * `connection.dispatcher` (undici), else Node's `http`/`https` on a keep-alive agent of the client's own,
 * which also carries `connection.proxy` and `connection.tls`. A body is read up to `limit` bytes: past it
 * the stream or socket is destroyed and {@link ResponseTooLargeError} thrown.
 */
export class Transport {
  readonly #options: ConnectionOptions;
  readonly #timeout: number;
  #httpAgent: HttpAgent | undefined;
  #httpsAgent: HttpsAgent | undefined;

  constructor(options: ConnectionOptions, timeout: number) {
    this.#options = options;
    this.#timeout = timeout;
  }

  /**
   * Sends one hop; throws {@link TimeoutError} or {@link ConnectionError} when there is no response and
   * {@link ResponseTooLargeError} past `limit` bytes. `secrets` are redacted from the messages.
   */
  async send(
    request: HttpRequest,
    limit: number,
    secrets: ReadonlyArray<string | undefined>,
  ): Promise<HttpResult> {
    const signal = AbortSignal.timeout(this.#timeout);
    try {
      if (this.#options.fetch !== undefined) return await this.#sendFetch(request, signal, limit);
      if (this.#options.dispatcher !== undefined) {
        return await this.#sendDispatcher(this.#options.dispatcher, request, signal, limit);
      }
      return await this.#sendNode(request, signal, limit);
    } catch (error) {
      const where = `${request.method} "${redactRequestUrl(request.url, secrets)}"`;
      if (error instanceof TooLarge) {
        const response = new Response({ status: error.status, headers: error.headers, url: request.url });
        throw new ResponseTooLargeError(
          response,
          limit,
          `response ${error.status} to ${where} is larger than "maxResponseBytes" (${limit} bytes): not read`,
        );
      }
      if (signal.aborted || (error instanceof Error && error.name === 'TimeoutError')) {
        throw new TimeoutError(`request ${where} timed out after ${this.#timeout} ms`, error);
      }
      const cause = describeCause(error);
      throw new ConnectionError(`request ${where} failed${cause === undefined ? '' : `: ${cause}`}`, error);
    }
  }

  async #sendFetch(request: HttpRequest, signal: AbortSignal, limit: number): Promise<HttpResult> {
    const init: FetchInit = { method: request.method, headers: request.headers, redirect: 'manual', signal };
    if (request.body !== undefined) init.body = request.body;
    if (this.#options.dispatcher !== undefined) init.dispatcher = this.#options.dispatcher;
    const res = await (this.#options.fetch as NonNullable<ConnectionOptions['fetch']>)(request.url, init);
    return {
      status: res.status,
      headers: res.headers,
      body: await readFetchBody(res, request.method, limit),
      url: request.url,
    };
  }

  async #sendDispatcher(
    dispatcher: DispatcherLike,
    request: HttpRequest,
    signal: AbortSignal,
    limit: number,
  ): Promise<HttpResult> {
    const url = new URL(request.url);
    const res = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal,
    });
    const headers = toHeaders(res.headers);
    if (declaredLength(res.headers['content-length'], request.method, res.statusCode) > limit) {
      res.body.destroy();
      throw new TooLarge(res.statusCode, headers);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        throw new TooLarge(res.statusCode, headers);
      }
      chunks.push(chunk);
    }
    return {
      status: res.statusCode,
      headers,
      body: Buffer.concat(chunks, size).toString('utf8'),
      url: request.url,
    };
  }

  #sendNode(request: HttpRequest, signal: AbortSignal, limit: number): Promise<HttpResult> {
    const url = new URL(request.url);
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      const error = new TypeError(`unsupported protocol "${url.protocol}"`) as TypeError & { code: string };
      error.code = 'ERR_INVALID_PROTOCOL';
      return Promise.reject(error);
    }
    const agent = secure ? this.#secureAgent() : this.#plainAgent();
    const send = secure ? httpsRequest : httpRequest;
    const headers = withContentLength(request);
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      const req = send(url, { method: request.method, headers, agent, signal }, (res) => {
        const status = res.statusCode ?? 0;
        const tooLarge = (): void => {
          // Destroying the response closes its socket: nothing more is read, and it never returns to the pool.
          res.destroy();
          reject(new TooLarge(status, toHeaders(res.headers)));
        };
        if (declaredLength(res.headers['content-length'], request.method, status) > limit) {
          tooLarge();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) tooLarge();
          else chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status,
            headers: toHeaders(res.headers),
            body: Buffer.concat(chunks, size).toString('utf8'),
            url: request.url,
          }),
        );
      });
      req.on('error', reject);
      req.end(request.body);
    });
  }

  #proxyEnv(): { proxyEnv: Record<string, string> } | undefined {
    const { proxy } = this.#options;
    if (proxy === undefined) return undefined;
    const uri = typeof proxy === 'string' ? proxy : proxy.uri;
    return { proxyEnv: { HTTP_PROXY: uri, HTTPS_PROXY: uri } };
  }

  #plainAgent(): HttpAgent {
    this.#httpAgent ??= new HttpAgent({ keepAlive: true, ...this.#proxyEnv() });
    return this.#httpAgent;
  }

  #secureAgent(): HttpsAgent {
    this.#httpsAgent ??= new HttpsAgent({ keepAlive: true, ...this.#options.tls, ...this.#proxyEnv() });
    return this.#httpsAgent;
  }
}

/** A fetch-like's body stream: a web `ReadableStream`, or a Node `Readable` (node-fetch and the like). */
type BodyStream = {
  getReader?: () => ReadableStreamDefaultReader<Uint8Array>;
  cancel?: () => Promise<void>;
  destroy?: () => void;
  [Symbol.asyncIterator]?: () => AsyncIterator<Uint8Array | string>;
};

function discard(stream: BodyStream): void {
  if (typeof stream.cancel === 'function') void stream.cancel().catch(() => undefined);
  else if (typeof stream.destroy === 'function') stream.destroy();
}

/** The chunks of a body stream, web or Node, as bytes. */
async function* chunksOf(stream: BodyStream): AsyncGenerator<Uint8Array> {
  if (typeof stream.getReader === 'function') {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      // Leaving early (past the limit) cancels the stream: the rest is never downloaded.
      void reader.cancel().catch(() => undefined);
    }
  }
  try {
    for await (const chunk of stream as AsyncIterable<Uint8Array | string>) {
      yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    }
  } finally {
    discard(stream);
  }
}

/**
 * Reads a custom fetch's body up to `limit` bytes: from its stream when it has one (web or Node, stopped
 * past the limit), else through `text()` (a fetch-like without a stream cannot be stopped early, only
 * refused).
 */
async function readFetchBody(res: FetchResponseLike, method: string, limit: number): Promise<string> {
  const stream = (res.body ?? undefined) as BodyStream | undefined;
  if (declaredLength(res.headers.get('content-length'), method, res.status) > limit) {
    if (stream !== undefined) discard(stream);
    throw new TooLarge(res.status, res.headers);
  }
  if (
    stream === undefined ||
    (typeof stream.getReader !== 'function' && typeof stream[Symbol.asyncIterator] !== 'function')
  ) {
    const text = await res.text();
    if (Buffer.byteLength(text) > limit) throw new TooLarge(res.status, res.headers);
    return text;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunksOf(stream)) {
    size += chunk.byteLength;
    if (size > limit) throw new TooLarge(res.status, res.headers);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
