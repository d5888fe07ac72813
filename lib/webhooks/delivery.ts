/**
 * `readDelivery`: the pure, I/O-free check of one webhook delivery, shared by the Node middleware and the
 * Lambda ingest so that both answer identically.
 */
import { DEFAULT_MAX_BODY_BYTES, DefaultHeaders, ErrorCodes } from './constants.js';
import { neutralEventName } from './event-names.js';
import { checkSecret } from './hmac.js';
import type {
  DeliveryFailureStatus,
  DeliveryOptions,
  DeliveryRequest,
  DeliveryResult,
  Secret,
  SignatureAlgorithm,
} from './types.js';
import { matchesDigest, parseSignature } from './verify.js';

/** Options of `readDelivery` with every default applied and every field checked. Internal. */
export interface ResolvedDeliveryOptions {
  readonly secret: Secret;
  readonly eventHeader: string;
  readonly deliveryHeader: string;
  readonly signature256Header: string;
  readonly signatureHeader: string;
  readonly allowSha1: boolean;
  readonly maxBodyBytes: number;
  readonly requireDeliveryId: boolean;
}

/** What the headers alone tell about a delivery that passed the header checks. Internal. */
export interface DeliveryHead {
  readonly ok: true;
  readonly id: string;
  readonly name: string;
  readonly signature: string;
  readonly algorithm: SignatureAlgorithm;
}

/** A refused delivery. */
export type DeliveryFailure = Extract<DeliveryResult, { ok: false }>;

const OPTION_KEYS = new Set(['secret', 'headers', 'allowSha1', 'maxBodyBytes', 'requireDeliveryId']);
const HEADER_KEYS = new Set(['event', 'delivery', 'signature256', 'signature']);
const resolvedCache = new WeakMap<object, ResolvedDeliveryOptions>();

/**
 * Checks one delivery: method, content type, headers, body size, signature over the exact raw bytes, and
 * only then JSON. Never throws for anything the sender controls; returns the status, a stable code and a
 * message (which never contains the secret or the signature) instead.
 *
 * | Check (in this order) | Status | Code |
 * |---|---|---|
 * | `method` given and not `POST` | 404 | `not_found` |
 * | content type not `application/json` (parameters allowed) | 415 | `unsupported_media_type` |
 * | event, delivery or signature header missing | 400 | `missing_header` |
 * | body over `maxBodyBytes` | 413 | `payload_too_large` |
 * | no secret matches the signature | 401 | `invalid_signature` |
 * | body not a JSON object | 400 | `invalid_json` |
 *
 * When `X-Hub-Signature-256` is present only sha256 is checked; a sha1 `X-Hub-Signature` is used only when it
 * is the sole signature and `allowSha1` is on. The forge's `github_app_authorization` is reported as
 * `forge_app_authorization`.
 *
 * @throws TypeError when `options` are invalid (a programming error, not a bad delivery).
 * @example
 * ```ts
 * const result = readDelivery({ headers: event.headers, body: rawBody }, { secret });
 * if (!result.ok) return { statusCode: result.status, body: JSON.stringify({ error: result }) };
 * ```
 * @see https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
 */
export function readDelivery(request: DeliveryRequest, options: DeliveryOptions): DeliveryResult {
  const resolved = resolveDeliveryOptions(options);
  if (request === null || typeof request !== 'object') throw new TypeError('"request" must be an object');
  if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
    return failure(404, ErrorCodes.notFound, `method "${safe(request.method)}" is not allowed, use "POST"`);
  }
  const head = readDeliveryHead(request.headers ?? {}, resolved);
  if (!head.ok) return head;
  return readDeliveryBody(request.body, head, resolved);
}

/**
 * Applies defaults to and checks `DeliveryOptions`, once per options object. Internal.
 *
 * @throws TypeError naming the field.
 */
export function resolveDeliveryOptions(options: DeliveryOptions): ResolvedDeliveryOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  const cached = resolvedCache.get(options);
  if (cached !== undefined) return cached;
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  const headers = options.headers ?? {};
  for (const key of Object.keys(headers)) {
    if (!HEADER_KEYS.has(key)) throw new TypeError(`unknown option "headers.${key}"`);
  }
  const resolved: ResolvedDeliveryOptions = {
    secret: frozenSecret(checkSecret(options.secret)),
    eventHeader: headerName(headers.event, DefaultHeaders.event, 'event'),
    deliveryHeader: headerName(headers.delivery, DefaultHeaders.delivery, 'delivery'),
    signature256Header: headerName(headers.signature256, DefaultHeaders.signature256, 'signature256'),
    signatureHeader: headerName(headers.signature, DefaultHeaders.signature, 'signature'),
    allowSha1: flag(options.allowSha1, true, 'allowSha1'),
    maxBodyBytes: positiveInteger(options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 'maxBodyBytes'),
    requireDeliveryId: flag(options.requireDeliveryId, true, 'requireDeliveryId'),
  };
  resolvedCache.set(options, resolved);
  return resolved;
}

