import type { Dispatcher } from 'undici';
import { ConnectionError, TimeoutError } from './errors.js';
import { redactUrl } from './redact.js';
import type { ConnectionOptions, FetchInit, FetchLike, HttpRequest } from './types.js';

/** What one hop returned. */
export interface HttpResult {
  status: number;
  headers: Headers;
  body: string;
  url: string;
}

type IncomingHeaders = Record<string, string | string[] | undefined>;
type Undici = typeof import('undici');

// undici costs about 100 ms to load and Node's global fetch about 20 ms on first use, but undici's
// `request` needs far less CPU per call than fetch. So the default path starts on the global fetch and
// loads undici in the background on the first request; once loaded, requests go through it.
let undiciModule: Undici | undefined;
let undiciLoading: Promise<Undici> | undefined;
let defaultAgent: import('undici').Dispatcher | undefined;

function loadUndici(): Promise<Undici> {
  undiciLoading ??= import('undici').then((mod) => {
    undiciModule = mod;
    return mod;
  });
  return undiciLoading;
}

function preloadUndici(): void {
  loadUndici().catch(() => {
    undiciLoading = undefined; // stay on the global fetch; try again on a later request
  });
}

function toHeaders(raw: IncomingHeaders): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) headers.append(k, item);
    else headers.append(k, v);
  }
  return headers;
}

/**
 * Sends one HTTP request (no redirects followed): through a custom `fetch` when given; through undici's
 * `request` when a dispatcher, proxy or TLS client certificate is configured; otherwise through Node's
 * global `fetch` until undici (loaded in the background from the first request on) is ready, then
 * through undici's `request` with a keep-alive Agent of its own.
 *
 * @example
 * ```ts
 * const transport = new Transport({ timeout: 5_000 });
 * const result = await transport.send({ method: 'GET', url: 'https://x.test/', headers: {} });
 * ```
 * @see https://fetch.spec.whatwg.org/
 */
export class Transport {
  readonly #options: ConnectionOptions;
  readonly #timeout: number;
  #dispatcher: Promise<Dispatcher | undefined> | undefined;

  constructor(options: ConnectionOptions, timeout: number) {
    this.#options = options;
    this.#timeout = timeout;
  }

  /** Whether requests go through undici (a dispatcher is given or must be built). */
  get usesUndici(): boolean {
    const o = this.#options;
    return (
      o.fetch === undefined && (o.dispatcher !== undefined || o.proxy !== undefined || o.tls !== undefined)
    );
  }

  #getDispatcher(): Promise<Dispatcher | undefined> {
    this.#dispatcher ??= (async () => {
      const o = this.#options;
      if (o.dispatcher) return o.dispatcher;
      if (!o.proxy && !o.tls) return undefined;
      const undici = await loadUndici();
      const tls = o.tls ? { ...o.tls } : undefined;
      if (o.proxy) {
        const proxy = typeof o.proxy === 'string' ? { uri: o.proxy } : o.proxy;
        return new undici.ProxyAgent({ ...proxy, ...(tls ? { requestTls: tls } : {}) });
      }
      return new undici.Agent({ connect: tls ?? {} });
    })();
    return this.#dispatcher;
  }

  /** Sends one hop; throws {@link TimeoutError} or {@link ConnectionError} when there is no response. */
  async send(request: HttpRequest): Promise<HttpResult> {
    const signal = AbortSignal.timeout(this.#timeout);
    try {
      if (this.usesUndici) return await this.#sendUndici(request, signal);
      if (this.#options.fetch === undefined) {
        if (undiciModule !== undefined) {
          defaultAgent ??= new undiciModule.Agent();
          return await this.#sendUndiciWith(undiciModule, defaultAgent, request, signal);
        }
        preloadUndici();
      }
      return await this.#sendFetch(request, signal);
    } catch (error) {
      const where = `${request.method} "${redactUrl(request.url)}"`;
      if (signal.aborted || (error instanceof Error && error.name === 'TimeoutError')) {
        throw new TimeoutError(`request ${where} timed out after ${this.#timeout} ms`, error);
      }
      throw new ConnectionError(`request ${where} failed`, error);
    }
  }

  async #sendFetch(request: HttpRequest, signal: AbortSignal): Promise<HttpResult> {
    const fetchImpl: FetchLike = this.#options.fetch ?? (globalThis.fetch as unknown as FetchLike);
    const init: FetchInit = {
      method: request.method,
      headers: request.headers,
      redirect: 'manual',
      signal,
    };
    if (request.body !== undefined) init.body = request.body;
    if (this.#options.dispatcher) init.dispatcher = this.#options.dispatcher;
    const res = await fetchImpl(request.url, init);
    const body = await res.text();
    return { status: res.status, headers: res.headers, body, url: request.url };
  }

  async #sendUndici(request: HttpRequest, signal: AbortSignal): Promise<HttpResult> {
    const [undici, dispatcher] = await Promise.all([loadUndici(), this.#getDispatcher()]);
    return this.#sendUndiciWith(undici, dispatcher, request, signal);
  }

  async #sendUndiciWith(
    undici: Undici,
    dispatcher: Dispatcher | undefined,
    request: HttpRequest,
    signal: AbortSignal,
  ): Promise<HttpResult> {
    const res = await undici.request(request.url, {
      method: request.method as Dispatcher.HttpMethod,
      headers: request.headers,
      body: request.body ?? null,
      signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
    const body = await res.body.text();
    return { status: res.statusCode, headers: toHeaders(res.headers), body, url: request.url };
  }
}
