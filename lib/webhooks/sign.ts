import { createHmac } from 'node:crypto';
import { checkSecret, hmacInput } from './hmac.js';
import type { Secret, SignatureAlgorithm, SignaturePayload, SignOptions } from './types.js';

/**
 * Signs a payload with HMAC: returns `sha256=<64 lowercase hex>` (the `X-Hub-Signature-256` value) by default,
 * or `sha1=<40 hex>` (the `X-Hub-Signature` value) with `{ algorithm: 'sha1' }`. With several secrets, the
 * first one signs.
 *
 * @param payload - The exact body (a string is taken as UTF-8), or an object serialized the way the forge
 *   serializes (see `serializePayload`).
 * @throws TypeError when `secret` or `payload` is missing or empty, or `algorithm` is unknown.
 * @example
 * ```ts
 * sign("It's a Secret to Everybody", 'Hello, World!');
 * // 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'
 * ```
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
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
