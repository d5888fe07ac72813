import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type HasWebhooksConfig, kWebhooksConfig } from './config.js';
import { ErrorCodes } from './constants.js';
import { readDeliveryBody, receivedEvent } from './delivery.js';
import { type DeliveryHead, readDeliveryHead } from './delivery-head.js';
import { refusalError } from './errors.js';
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
/** An early answer waits at most this long for the next chunk of an unread body (nginx's `lingering_timeout`). */
const LINGER_IDLE_MS = 5_000;
/** ...and at most this long in all, once the answer says `connection: close` (nginx's `lingering_time`). */
const LINGER_MAX_MS = 30_000;

/**
 * Sockets whose answer said `connection: close`, each with the function that marks them as still receiving.
 * Requests a client pipelined behind such an answer can never be answered, so they are read and dropped.
 */
const closing = new WeakMap<Socket, () => void>();

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
 * | body still arriving or handlers still running `timeout` after the request arrived (they go on) | 202 | `{"ok":true,"pending":true}` |
 *
 * Error bodies are `{"error":{"code","message"}}` and never hold the secret, the signature or handler
 * internals. Every refused delivery (all but the 404) also goes to the `error` handlers, with the answer's
 * code, status and message. An answer given before the body is read (404, 415, 400 on headers, 413) never resets the
 * connection: an unread body up to `maxBodyBytes` is read and dropped first and the connection is kept; past
 * that the answer says `connection: close` and the connection is closed once the client has sent the rest.
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
  const { log, receive, emitError } = config;

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
      return answerEarly(
        request,
        response,
        404,
        errorBody(ErrorCodes.notFound, `no webhook route for ${request.method} "${printable(pathname)}"`),
        maxBodyBytes,
      );
    }

    const head = readDeliveryHead(request.headers, delivery);
    if (!head.ok) {
      emitError(refusalError(head.status, head.code, head.message, undefined));
      return answerEarly(request, response, head.status, errorBody(head.code, head.message), maxBodyBytes);
    }

    // The forge's limit covers the whole request, upload included: the clock starts on arrival.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, timeout, TIMED_OUT);
    });
    const delivering = deliver(request, response, head);
    try {
      if ((await Promise.race([delivering, timedOut])) === TIMED_OUT) {
        // Reading, verifying and the handlers go on; what they end with reaches the 'error' handlers.
        delivering.catch((error: unknown) => log.error('webhook middleware failed', error));
        send(response, 202, PENDING_BODY);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads, verifies and dispatches a delivery whose headers passed; each answer is skipped once a 202 went. */
  async function deliver(request: IncomingMessage, response: ServerResponse, head: DeliveryHead) {
    const refuse = (status: number, code: string, message: string, payload?: unknown) => {
      emitError(refusalError(status, code, message, { id: head.id, name: head.nativeName, payload }));
    };
    let body: Buffer | string | typeof TOO_LARGE;
    const parsedBody = (request as { body?: unknown }).body;
    if (typeof parsedBody === 'string' || parsedBody instanceof Uint8Array) {
      body = parsedBody as Buffer | string; // a raw-body parser (express.raw / express.text) ran first
    } else if (request.readableEnded) {
      const message =
        'the request body was parsed before the webhook middleware, mount it before body parsers';
      refuse(500, ErrorCodes.bodyConsumed, message);
      return sendError(response, 500, ErrorCodes.bodyConsumed, message);
    } else {
      try {
        body = await readBody(request, maxBodyBytes);
      } catch {
        refuse(400, ErrorCodes.bodyReadFailed, 'the request body could not be read');
        return sendError(response, 400, ErrorCodes.bodyReadFailed, 'the request body could not be read');
      }
    }
    if (body === TOO_LARGE) {
      const message = `body is larger than the limit of ${maxBodyBytes} bytes`;
      refuse(413, ErrorCodes.payloadTooLarge, message);
      return answerAndClose(request, response, 413, errorBody(ErrorCodes.payloadTooLarge, message));
    }

    const result = readDeliveryBody(body, head, delivery);
    if (!result.ok) {
      const text =
        typeof body === 'string'
          ? body
          : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString();
      refuse(result.status, result.code, result.message, result.status === 413 ? undefined : text);
      return sendError(response, result.status, result.code, result.message);
    }
    try {
      await receive(receivedEvent(result));
      return send(response, 200, OK_BODY);
    } catch (error) {
      // Details go to the 'error' handlers; the log line names the delivery only.
      const count = (error as { errors?: unknown[] }).errors?.length ?? 1;
      log.error(`${count} webhook handler(s) failed for "${result.name}" delivery "${result.id}"`);
      return sendError(response, 500, ErrorCodes.handlerFailed, 'a webhook handler failed');
    }
  }

  return async function middleware(request, response, next) {
    const receiving = request.socket === undefined ? undefined : closing.get(request.socket);
    if (receiving !== undefined) {
      request.on('data', receiving);
      return;
    }
    try {
      await handle(request, response, next);
    } catch (error) {
      log.error('webhook middleware failed', error);
      await answerEarly(
        request,
        response,
        500,
        errorBody(ErrorCodes.internalError, 'internal error'),
        maxBodyBytes,
      );
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

/**
 * Answers a request whose body may not have been read. Closing a connection while the client is still sending
 * resets it, and the client may lose the answer (RFC 9112, section 9.6): an unread body of up to `bound` bytes
 * is read and dropped first (nothing kept), so the connection stays usable; a longer one, or one that stalls,
 * gets the answer with `connection: close`, and the connection is closed once the client has sent the rest.
 */
async function answerEarly(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: string,
  bound: number,
): Promise<void> {
  if (request.complete || request.destroyed || response.headersSent) return send(response, status, body);
  const declared = Number(request.headers['content-length']);
  if (declared > bound || !(await drain(request, bound)))
    return answerAndClose(request, response, status, body);
  send(response, status, body);
}

/** Reads and drops the rest of a body: true when it ended within `bound` bytes and without a long pause. */
function drain(request: IncomingMessage, bound: number): Promise<boolean> {
  return new Promise((resolve) => {
    let size = 0;
    const idle = setTimeout(() => settle(false), LINGER_IDLE_MS).unref();
    const settle = (ended: boolean) => {
      clearTimeout(idle);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > bound) settle(false);
      else idle.refresh();
    };
    const onEnd = () => settle(true);
    const onClose = () => settle(request.complete);
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('close', onClose);
  });
}

/**
 * Sends the answer with `connection: close` and then closes cleanly: Node.js destroys the socket as soon as its
 * own end is flushed, and a destroy with the client's bytes still unread is a reset. Instead the socket stays
 * readable (the rest is read and dropped, and so are requests pipelined behind it) until the client ends its
 * side, pauses for `LINGER_IDLE_MS` or has had `LINGER_MAX_MS`; it is destroyed only after the answer is out.
 */
function answerAndClose(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: string,
): void {
  const socket = request.socket as Socket | undefined;
  if (socket === undefined || socket.destroyed || response.headersSent) {
    send(response, status, body);
    return;
  }
  let idle: NodeJS.Timeout | undefined;
  let total: NodeJS.Timeout | undefined;
  const receiving = () => idle?.refresh();
  const close = () => {
    clearTimeout(idle);
    clearTimeout(total);
    socket.off('end', close);
    if (socket.destroyed) return;
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  closing.set(socket, receiving);
  request.on('data', receiving);
  if (!request.readableFlowing) request.resume();
  response.once('finish', () => {
    // Node.js's own 'finish' listener ran first and asked the socket to destroy itself once its end is flushed.
    socket.removeListener('finish', socket.destroy);
    idle = setTimeout(close, LINGER_IDLE_MS).unref();
    total = setTimeout(close, LINGER_MAX_MS).unref();
    socket.once('end', close);
    socket.once('close', () => {
      clearTimeout(idle);
      clearTimeout(total);
    });
  });
  response.once('close', () => {
    if (!response.writableFinished) close();
  });
  response.setHeader('connection', 'close');
  send(response, status, body);
}

function send(response: ServerResponse, status: number, body: string): void {
  if (response.headersSent || response.writableEnded || response.destroyed) return;
  response.statusCode = status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(body));
  response.end(body);
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  send(response, status, errorBody(code, message));
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}
