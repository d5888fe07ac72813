/**
 * `sign`: the signature header value the forge would send for a payload.
 *
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
import { createHmac } from 'node:crypto';
import { checkSecret, hmacInput } from './hmac.js';
import type { Secret, SignatureAlgorithm, SignaturePayload, SignOptions } from './types.js';

/**
 * Signs a payload with HMAC: returns `sha256=<64 lowercase hex>` (the `X-Hub-Signature-256` value) by default,
 * or `sha1=<40 hex>` (the `X-Hub-Signature` value) with `{ algorithm: 'sha1' }`. With several secrets, the
 * first one signs.
 *
 * @param secret - The secret, or a list of secrets whose first entry signs.
 * @param payload - The exact body (string, taken as UTF-8, or bytes; preferred), or an object serialized the
 *   way the forge serializes (see `serializePayload`).
 * @param options - `algorithm`: `'sha256'` (default) or `'sha1'`.
 * @returns The signature header value.
 * @throws TypeError when `secret` or `payload` is missing or empty, or `algorithm` is unknown.
 * @example
 * ```ts
 * sign("It's a Secret to Everybody", 'Hello, World!');
 * // 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc2104
 */
export function sign(secret: Secret, payload: SignaturePayload, options?: SignOptions): string {
  const checked = checkSecret(secret);
  const data = hmacInput(payload);
  const algorithm: SignatureAlgorithm = options?.algorithm ?? 'sha256';
  if (algorithm !== 'sha256' && algorithm !== 'sha1') {
    throw new TypeError('"algorithm" must be "sha256" or "sha1"');
  }
  const key = typeof checked === 'string' ? checked : (checked[0] as string);
  return `${algorithm}=${createHmac(algorithm, key).update(data).digest('hex')}`;
}
