import { createHash, timingSafeEqual } from 'node:crypto';
import type { SignatureScheme } from './forges.js';
import { checkSecret, DIGEST_HEX_LENGTH, hexDigestBytes, hmacInput } from './hmac.js';
import type { Secret, SignatureAlgorithm, SignaturePayload } from './types.js';

/**
 * Verifies a signature: `sha256=<hex>` is checked with HMAC-SHA256 only and `sha1=<hex>` with HMAC-SHA1 only
 * (the prefix picks the algorithm; a sha256 signature is never checked as sha1). With several secrets, each
 * is tried in turn (rotation). The hex digests are compared with `timingSafeEqual` after a length check; the
 * hex must be lowercase, as the forge and `sign` write it.
 *
 * Anything that is not a well-formed signature (no or unknown prefix, wrong length, non-hex or uppercase hex,
 * garbage) gives `false`, never an exception.
 *
 * @param payload - The exact body (a string is taken as UTF-8), or an object serialized the way the forge
 *   serializes (see `serializePayload` for where that can differ from the signed bytes).
 * @throws TypeError when an argument is missing or empty, or `signature` is not a string.
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
export function verify(secret: Secret, payload: SignaturePayload, signature: string): boolean {
  const checked = checkSecret(secret);
  const data = hmacInput(payload);
  if (typeof signature !== 'string' || signature.length === 0) {
    throw new TypeError('"signature" must be a non-empty string');
  }
  return verifyChecked(checked, data, signature);
}

/**
 * Parses a signature header value into its algorithm and the UTF-8 bytes of its hex digest, or `undefined`
 * when the prefix or the length is wrong. Internal.
 */
export function parseSignature(
  signature: string,
): { algorithm: SignatureAlgorithm; expected: Buffer } | undefined {
  let algorithm: SignatureAlgorithm;
  let start: number;
  if (signature.length === 71 && signature.startsWith('sha256=')) {
    algorithm = 'sha256';
    start = 7;
  } else if (signature.length === 45 && signature.startsWith('sha1=')) {
    algorithm = 'sha1';
    start = 5;
  } else {
    return undefined;
  }
  // UTF-8, so a non-ASCII character makes the bytes longer than any hex digest and the check fails.
  const expected = Buffer.from(signature.slice(start), 'utf8');
  return expected.length === DIGEST_HEX_LENGTH[algorithm] ? { algorithm, expected } : undefined;
}

/** `verify` without the argument checks, for callers that checked already. Internal. */
export function verifyChecked(secret: Secret, data: string | Uint8Array, signature: string): boolean {
  const parsed = parseSignature(signature);
  return parsed !== undefined && matchesDigest(secret, parsed.algorithm, parsed.expected, data);
}

/**
 * Whether any secret's HMAC of `data`, as lowercase hex, equals `expected` (the signature's hex bytes), with
 * `timingSafeEqual` (both are the digest's hex length, checked by `parseSignature`). Internal.
 */
export function matchesDigest(
  secret: Secret,
  algorithm: SignatureAlgorithm,
  expected: Buffer,
  data: string | Uint8Array,
): boolean {
  return digestMatchIndex(secret, algorithm, expected, data) >= 0;
}

/** `matchesDigest`, giving the position of the first secret that matches, or -1. Internal. */
export function digestMatchIndex(
  secret: Secret,
  algorithm: SignatureAlgorithm,
  expected: Buffer,
  data: string | Uint8Array,
): number {
  if (typeof secret === 'string')
    return timingSafeEqual(hexDigestBytes(algorithm, secret, data), expected) ? 0 : -1;
  let match = -1;
  for (const [index, key] of secret.entries()) {
    // Every secret is tried, so the time taken does not tell which one matched.
    if (timingSafeEqual(hexDigestBytes(algorithm, key, data), expected) && match === -1) match = index;
  }
  return match;
}

/**
 * Whether a signature header's value, read under its scheme, proves the delivery with any of the secrets:
 * `sha256=<hex>` / `sha1=<hex>` (the prefix must name the scheme's algorithm), bare lowercase hex
 * (HMAC-SHA256), or the shared token itself. Internal.
 */
export function matchesScheme(
  secret: Secret,
  scheme: SignatureScheme,
  value: string,
  data: string | Uint8Array,
): boolean {
  return schemeMatchIndex(secret, scheme, value, data) >= 0;
}

/**
 * `matchesScheme`, giving the position in the list of the first secret that proves the delivery, or -1 (the
 * delivery log records it, so that a rotation can tell when the forge signs with the new secret). Internal.
 */
export function schemeMatchIndex(
  secret: Secret,
  scheme: SignatureScheme,
  value: string,
  data: string | Uint8Array,
): number {
  if (scheme === 'token') return tokenMatchIndex(secret, value);
  if (scheme === 'hex-sha256') {
    const expected = Buffer.from(value, 'utf8');
    return expected.length === DIGEST_HEX_LENGTH.sha256
      ? digestMatchIndex(secret, 'sha256', expected, data)
      : -1;
  }
  const parsed = parseSignature(value);
  return parsed?.algorithm === scheme ? digestMatchIndex(secret, scheme, parsed.expected, data) : -1;
}

/**
 * Whether `token` equals any of the secrets, in constant time: both sides are hashed first, so neither the
 * length nor the content of a secret shows in the time taken, and every secret is compared. Internal.
 */
export function matchesToken(secret: Secret, token: string): boolean {
  return tokenMatchIndex(secret, token) >= 0;
}

/** `matchesToken`, giving the position of the first secret equal to the token, or -1. Internal. */
export function tokenMatchIndex(secret: Secret, token: string): number {
  const given = createHash('sha256').update(token, 'utf8').digest();
  let match = -1;
  for (const [index, key] of (typeof secret === 'string' ? [secret] : secret).entries()) {
    if (timingSafeEqual(createHash('sha256').update(key, 'utf8').digest(), given) && match === -1)
      match = index;
  }
  return match;
}