/**
 * The header checks of `readDelivery` (content type, event, delivery, signature), which the middleware runs
 * before reading the body. Internal.
 */
export function readDeliveryHead(
  headers: DeliveryRequest['headers'],
  options: ResolvedDeliveryOptions,
): DeliveryHead | DeliveryFailure {
  const contentType = readHeader(headers, 'content-type');
  if (!isJson(contentType)) {
    const type = contentType === undefined ? 'none' : `"${safe(mediaType(contentType))}"`;
    const hint = contentType !== undefined && mediaType(contentType) === 'application/x-www-form-urlencoded';
    return failure(
      415,
      ErrorCodes.unsupportedMediaType,
      `content type ${type} is not supported, use "application/json"${hint ? ' in the webhook settings' : ''}`,
    );
  }
  const rawName = readHeader(headers, options.eventHeader);
  if (rawName === undefined) return missing(options.eventHeader);
  const id = readHeader(headers, options.deliveryHeader);
  if (id === undefined && options.requireDeliveryId) return missing(options.deliveryHeader);

  let signature = readHeader(headers, options.signature256Header);
  let algorithm: SignatureAlgorithm = 'sha256';
  if (signature === undefined) {
    signature = readHeader(headers, options.signatureHeader);
    if (signature === undefined) return missing(options.signature256Header);
    if (!options.allowSha1) {
      return failure(
        400,
        ErrorCodes.missingHeader,
        `missing "${options.signature256Header}" header ("${options.signatureHeader}" sha1 signatures are disabled)`,
      );
    }
    algorithm = 'sha1';
  }
  const name = neutralEventName(rawName);
  return { ok: true, id: id ?? '', name, signature, algorithm };
}

/** The body checks of `readDelivery` (size, signature, JSON), after `readDeliveryHead`. Internal. */
export function readDeliveryBody(
  body: Uint8Array | string,
  head: DeliveryHead,
  options: ResolvedDeliveryOptions,
): DeliveryResult {
  let rawBody: Buffer;
  if (typeof body === 'string') {
    rawBody = Buffer.from(body, 'utf8');
  } else if (body instanceof Uint8Array) {
    rawBody = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else {
    rawBody = Buffer.alloc(0);
  }
  if (rawBody.byteLength > options.maxBodyBytes) {
    return failure(
      413,
      ErrorCodes.payloadTooLarge,
      `body is larger than the limit of ${options.maxBodyBytes} bytes`,
    );
  }
  const parsed = parseSignature(head.signature);
  if (
    parsed === undefined ||
    parsed.algorithm !== head.algorithm ||
    rawBody.byteLength === 0 ||
    !matchesDigest(options.secret, parsed.algorithm, parsed.expected, rawBody)
  ) {
    return failure(401, ErrorCodes.invalidSignature, 'signature does not match the body');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(typeof body === 'string' ? body : rawBody.toString('utf8'));
  } catch {
    return failure(400, ErrorCodes.invalidJson, 'body is not valid JSON');
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return failure(400, ErrorCodes.invalidJson, 'body must be a JSON object');
  }
  return { ok: true, id: head.id, name: head.name, payload, rawBody };
}

/**
 * Reads one header case-insensitively; the first value of a repeated header; `undefined` when absent or
 * empty. Internal.
 */
export function readHeader(headers: DeliveryRequest['headers'], name: string): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    for (const key in headers) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (typeof value !== 'string') value = value?.[0];
  return value === undefined || value.length === 0 ? undefined : value;
}

/** A copy of a secret list, so that later changes to the caller's array do not change what verifies. */
function frozenSecret(secret: Secret): Secret {
  return typeof secret === 'string' ? secret : Object.freeze([...secret]);
}

function failure(status: DeliveryFailureStatus, code: string, message: string): DeliveryFailure {
  return { ok: false, status, code, message };
}

function missing(header: string): DeliveryFailure {
  return failure(400, ErrorCodes.missingHeader, `missing "${header}" header`);
}

function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && mediaType(contentType) === 'application/json';
}

/** Sender-controlled text for a message: printable ASCII only, at most 64 characters. */
function safe(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}

function headerName(value: unknown, fallback: string, field: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`"headers.${field}" must be a non-empty string`);
  }
  return value.toLowerCase();
}

function flag(value: unknown, fallback: boolean, field: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`"${field}" must be a boolean`);
  return value;
}

function positiveInteger(value: unknown, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`"${field}" must be a positive integer`);
  }
  return value;
}
