/**
 * `readDelivery`: the pure, I/O-free check of one webhook delivery, shared by the Node middleware and the
 * Lambda ingest so that both answer identically.
 */
import { DEFAULT_MAX_BODY_BYTES, ErrorCodes } from './constants.js';
import {
  type Forge,
  type ForgePreset,
  resolvePreset,
  routeForgeEvent,
  type SignatureScheme,
  type SignatureSource,
} from './forges.js';
import { checkSecret } from './hmac.js';
import {
  checkVerifyWith,
  DEFAULT_TOLERANCE_SECONDS,
  matchStandard,
  readStandardHead,
  type StandardHeaderNames,
  standardKeys,
} from './standard.js';
import type {
  DeliveryFailureStatus,
  DeliveryOptions,
  DeliveryRequest,
  DeliveryResult,
  ReceivedEvent,
  Secret,
} from './types.js';
import { schemeMatchIndex } from './verify.js';

/** Options of `readDelivery` with every default applied and every field checked. Internal. */
export interface ResolvedDeliveryOptions {
  readonly secret: Secret;
  readonly forge: Forge;
  /** Event name headers, lowercase, first present wins. */
  readonly eventHeaders: readonly string[];
  /** Delivery id headers, lowercase, first present wins. */
  readonly deliveryHeaders: readonly string[];
  /** Signature headers, lowercase, with their schemes. */
  readonly signatures: readonly SignatureSource[];
  readonly allowSha1: boolean;
  readonly maxBodyBytes: number;
  readonly requireDeliveryId: boolean;
  /** The Standard Webhooks header sets of the preset (none for an HMAC-only one). */
  readonly standardHeaders: readonly StandardHeaderNames[];
  /** The HMAC keys of the secrets, for the Standard Webhooks scheme (empty without it). */
  readonly standardKeys: readonly Buffer[];
  /** Seconds a Standard Webhooks timestamp may be off from now. */
  readonly toleranceSeconds: number;
  /** GitLab: verify only the signing token's signature, or only the shared token; either when undefined. */
  readonly verifyWith: 'signature' | 'token' | undefined;
}

/** What the headers alone tell about a delivery that passed the header checks. Internal. */
export interface DeliveryHead {
  readonly ok: true;
  readonly id: string;
  /** The event header's value, as the forge sent it. */
  readonly nativeName: string;
  /** The signatures to check: every HMAC-SHA256 one present, else the sha1 one, else the token. */
  readonly signatures: readonly PresentSignature[];
  /** The signed id and timestamp of a Standard Webhooks delivery. */
  readonly standard?: { readonly id: string; readonly timestamp: string };
}

/** A signature header found on a delivery. Internal. */
export interface PresentSignature {
  readonly scheme: SignatureScheme;
  readonly value: string;
}

/** A refused delivery. */
export type DeliveryFailure = Extract<DeliveryResult, { ok: false }>;

