import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HasWebhooksConfig, kWebhooksConfig } from './config.js';
import { ErrorCodes } from './constants.js';
import { readDeliveryBody, readDeliveryHead } from './delivery.js';
import type { MiddlewareOptions } from './types.js';

/** A request listener for `http.createServer()` and Express/Connect-style frameworks. It never rejects. */
export type NodeMiddleware = (
  request: IncomingMessage,
  response: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<void>;

const TOO_LARGE = Symbol('too large');
const TIMED_OUT = Symbol('timed out');
const OK_BODY = '{"ok":true}';
const PENDING_BODY = '{"ok":true,"pending":true}';
const MIDDLEWARE_OPTION_KEYS = new Set(['path', 'timeout', 'maxBodyBytes']);

/**
 * Creates the middleware of a `Webhooks` instance (which also has it as `webhooks.middleware`), with the
 * instance's path, timeout and body limit unless overridden.
 *
 * Only `POST` on `path` is handled; any other request goes to `next()`, or gets 404 without `next`.
 *
 * | Case | Status | Code |
 * |---|---|---|
 * | content type other than `application/json` (form-encoded is unsupported) | 415 | `unsupported_media_type` |
 * | event, delivery or signature header missing | 400 | `missing_header` |
 * | body over `maxBodyBytes` (answered as soon as the limit is passed) | 413 | `payload_too_large` |
 * | signature does not match | 401 | `invalid_signature` |
 * | body is not a JSON object | 400 | `invalid_json` |
 * | a handler failed | 500 | `handler_failed` |
 * | handlers finished | 200 | `{"ok":true}` |
 * | handlers still running after `timeout` (they go on) | 202 | `{"ok":true,"pending":true}` |
 *
 * Error bodies are `{"error":{"code","message"}}` and never hold the secret, the signature or handler
 * internals.
 *
 * @see https://docs.github.com/en/webhooks/using-webhooks/best-practices-for-using-webhooks#respond-within-10-seconds
 */
export function createNodeMiddleware(
  webhooks: HasWebhooksConfig,
  options: MiddlewareOptions = {},
): NodeMiddleware {
  const config = webhooks?.[kWebhooksConfig];
  if (config === undefined) throw new TypeError('"webhooks" must be a Webhooks instance');
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  for (const key of Object.keys(options)) {
    if (!MIDDLEWARE_OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  const path = options.path ?? config.path;
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError('"path" must start with "/"');
  const timeout = options.timeout ?? config.timeout;
  if (!Number.isSafeInteger(timeout) || timeout <= 0)
    throw new TypeError('"timeout" must be a positive integer');
  const maxBodyBytes = options.maxBodyBytes ?? config.delivery.maxBodyBytes;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new TypeError('"maxBodyBytes" must be a positive integer');
  }
  const delivery =
    maxBodyBytes === config.delivery.maxBodyBytes ? config.delivery : { ...config.delivery, maxBodyBytes };
  const { log, receive } = config;

  async function handle(
    request: IncomingMessage,
    response: ServerResponse,
    next?: (error?: unknown) => void,
  ) {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const pathname = query === -1 ? url : url.slice(0, query);
    if (request.method !== 'POST' || pathname !== path) {
      if (typeof next === 'function') return next();
      return sendError(
        response,
        404,
        ErrorCodes.notFound,
        `no webhook route for ${request.method} "${printable(pathname)}"`,
      );
    }

    const head = readDeliveryHead(request.headers, delivery);
    if (!head.ok) return sendError(response, head.status, head.code, head.message);

    let body: Buffer | string | typeof TOO_LARGE;
    const parsedBody = (request as { body?: unknown }).body;
    if (typeof parsedBody === 'string' || parsedBody instanceof Uint8Array) {
      body = parsedBody as Buffer | string; // a raw-body parser (express.raw / express.text) ran first
    } else if (request.readableEnded) {
      return sendError(
        response,
        500,
        ErrorCodes.bodyConsumed,
        'the request body was parsed before the webhook middleware, mount it before body parsers',
      );
    } else {
      try {
        body = await readBody(request, maxBodyBytes);
      } catch {
        return sendError(response, 400, ErrorCodes.bodyReadFailed, 'the request body could not be read');
      }
    }
    if (body === TOO_LARGE) {
      response.setHeader('connection', 'close');
      return sendError(
        response,
        413,
        ErrorCodes.payloadTooLarge,
        `body is larger than the limit of ${maxBodyBytes} bytes`,
      );
    }

    const result = readDeliveryBody(body, head, delivery);
    if (!result.ok) return sendError(response, result.status, result.code, result.message);

    const receiving = receive({ id: result.id, name: result.name, payload: result.payload });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, timeout, TIMED_OUT);
    });
    try {
      const outcome = await Promise.race([receiving, timedOut]);
      if (outcome === TIMED_OUT) {
        // The handlers go on; a later failure still reaches the 'error' handlers.
        receiving.catch(() => undefined);
        return send(response, 202, PENDING_BODY);
      }
      return send(response, 200, OK_BODY);
    } catch (error) {
      // Details go to the 'error' handlers; the log line names the delivery only.
      const count = (error as { errors?: unknown[] }).errors?.length ?? 1;
      log.error(`${count} webhook handler(s) failed for "${result.name}" delivery "${result.id}"`);
      return sendError(response, 500, ErrorCodes.handlerFailed, 'a webhook handler failed');
    } finally {
      clearTimeout(timer);
    }
  }

  return async function middleware(request, response, next) {
    try {
      await handle(request, response, next);
    } catch (error) {
      log.error('webhook middleware failed', error);
      sendError(response, 500, ErrorCodes.internalError, 'internal error');
    }
  };
}

/**
 * Reads the request body into one Buffer, or gives up with `TOO_LARGE` as soon as `limit` is passed (from
 * `content-length` or while streaming); the rest is then discarded unbuffered.
 */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | typeof TOO_LARGE> {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) {
    request.resume();
    return Promise.resolve(TOO_LARGE);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        request.resume(); // keep flowing with no listener: the rest is dropped, not buffered
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('request closed before its body ended'));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

function send(response: ServerResponse, status: number, body: string): void {
  if (response.headersSent || response.writableEnded || response.destroyed) return;
  response.statusCode = status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(body));
  response.end(body);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  send(response, status, JSON.stringify({ error: { code, message } }));
}

function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}
