/**
 * The Standard Webhooks signature scheme (also Svix's, under `svix-*` header names, and GitLab's with a signing
 * token): `webhook-signature: v1,<base64>`, an HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`
 * keyed with the base64-decoded `whsec_` secret, and a timestamp that must be within a tolerance of now.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCodes } from './constants.js';
import type { ForgePreset } from './forges.js';
import type { Secret } from './types.js';

/** Default timestamp tolerance: 5 minutes either way, as the scheme recommends. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** The prefix of a Standard Webhooks secret. */
export const STANDARD_SECRET_PREFIX = 'whsec_';

/** The three headers of one Standard Webhooks delivery, lowercase. */
export interface StandardHeaderNames {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

/** `webhook-*`: the Standard Webhooks names (GitLab sends these too). */
export const STANDARD_HEADERS: StandardHeaderNames = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
};

/** `svix-*`: the same scheme under Svix's names. */
export const SVIX_HEADERS: StandardHeaderNames = {
  id: 'svix-id',
  timestamp: 'svix-timestamp',
  signature: 'svix-signature',
};

// Strict, padded base64 (what `whsec_` secrets and `v1,` signatures are written in).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// A 32-byte HMAC-SHA256 digest in padded base64: 43 characters and `=`.
const DIGEST_BASE64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const TIMESTAMP = /^[0-9]{1,15}$/;

/** Whether `text` is strict, padded, non-empty base64. */
export function isBase64(text: string): boolean {
  return text.length > 0 && BASE64.test(text);
}

/**
 * The HMAC key of a secret: a `whsec_<base64>` secret's decoded bytes; any other secret is decoded too when it
 * is valid base64 (as the scheme's own libraries read a bare secret), else its UTF-8 bytes are the key (raw).
 *
 * @throws TypeError when a `whsec_` secret's rest is not base64 (the message names no secret).
 */
export function standardKey(secret: string): Buffer {
  if (secret.startsWith(STANDARD_SECRET_PREFIX)) {
    const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
    if (!isBase64(encoded)) {
      throw new TypeError(`a "${STANDARD_SECRET_PREFIX}" secret must be followed by base64`);
    }
    return Buffer.from(encoded, 'base64');
  }
  return isBase64(secret) ? Buffer.from(secret, 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * A `whsec_` secret derived from `text` (the base64 of its SHA-256): how the local stack gives its Standard
 * Webhooks sources a secret of the scheme's form from its one development secret. Without `text`, a new random
 * 32-byte secret.
 */
export function standardSecret(text?: string): string {
  const key = text === undefined ? randomBytes(32) : createHash('sha256').update(text, 'utf8').digest();
  return `${STANDARD_SECRET_PREFIX}${key.toString('base64')}`;
}

/** The keys of every secret, in order. @throws TypeError as {@link standardKey}. */
export function standardKeys(secret: Secret): readonly Buffer[] {
  return typeof secret === 'string' ? [standardKey(secret)] : secret.map(standardKey);
}

/** The HMAC-SHA256 of `id.timestamp.body` under `key`, as raw bytes. */
export function standardDigest(
  key: Buffer,
  id: string,
  timestamp: string,
  body: string | Uint8Array,
): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body).digest();
}

/** The `v1,<base64>` signature of `id.timestamp.body` under a secret (see {@link standardKey}). */
export function standardSignature(
  secret: string,
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
): string {
  return `v1,${standardDigest(standardKey(secret), id, String(timestamp), body).toString('base64')}`;
}

/**
 * The digests a signature header carries: every well-formed `v1,<base64 of 32 bytes>` entry of the
 * space-separated list; other versions and malformed entries are skipped.
 */
export function parseStandardSignatures(header: string): Buffer[] {
  const digests: Buffer[] = [];
  for (const entry of header.split(' ')) {
    if (entry.length === 47 && entry.startsWith('v1,') && DIGEST_BASE64.test(entry.slice(3))) {
      digests.push(Buffer.from(entry.slice(3), 'base64'));
    }
  }
  return digests;
}

/**
 * Which key (by position) signed `id.timestamp.body` with one of the header's `v1` signatures, or -1. Every
 * key is computed and every signature compared with `timingSafeEqual`, so the time taken does not tell
 * which key matched.
 */
export function matchStandard(
  keys: readonly Buffer[],
  id: string,
  timestamp: string,
  body: string | Uint8Array,
  header: string,
): number {
  const given = parseStandardSignatures(header);
  if (given.length === 0) return -1;
  let match = -1;
  for (const [index, key] of keys.entries()) {
    const expected = standardDigest(key, id, timestamp, body);
    for (const digest of given) {
      if (timingSafeEqual(expected, digest) && match === -1) match = index;
    }
  }
  return match;
}

/** How a timestamp header compares with now. */
export type TimestampCheck =
  | { readonly ok: true; readonly seconds: number }
  | { readonly ok: false; readonly reason: 'malformed' }
  | {
      readonly ok: false;
      readonly reason: 'stale' | 'future';
      readonly by: number;
      readonly tolerance: number;
    };

