import { bodyExcerpt, redactSecrets, redactText, secretsOf } from './redact.js';
import type { Response } from './response.js';

/** Base class of every error the OAuth 2.0 client library throws on purpose. */
export class OAuth2BaseError extends Error {
  /** A stable code: the provider's `error` for {@link OAuth2Error}, the library's own code otherwise. */
  readonly code: string | undefined;

  constructor(message: string, options: { code?: string | undefined; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OAuth2BaseError';
    this.code = options.code;
  }
}

function errorFields(parsed: unknown): { code?: string; description?: string } {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
  const record = parsed as Record<string, unknown>;
  const fields: { code?: string; description?: string } = {};
  if (record.error !== undefined && record.error !== null) fields.code = String(record.error);
  if (record.error_description !== undefined && record.error_description !== null) {
    fields.description = String(record.error_description);
  }
  return fields;
}

/**
 * An error response from the provider (status 400 or higher), or a response the library cannot use.
 * `code` and `description` hold the body's `error` and `error_description`; `response` is the response
 * (always, except for a {@link TokenError} raised before any request). The message is `"code: description"`
 * (after `server error <status>` for a 5xx), a newline, then an excerpt of the body (at most 200
 * characters, `…` when cut); the client secret and the request's tokens are redacted from all of it.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.2
 */
export class OAuth2Error<R extends Response | undefined = Response> extends OAuth2BaseError {
  /** The `error_description` of a standard OAuth 2.0 error body. */
  readonly description: string | undefined;
  /** The response that caused the error. */
  readonly response: R;

  /**
   * `message` replaces the `"code: description"` line; `options.code` replaces the body's `error` (a
   * subclass's own code) and `options.cause` is the underlying error.
   */
  constructor(response: R, message?: string, options: { code?: string; cause?: unknown } = {}) {
    const secrets = response === undefined ? [] : secretsOf(response);
    const fields = response === undefined ? {} : errorFields(response.parsed);
    const code = options.code ?? fields.code;
    // A server may echo the client secret or a token back in its description: it never reaches a message.
    const description =
      fields.description === undefined ? undefined : redactSecrets(fields.description, secrets);
    const lines: string[] = [];
    if (message !== undefined) lines.push(message);
    else {
      if (response !== undefined && response.status >= 500) lines.push(`server error ${response.status}`);
      if (fields.code !== undefined || description !== undefined) {
        lines.push(redactText(`${fields.code === undefined ? '' : `${fields.code}: `}${description ?? ''}`));
      }
    }
    if (response !== undefined) lines.push(bodyExcerpt(response.body, response.contentType, secrets));
    super(redactSecrets(lines.join('\n'), secrets), { code, cause: options.cause });
    this.name = 'OAuth2Error';
    this.description = description;
    this.response = response;
  }

  /** A redacted, serializable view: never a secret or token. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      description: this.description,
      status: this.response?.status,
      message: this.message,
    };
  }

  [Symbol.for('nodejs.util.inspect.custom')](
    _depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `${this.name} ${inspect({ ...this.toJSON(), stack: this.stack }, options)}`;
  }
}

/** The request never got a response: DNS, connection or TLS failure (`code` `'connection_failed'`). */
export class ConnectionError extends OAuth2BaseError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'connection_failed', cause });
    this.name = 'ConnectionError';
  }
}

/** The request took longer than `connection.timeout` (`code` `'timeout'`). */
export class TimeoutError extends OAuth2BaseError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'timeout', cause });
    this.name = 'TimeoutError';
  }
}

/**
 * A token cannot be used as asked: no token at all (`'missing_token'`), no refresh token to refresh or
 * revoke with (`'missing_refresh_token'`), or an unknown token type hint (`'invalid_token_type_hint'`).
 * An {@link OAuth2Error}: `response` is the token response when a server's answer held no usable token
 * (`getToken`), and `undefined` when the error comes before any request (`refresh()` without a refresh
 * token, `revoke()` without a token or with a bad hint, a token built by hand with no token).
 */
export class TokenError extends OAuth2Error<Response | undefined> {
  constructor(code: string, message: string, response?: Response) {
    super(response, message, { code });
    this.name = 'TokenError';
  }
}

/**
 * OpenID Connect / RFC 8414 discovery failed (`'discovery_failed'`) or the document's issuer differs from
 * the requested one (`'issuer_mismatch'`).
 */
export class DiscoveryError extends OAuth2BaseError {
  constructor(
    code: 'discovery_failed' | 'issuer_mismatch' | 'invalid_metadata',
    message: string,
    cause?: unknown,
  ) {
    super(message, { code, cause });
    this.name = 'DiscoveryError';
  }
}

/**
 * A JWT (client assertion or assertion grant) could not be signed with the configured key
 * (`code` `'signing_failed'`).
 */
export class SigningError extends OAuth2BaseError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'signing_failed', cause });
    this.name = 'SigningError';
  }
}

/**
 * A response was larger than `connection.maxResponseBytes` (`code` `'response_too_large'`): reading stopped
 * at the limit and the connection was closed. `response` holds the status and headers, never the body.
 */
export class ResponseTooLargeError extends OAuth2Error {
  override readonly code = 'response_too_large';
  /** The limit in bytes that was exceeded. */
  readonly limit: number;

  constructor(response: Response, limit: number, message: string) {
    super(response, message);
    this.name = 'ResponseTooLargeError';
    // The body was not kept: the message is exactly what the library says, with nothing appended.
    this.message = message;
    this.limit = limit;
  }
}