const OPTION_KEYS = new Set([
  'secret',
  'forge',
  'headers',
  'allowSha1',
  'maxBodyBytes',
  'requireDeliveryId',
  'toleranceSeconds',
  'verifyWith',
]);
const HEADER_KEYS = new Set(['event', 'delivery', 'signature256', 'signature', 'token']);
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
 * With `X-Hub-Signature-256` present only sha256 is checked; a sha1 `X-Hub-Signature` is used only when it is
 * the sole signature and `allowSha1` is on. `forge` picks a preset (header names, signature scheme, event
 * mapping; see docs/forges.md): every HMAC-SHA256 signature header present must match (Gitea's bare hex
 * `X-Gitea-Signature` and its `X-Hub-Signature-256` alike), and GitLab's `X-Gitlab-Token` is compared in
 * constant time with each secret. The result's `name` and `action` are the catalogue's where the forge's
 * own event has a counterpart (`Merge Request Hook` + `open` -> `pull_request` + `opened`); `nativeName` and
 * `nativeAction` keep the forge's own. The forge's `github_app_authorization` is reported as
 * `forge_app_authorization`.
 *
 * @throws TypeError when `options` are invalid (a programming error, not a bad delivery).
 * @example
 * ```ts
 * const result = readDelivery({ headers: event.headers, body: rawBody }, { secret, forge: 'gitlab' });
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
  const preset = resolvePreset(options.forge);
  const event = headerName(headers.event, 'event');
  const delivery = headerName(headers.delivery, 'delivery');
  const secret = frozenSecret(checkSecret(options.secret));
  const verifyWith = checkVerifyWith(options.verifyWith, preset);
  const resolved: ResolvedDeliveryOptions = {
    secret,
    forge: preset.forge,
    eventHeaders: event === undefined ? preset.eventHeaders : [event],
    deliveryHeaders: delivery === undefined ? preset.deliveryHeaders : [delivery],
    signatures: signatureSources(preset, headers),
    allowSha1: flag(options.allowSha1, true, 'allowSha1'),
    maxBodyBytes: positiveInteger(options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 'maxBodyBytes'),
    requireDeliveryId: flag(options.requireDeliveryId, true, 'requireDeliveryId'),
    standardHeaders: verifyWith === 'token' ? [] : preset.standardHeaders,
    standardKeys: preset.standardHeaders.length > 0 && verifyWith !== 'token' ? standardKeysOf(secret) : [],
    toleranceSeconds: positiveInteger(
      options.toleranceSeconds,
      DEFAULT_TOLERANCE_SECONDS,
      'toleranceSeconds',
    ),
    verifyWith,
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
  // A preset without an event header (Standard Webhooks) reads the event from the body's `type`.
  const nativeName = options.eventHeaders.length === 0 ? '' : firstHeader(headers, options.eventHeaders);
  if (nativeName === undefined) return missing(options.eventHeaders[0] as string);
  const id = firstHeader(headers, options.deliveryHeaders);
  if (id === undefined && options.requireDeliveryId) return missing(options.deliveryHeaders[0] as string);
  if (options.standardHeaders.length > 0) {
    const standard = readStandardHead(
      (name) => readHeader(headers, name),
      options.standardHeaders,
      options.toleranceSeconds,
    );
    if (standard?.ok === false) return failure(standard.status, standard.code, standard.message);
    if (standard !== undefined) {
      const signatures: PresentSignature[] = [{ scheme: 'standard', value: standard.signature }];
      return { ok: true, id: id ?? standard.id, nativeName, signatures, standard };
    }
    // Standard Webhooks only (or GitLab required to sign): no signature header is a missing one.
    const tokenAllowed =
      options.verifyWith !== 'signature' && options.signatures.some((s) => s.scheme === 'token');
    if (!tokenAllowed) return missing((options.standardHeaders[0] as StandardHeaderNames).signature);
  }

  let sha256: PresentSignature[] | undefined;
  let sha1: PresentSignature | undefined;
  let sha1Header: string | undefined;
  let token: PresentSignature | undefined;
  for (const source of options.signatures) {
    const value = readHeader(headers, source.header);
    if (source.scheme === 'sha1') sha1Header ??= source.header;
    if (value === undefined) continue;
    const present: PresentSignature = { scheme: source.scheme, value };
    if (source.scheme === 'sha1') sha1 ??= present;
    else if (source.scheme === 'token') token ??= present;
    else if (sha256 === undefined) sha256 = [present];
    else sha256.push(present);
  }
  let signatures: readonly PresentSignature[];
  if (sha256 !== undefined) {
    signatures = sha256; // never downgraded to sha1 when a sha256 signature is present
  } else if (sha1 !== undefined) {
    if (!options.allowSha1) {
      const primary = options.signatures.find((source) => source.scheme !== 'sha1') as SignatureSource;
      return failure(
        400,
        ErrorCodes.missingHeader,
        `missing "${primary.header}" header ("${sha1Header}" sha1 signatures are disabled)`,
      );
    }
    signatures = [sha1];
  } else if (token !== undefined) {
    signatures = [token];
  } else {
    return missing((options.signatures[0] as SignatureSource).header);
  }
  return { ok: true, id: id ?? '', nativeName, signatures };
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
  let verified = head.signatures.length > 0;
  // The position in the secret list of the secret that proved the first signature (every one must match).
  let secretIndex = -1;
  for (const signature of head.signatures) {
    let index = -1;
    if (signature.scheme === 'standard') {
      // The id and timestamp are signed with the body: an empty body is then a JSON matter, answered below.
      const { id, timestamp } = head.standard ?? { id: '', timestamp: '' };
      index = matchStandard(options.standardKeys, id, timestamp, rawBody, signature.value);
    }
    // An HMAC over no bytes proves nothing about the delivery; a token says nothing about the body anyway.
    else if (signature.scheme !== 'token' && rawBody.byteLength === 0) index = -1;
    else index = schemeMatchIndex(options.secret, signature.scheme, signature.value, rawBody);
    if (index < 0) verified = false;
    else if (secretIndex < 0) secretIndex = index;
  }
  if (!verified) {
    const scheme = head.signatures[0]?.scheme;
    const what =
      scheme === 'token'
        ? 'token does not match'
        : scheme === 'standard'
          ? 'signature does not match the id, timestamp and body'
          : 'signature does not match the body';
    return failure(401, ErrorCodes.invalidSignature, what);
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
  let nativeName = head.nativeName;
  if (options.eventHeaders.length === 0) {
    // The Standard Webhooks payload convention: `type` names the event (`contact.created`).
    const type = (payload as { type?: unknown }).type;
    if (typeof type !== 'string' || type.length === 0) {
      return failure(400, ErrorCodes.invalidJson, 'body has no "type" string naming the event');
    }
    nativeName = type;
  }
  const route = routeForgeEvent(options.forge, nativeName, payload);
  return {
    ok: true,
    id: head.id,
    name: route.name,
    action: route.action,
    forge: options.forge,
    nativeName,
    nativeAction: route.nativeAction,
    payload,
    rawBody,
    secretIndex,
  };
}

/**
 * The event a verified delivery is dispatched as: `{ id, name, payload }` for the generic preset (as before
 * presets), plus the mapped `action`, `forge` and the forge's own names for any other. Internal.
 */
export function receivedEvent(result: Extract<DeliveryResult, { ok: true }>): ReceivedEvent {
  const { id, name, payload } = result;
  if (result.forge === 'generic') return { id, name, payload };
  const { action, forge, nativeName, nativeAction } = result;
  return { id, name, action, forge, nativeName, nativeAction, payload };
}

/**
 * Reads one header case-insensitively; the first value of a repeated header; `undefined` when absent, empty or
 * not a string (a header map built from a JSON event can hold anything). Own properties only, so that nothing
 * inherited (a header map with another prototype) passes for a header. Internal.
 */
export function readHeader(headers: DeliveryRequest['headers'], name: string): string | undefined {
  let value: unknown = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (Array.isArray(value)) value = value[0];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The Standard Webhooks keys of the secrets; a `whsec_` secret that is not base64 is a configuration error. */
function standardKeysOf(secret: Secret): readonly Buffer[] {
  try {
    return standardKeys(secret);
  } catch (error) {
    throw new TypeError(`"secret": ${(error as Error).message}`);
  }
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

function headerName(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`"headers.${field}" must be a non-empty string`);
  }
  return value.toLowerCase();
}

/** The first of `names` present on the request. */
function firstHeader(headers: DeliveryRequest['headers'], names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = readHeader(headers, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The preset's signature sources with the explicit header options applied: `signature256` replaces its
 * HMAC-SHA256 headers (keeping the preset's scheme), `signature` its sha1 header, `token` its token header.
 */
function signatureSources(preset: ForgePreset, headers: NonNullable<DeliveryOptions['headers']>) {
  let sources = preset.signatures;
  const overrides: [
    field: 'signature256' | 'signature' | 'token',
    test: (scheme: SignatureScheme) => boolean,
  ][] = [
    ['signature256', (scheme) => scheme === 'sha256' || scheme === 'hex-sha256'],
    ['signature', (scheme) => scheme === 'sha1'],
    ['token', (scheme) => scheme === 'token'],
  ];
  for (const [field, test] of overrides) {
    const header = headerName(headers[field], field);
    if (header === undefined) continue;
    const first = sources.find((source) => test(source.scheme));
    if (first === undefined) {
      throw new TypeError(`"headers.${field}" does not apply to forge "${preset.forge}"`);
    }
    const replaced: SignatureSource[] = [];
    for (const source of sources) {
      if (source === first) replaced.push({ header, scheme: first.scheme });
      else if (!test(source.scheme)) replaced.push(source);
    }
    sources = replaced;
  }
  return sources;
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