/**
 * Checks a timestamp header (integer Unix seconds) against now: more than `tolerance` seconds in the past is
 * `stale`, more than `tolerance` in the future is `future` (`by`: how many seconds beyond now it is).
 */
export function checkTimestamp(value: string, tolerance: number, nowMs = Date.now()): TimestampCheck {
  if (!TIMESTAMP.test(value)) return { ok: false, reason: 'malformed' };
  const seconds = Number(value);
  const now = Math.floor(nowMs / 1000);
  if (now - seconds > tolerance) return { ok: false, reason: 'stale', by: now - seconds, tolerance };
  if (seconds - now > tolerance) return { ok: false, reason: 'future', by: seconds - now, tolerance };
  return { ok: true, seconds };
}

/** `612 s (10 min 12 s)`: a duration for a message. */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${seconds} s (${minutes} min ${seconds % 60} s)`;
  const hours = Math.floor(minutes / 60);
  return hours < 48
    ? `${seconds} s (${hours} h ${minutes % 60} min)`
    : `${seconds} s (${Math.floor(hours / 24)} days)`;
}

/** The message of a refused timestamp: how far off it is, and the tolerance. */
export function timestampMessage(check: Extract<TimestampCheck, { ok: false }>): string {
  if (check.reason === 'malformed') return 'timestamp header is not an integer number of Unix seconds';
  const where = check.reason === 'stale' ? 'old' : 'in the future';
  return `timestamp is ${formatSeconds(check.by)} ${where}, beyond the tolerance of ${formatSeconds(check.tolerance)}`;
}

/**
 * The name and action a Standard Webhooks event type routes as: the part before the first dot is the event,
 * the rest the action (`contact.created` -> `contact` + `created`; `invoice.payment.failed` -> `invoice` +
 * `payment.failed`; `ping` -> `ping`, no action).
 */
export function splitEventType(type: string): { name: string; action: string | undefined } {
  const dot = type.indexOf('.');
  if (dot <= 0 || dot === type.length - 1) return { name: type, action: undefined };
  return { name: type.slice(0, dot), action: type.slice(dot + 1) };
}

/** The Standard Webhooks headers found on a delivery, or why they are refused. */
export type StandardHead =
  | {
      readonly ok: true;
      readonly id: string;
      readonly timestamp: string;
      readonly signature: string;
      /** The header the signed id came from (`webhook-id`, `svix-id`). */
      readonly idHeader: string;
    }
  | {
      readonly ok: false;
      readonly status: 400 | 401;
      readonly reason: 'missing' | 'malformed' | 'stale' | 'future';
      /** The stable error code: `missing_header`, `invalid_header`, `stale_timestamp`, `future_timestamp`. */
      readonly code: string;
      readonly header: string;
      readonly message: string;
    };

/**
 * Reads the first of `sets` whose signature header is present: its id and timestamp headers must be there too,
 * and the timestamp within `tolerance` seconds of now. `undefined` when no set's signature header is present.
 */
export function readStandardHead(
  read: (name: string) => string | undefined,
  sets: readonly StandardHeaderNames[],
  tolerance: number,
): StandardHead | undefined {
  for (const set of sets) {
    const signature = read(set.signature);
    if (signature === undefined) continue;
    const id = read(set.id);
    if (id === undefined) {
      return {
        ok: false,
        status: 400,
        reason: 'missing',
        code: ErrorCodes.missingHeader,
        header: set.id,
        message: `missing "${set.id}" header`,
      };
    }
    const timestamp = read(set.timestamp);
    if (timestamp === undefined) {
      const message = `missing "${set.timestamp}" header`;
      const code = ErrorCodes.missingHeader;
      return { ok: false, status: 400, reason: 'missing', code, header: set.timestamp, message };
    }
    const check = checkTimestamp(timestamp, tolerance);
    if (!check.ok) {
      const message = `"${set.timestamp}" ${timestampMessage(check).replace(/^timestamp (header )?/, '')}`;
      const status = check.reason === 'malformed' ? 400 : 401;
      const code = TIMESTAMP_CODES[check.reason];
      return { ok: false, status, reason: check.reason, code, header: set.timestamp, message };
    }
    return { ok: true, id, timestamp, signature, idHeader: set.id };
  }
  return undefined;
}

const TIMESTAMP_CODES = {
  malformed: ErrorCodes.invalidHeader,
  stale: ErrorCodes.staleTimestamp,
  future: ErrorCodes.futureTimestamp,
} as const;

/**
 * Checks the `verifyWith` option: only for a preset with both a Standard Webhooks signature and a token (GitLab).
 *
 * @throws TypeError naming the option.
 */
export function checkVerifyWith(value: unknown, preset: ForgePreset): 'signature' | 'token' | undefined {
  if (value === undefined) return undefined;
  const both = preset.standardHeaders.length > 0 && preset.signatures.some((s) => s.scheme === 'token');
  if (!both) throw new TypeError(`"verifyWith" does not apply to forge "${preset.forge}"`);
  if (value !== 'signature' && value !== 'token')
    throw new TypeError('"verifyWith" must be "signature" or "token"');
  return value;
}
