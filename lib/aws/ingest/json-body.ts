import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';

/** `@middy/http-json-body-parser`'s own test of a JSON content type. */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;
/**
 * Whether a body might hold a key the protected parse refuses (`__proto__`, `constructor`), or hide one in an
 * escape. Three substring searches: about fifteen times faster than one regular expression with alternatives.
 */
const maybeForbidden = (body: string) =>
  body.includes('__proto__') || body.includes('constructor') || body.includes('\\u');

/** The body text a verified delivery came with, and what the signature check parsed it to (by event). */
const parsedBodies = new WeakMap<object, { text: string; payload: unknown }>();

/**
 * Keeps what the signature check parsed a delivery's body text to, so {@link jsonBody} does not parse it again
 * (only where its fast path would have parsed it the same way).
 */
export function keepParsedBody(event: object, text: string, payload: unknown): void {
  parsedBodies.set(event, { text, payload });
}

/**
 * `@middy/http-json-body-parser` with a fast path: a JSON body with no `__proto__`, no `constructor` and no
 * `\u` escape (which could spell either) is parsed with a plain `JSON.parse`, which gives what the protected
 * parse gives for it, about four times faster; every other request (another content type, base64, malformed
 * JSON, a suspect key) goes through the middleware itself, with its 415 and 422 answers. On the fast path a
 * body the signature check already parsed ({@link keepParsedBody}) is not parsed again.
 */
export function jsonBody(): middy.MiddlewareObj<{
  headers?: Record<string, string | undefined>;
  body?: unknown;
  isBase64Encoded?: boolean;
}> {
  const parser = httpJsonBodyParser();
  return {
    before: (request) => {
      const { event } = request;
      const contentType = event.headers?.['content-type'] ?? event.headers?.['Content-Type'];
      if (
        typeof event.body === 'string' &&
        event.isBase64Encoded !== true &&
        contentType !== undefined &&
        JSON_CONTENT_TYPE.test(contentType) &&
        !maybeForbidden(event.body)
      ) {
        const kept = parsedBodies.get(event);
        parsedBodies.delete(event);
        if (kept !== undefined && kept.text === event.body) {
          event.body = kept.payload;
          return;
        }
        try {
          event.body = JSON.parse(event.body);
          return;
        } catch {
          // Malformed: the middleware answers it.
        }
      }
      return parser.before?.(request as never);
    },
  };
}
