import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Dispatcher } from 'undici';
import { ConnectionError, TimeoutError } from './errors.js';
import { redactUrl } from './redact.js';
import type { ConnectionOptions, FetchInit, HttpRequest } from './types.js';

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
 * Sends one HTTP request (no redirects followed) with exactly the headers it is given. Every request of a
 * client takes the same way, chosen by its options: the caller's `connection.fetch`, else the caller's
 * `connection.dispatcher` (undici), else Node's `http`/`https` on a keep-alive agent of the client's own,
 * which also carries `connection.proxy` and `connection.tls`.
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

  /** Sends one hop; throws {@link TimeoutError} or {@link ConnectionError} when there is no response. */
  async send(request: HttpRequest): Promise<HttpResult> {
    const signal = AbortSignal.timeout(this.#timeout);
    try {
      if (this.#options.fetch !== undefined) return await this.#sendFetch(request, signal);
      if (this.#options.dispatcher !== undefined) {
        return await this.#sendDispatcher(this.#options.dispatcher, request, signal);
      }
      return await this.#sendNode(request, signal);
    } catch (error) {
      const where = `${request.method} "${redactUrl(request.url)}"`;
      if (signal.aborted || (error instanceof Error && error.name === 'TimeoutError')) {
        throw new TimeoutError(`request ${where} timed out after ${this.#timeout} ms`, error);
      }
      throw new ConnectionError(`request ${where} failed`, error);
    }
  }

  async #sendFetch(request: HttpRequest, signal: AbortSignal): Promise<HttpResult> {
    const init: FetchInit = { method: request.method, headers: request.headers, redirect: 'manual', signal };
    if (request.body !== undefined) init.body = request.body;
    if (this.#options.dispatcher !== undefined) init.dispatcher = this.#options.dispatcher;
    const res = await (this.#options.fetch as NonNullable<ConnectionOptions['fetch']>)(request.url, init);
    return { status: res.status, headers: res.headers, body: await res.text(), url: request.url };
  }

  async #sendDispatcher(
    dispatcher: Dispatcher,
    request: HttpRequest,
    signal: AbortSignal,
  ): Promise<HttpResult> {
    const url = new URL(request.url);
    const res = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method as Dispatcher.HttpMethod,
      headers: request.headers,
      body: request.body ?? null,
      signal,
    });
    return {
      status: res.statusCode,
      headers: toHeaders(res.headers),
      body: await res.body.text(),
      url: request.url,
    };
  }

  #sendNode(request: HttpRequest, signal: AbortSignal): Promise<HttpResult> {
    const url = new URL(request.url);
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      return Promise.reject(new TypeError(`unsupported protocol "${url.protocol}"`));
    }
    const agent = secure ? this.#secureAgent() : this.#plainAgent();
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      const req = send(url, { method: request.method, headers: request.headers, agent, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: toHeaders(res.headers),
            body: Buffer.concat(chunks).toString('utf8'),
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
