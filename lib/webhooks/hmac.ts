import { createHmac } from 'node:crypto';
import { serializePayload } from './serialize.js';
import type { Secret, SignatureAlgorithm, SignaturePayload } from './types.js';

export const DIGEST_HEX_LENGTH = { sha256: 64, sha1: 40 } as const;

/**
 * Checks a secret argument and returns it; throws a `TypeError` naming the field when it is missing, empty,
 * an empty list, or holds an empty or non-string entry.
 */
export function checkSecret(secret: unknown, field = 'secret'): Secret {
  if (typeof secret === 'string') {
    if (secret.length > 0) return secret;
  } else if (Array.isArray(secret) && secret.length > 0) {
    for (const entry of secret) {
      if (typeof entry !== 'string' || entry.length === 0) {
        throw new TypeError(`"${field}" entries must be non-empty strings`);
      }
    }
    return secret as readonly string[];
  }
  throw new TypeError(`"${field}" must be a non-empty string or a non-empty array of strings`);
}

/**
 * Turns a payload argument into what the HMAC is computed over: a string (hashed as UTF-8) or the bytes
 * themselves (no copy). Objects are serialized the way the forge serializes. Missing or empty -> TypeError.
 */
export function hmacInput(payload: SignaturePayload | null | undefined): string | Uint8Array {
  if (typeof payload === 'string') {
    if (payload.length > 0) return payload;
  } else if (payload instanceof Uint8Array) {
    if (payload.byteLength > 0) return payload;
  } else if (typeof payload === 'object' && payload !== null) {
    return serializePayload(payload);
  }
  throw new TypeError('"payload" must be a non-empty string, Uint8Array or object');
}

/**
 * The HMAC of `data` under `secret` (a string is hashed as UTF-8), as the bytes of its lowercase hex text.
 * (A hex string digest turned into a pooled Buffer is cheaper in Node.js than `digest()`'s own Buffer.)
 */
export function hexDigestBytes(
  algorithm: SignatureAlgorithm,
  secret: string,
  data: string | Uint8Array,
): Buffer {
  return Buffer.from(createHmac(algorithm, secret).update(data).digest('hex'), 'latin1');
}
