import { FORM_CONTENT_TYPES, JSON_CONTENT_TYPES } from './constants.js';
import type { OAuth2Error } from './errors.js';
import { redactBody, redactHeaders, redactSecrets, redactUrl, secretsOf } from './redact.js';
import { SnakyHash, type SnakyHashClass } from './snaky-hash.js';
import type { ParsedBody, ParseOption } from './types.js';
import { parseQuery } from './url.js';

type Parser = (body: string) => unknown;

interface ParserEntry {
  parse: Parser;
  contentTypes: string[];
}

function parseJson(body: string): unknown {
  if (body.trim() === '') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

const parsers = new Map<string, ParserEntry>([
  ['json', { parse: parseJson, contentTypes: [...JSON_CONTENT_TYPES] }],
  ['query', { parse: parseQuery, contentTypes: [...FORM_CONTENT_TYPES] }],
  ['text', { parse: (body) => body, contentTypes: ['text/plain'] }],
]);

/** What a {@link Response} is built from. */
export interface ResponseInit {
  status: number;
  headers?: Headers | Record<string, string | string[] | undefined>;
  body?: string;
  /** The URL that answered. */
  url?: string;
}

/** Options of {@link Response}. */
export interface ResponseOptions {
  /** Default `'automatic'`: by content type. */
  parse?: ParseOption;
  /** Default `true`: snake-case parsed objects. */
  snaky?: boolean;
  /** Default {@link SnakyHash}. */
  snakyHashClass?: SnakyHashClass;
}

function toHeaders(init: ResponseInit['headers']): Headers {
  if (init instanceof Headers) return init;
  const headers = new Headers();
  const foreign = init as unknown as Headers | undefined;
  if (foreign !== undefined && typeof foreign.forEach === 'function') {
    // a Headers object of another fetch implementation (undici's own fetch)
    foreign.forEach((value, key) => {
      headers.append(key, value);
    });
    return headers;
  }
  for (const [k, v] of Object.entries(init ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) headers.append(k, item);
    else headers.append(k, v);
  }
  return headers;
}

const UNPARSED = Symbol('unparsed');

/**
 * A response from the provider: `status`, `headers`, `body` and the lazily `parsed` body.
 * `parsed` is a {@link SnakyHash} (snake_case keys, readable under any spelling) for a JSON object or a
 * form body, the array for a JSON array, the body string otherwise; with `snaky: false` a plain object
 * with the provider's keys. Content types are matched by type only (parameters dropped).
 */
export class Response {
  /** The HTTP status code. */
  readonly status: number;
  /** The response headers (case-insensitive). */
  readonly headers: Headers;
  /** The original body string. */
  readonly body: string;
  /** The URL that answered (after redirects), when known. */
  readonly url: string | undefined;
  /** The parse, snaky and hash-class options this response parses with. */
  readonly options: Readonly<Required<Omit<ResponseOptions, 'snakyHashClass'>>> & {
    snakyHashClass: SnakyHashClass;
  };
  /** With `raiseErrors: false`, the error of a response with status >= 400. */
  error?: OAuth2Error;
  #parsed: ParsedBody | typeof UNPARSED = UNPARSED;

  constructor(init: ResponseInit, options: ResponseOptions = {}) {
    if (!Number.isInteger(init.status)) throw new TypeError(`"status" must be an integer`);
    this.status = init.status;
    this.headers = toHeaders(init.headers);
    this.body = init.body ?? '';
    this.url = init.url;
    this.options = {
      parse: options.parse ?? 'automatic',
      snaky: options.snaky ?? true,
      snakyHashClass: options.snakyHashClass ?? SnakyHash,
    };
    if (typeof this.options.parse === 'string' && this.options.parse !== 'automatic') {
      if (!parsers.has(this.options.parse)) throw new TypeError(`"parse" names no registered parser`);
    }
  }

  /** Registers a parser for content types (the gem's `Response.register_parser`). */
  static registerParser(name: string, contentTypes: string | readonly string[], parse: Parser): void {
    if (typeof name !== 'string' || name === '') throw new TypeError(`"name" must be a non-empty string`);
    if (typeof parse !== 'function') throw new TypeError(`"parse" must be a function`);
    const types = (typeof contentTypes === 'string' ? [contentTypes] : [...contentTypes]).map((t) =>
      t.toLowerCase(),
    );
    parsers.set(name, { parse, contentTypes: types });
  }

  /** The content type without parameters, lowercase (`'application/json'`), or `undefined`. */
  get contentType(): string | undefined {
    const raw = this.headers.get('content-type');
    if (raw === null) return undefined;
    const type = raw.split(';')[0]?.trim().toLowerCase();
    return type === '' ? undefined : type;
  }

  #parser(): Parser | undefined {
    const { parse } = this.options;
    if (typeof parse === 'function') return parse;
    if (parse !== 'automatic') return parsers.get(parse)?.parse;
    const type = this.contentType;
    if (type === undefined) return undefined;
    for (const entry of parsers.values()) if (entry.contentTypes.includes(type)) return entry.parse;
    return undefined;
  }

  /** The parsed body (see the class summary). Computed once. */
  get parsed(): ParsedBody {
    if (this.#parsed !== UNPARSED) return this.#parsed;
    const parser = this.#parser();
    let value: unknown = parser ? parser(this.body) : this.body;
    if (value === null || value === undefined) value = this.body;
    if (typeof value === 'object' && !Array.isArray(value) && value !== null) {
      if (this.options.snaky) value = new this.options.snakyHashClass(value as Record<string, unknown>);
    } else if (!Array.isArray(value) && typeof value !== 'string') {
      value = this.body;
    }
    this.#parsed = value as ParsedBody;
    return this.#parsed;
  }

  /** A redacted, serializable view: never a secret or token. */
  toJSON(): Record<string, unknown> {
    const secrets = secretsOf(this);
    return {
      status: this.status,
      url: this.url === undefined ? undefined : redactSecrets(redactUrl(this.url), secrets),
      headers: JSON.parse(redactSecrets(JSON.stringify(redactHeaders(this.headers)), secrets)),
      body: redactSecrets(redactBody(this.body, this.contentType), secrets),
      ...(this.error ? { error: { code: this.error.code, description: this.error.description } } : {}),
    };
  }

  [Symbol.for('nodejs.util.inspect.custom')](
    _depth: number,
    options: object,
    inspect: (value: unknown, options: object) => string,
  ): string {
    return `Response ${inspect(this.toJSON(), options)}`;
  }
}
