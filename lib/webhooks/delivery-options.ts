/**
 * The options of `readDelivery`: defaults applied and every field checked once per options object, the
 * preset's header names and signature sources with the explicit header options over them.
 */
import { DEFAULT_MAX_BODY_BYTES } from './constants.js';
import {
  type Forge,
  type ForgePreset,
  resolvePreset,
  type SignatureScheme,
  type SignatureSource,
} from './forges.js';
import { checkSecret } from './hmac.js';
import {
  checkVerifyWith,
  DEFAULT_TOLERANCE_SECONDS,
  type StandardHeaderNames,
  standardKeys,
} from './standard.js';
import type { DeliveryOptions, Secret } from './types.js';

/** Options of `readDelivery` with every default applied and every field checked. Internal. */
export interface ResolvedDeliveryOptions {
  readonly secret: Secret;
  readonly forge: Forge;
  /** Event name headers, lowercase, first present wins. */
  readonly eventHeaders: readonly string[];
  /** Delivery id headers, lowercase, first present wins. */
  readonly deliveryHeaders: readonly string[];
  /** Hook identity headers, lowercase, first present wins (the preset's). */
  readonly hookHeaders: readonly string[];
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
    hookHeaders: preset.hookHeaders,
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

function headerName(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`"headers.${field}" must be a non-empty string`);
  }
  return value.toLowerCase();
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
