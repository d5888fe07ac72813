import { redactBody, redactHeaders, redactSecrets, redactUrl } from './redact.js';
import type { Response } from './response.js';
import type { HttpRequest, Logger } from './types.js';

/** Whether `OAUTH_DEBUG` is `true` (case-insensitive). Read once, when the library loads. */
export const OAUTH_DEBUG: boolean = (process.env.OAUTH_DEBUG ?? '').trim().toLowerCase() === 'true';

/** The default logger: one line per message on standard output. */
export const stdoutLogger: Logger = {
  info(message: string): void {
    process.stdout.write(`${message}\n`);
  },
};

function contentTypeOf(headers: Record<string, string>): string | undefined {
  return headers['content-type']?.split(';')[0]?.trim().toLowerCase();
}

function bodyText(body: HttpRequest['body']): string {
  if (body === undefined) return '';
  return typeof body === 'string' ? body : new TextDecoder().decode(body);
}

/**
 * Writes redacted debug lines for requests and responses: `Authorization` and cookie values, values of
 * `config.filteredDebugKeys` in bodies and query strings, and every known secret become the filtered label.
 */
export class DebugLog {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  #write(line: string, secrets: ReadonlyArray<string | undefined>): void {
    this.#logger.info(redactSecrets(line, secrets));
  }

  /** Logs one outgoing request. */
  request(request: HttpRequest, secrets: ReadonlyArray<string | undefined>): void {
    this.#write(`request: ${request.method} ${redactUrl(request.url)}`, secrets);
    this.#write(`request headers: ${JSON.stringify(redactHeaders(request.headers))}`, secrets);
    const body = bodyText(request.body);
    if (body !== '') {
      this.#write(`request body: ${redactBody(body, contentTypeOf(request.headers))}`, secrets);
    }
  }

  /** Logs one response. */
  response(response: Response, secrets: ReadonlyArray<string | undefined>): void {
    this.#write(
      `response: ${response.status} ${response.url === undefined ? '' : redactUrl(response.url)}`,
      secrets,
    );
    this.#write(`response headers: ${JSON.stringify(redactHeaders(response.headers))}`, secrets);
    if (response.body !== '') {
      this.#write(`response body: ${redactBody(response.body, response.contentType)}`, secrets);
    }
  }

  /** Logs a failed request (no response). */
  failure(request: HttpRequest, error: Error, secrets: ReadonlyArray<string | undefined>): void {
    this.#write(`request failed: ${request.method} ${redactUrl(request.url)}: ${error.name}`, secrets);
  }
}
