import { createHmac } from 'node:crypto';
import { type Forge, resolvePreset } from './forges.js';
import { checkSecret, hmacInput } from './hmac.js';
import { STANDARD_SECRET_PREFIX, standardSignature } from './standard.js';
import type { Secret, SignatureAlgorithm, SignaturePayload, SignKeyOptions, SignOptions } from './types.js';

const SIGN_OPTION_KEYS = new Set(['algorithm', 'forge', 'id', 'timestamp']);
const DELIVERY_HEADERS_OPTION_KEYS = new Set(['forge', 'name', 'id', 'timestamp']);

/**
 * Signs a payload with HMAC: returns `sha256=<64 lowercase hex>` (the `X-Hub-Signature-256` value) by default,
 * or `sha1=<40 hex>` (the `X-Hub-Signature` value) with `{ algorithm: 'sha1' }`. With several secrets, the
 * first one signs. With `{ forge }`, the value of that forge's own signature header: the bare hex for
 * `gitea` / `forgejo`, and for `gitlab` the token it sends, which is the first secret itself. For `standard` /
 * `svix`, the `webhook-signature` value `v1,<base64>` over `id.timestamp.body` (`id` required, `timestamp` in
 * Unix seconds, default now).
 *
 * @param payload - The exact body (a string is taken as UTF-8), or an object serialized the way the forge
 *   serializes (see `serializePayload`).
 * @throws TypeError when `secret` or `payload` is missing or empty, or `algorithm` or `forge` is unknown.
 * @example
 * ```ts
 * sign("It's a Secret to Everybody", 'Hello, World!');
 * // 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17'
 * ```
 * @see https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 */
export function sign(secret: Secret, payload: SignaturePayload, options?: SignOptions): string;
/**
 * The object form, @octokit/webhooks' `sign({ secret, algorithm }, payload)`: the same as
 * `sign(secret, payload, { algorithm })`, so the default algorithm is `sha256` here too.
 *
 * @throws TypeError as the other form, and when options are also given as a third argument.
 * @example
 * ```ts
 * sign({ secret: 'mysecret', algorithm: 'sha1' }, '{"foo":"bar"}'); // 'sha1=d03207e4b030cf234e3447bac4d93add4c6643d8'
 * ```
 */
export function sign(options: SignKeyOptions, payload: SignaturePayload): string;
export function sign(first: Secret | SignKeyOptions, payload: SignaturePayload, more?: SignOptions): string {
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (more !== undefined) throw new TypeError('"options" cannot follow an options object');
    const { secret, ...options } = first as SignKeyOptions;
    return sign(secret, payload, options);
  }
  const secret = first as Secret;
  const options = more;
  const checked = checkSecret(secret);
  const data = hmacInput(payload);
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError('"options" must be an object');
  }
  for (const key of Object.keys(options ?? {})) {
    if (!SIGN_OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  const algorithm: SignatureAlgorithm = options?.algorithm ?? 'sha256';
  if (algorithm !== 'sha256' && algorithm !== 'sha1') {
    throw new TypeError('"algorithm" must be "sha256" or "sha1"');
  }
  const preset = resolvePreset(options?.forge);
  const key = firstSecret(checked);
  const scheme = (preset.signatures[0] as { scheme: string }).scheme;
  if (scheme === 'standard') {
    const id: unknown = options?.id;
    if (typeof id !== 'string' || id.length === 0) throw new TypeError('"id" must be a non-empty string');
    return standardSignature(key, id, timestampOf(options?.timestamp), data);
  }
  if (scheme === 'token') return key;
  const hex = createHmac(algorithm, key).update(data).digest('hex');
  return scheme === 'hex-sha256' && algorithm === 'sha256' ? hex : `${algorithm}=${hex}`;
}

/** Options of `deliveryHeaders`. */
export interface DeliveryHeadersOptions {
  /** The forge whose headers to write. Default `'generic'`. */
  forge?: Forge;
  /** The forge's own event name (`push`, `Merge Request Hook`, `pullrequest:created`). Required. */
  name: string;
  /** The delivery id. Required. */
  id: string;
  /** Standard Webhooks: the `webhook-timestamp`, in Unix seconds. Default now. */
  timestamp?: number;
}

/**
 * The headers a forge sends with a delivery of `body`: content type, event and delivery id headers, and every
 * signature header of its preset, signed with the first secret the way the forge signs (GitLab's token is the
 * first secret itself). Standard Webhooks presets (`standard`, `svix`, and `gitlab` when the first secret is a
 * `whsec_` signing token) write the id, timestamp and `v1,` signature headers instead. For tests, `npm run
 * send` and replays.
 *
 * @throws TypeError when an argument is missing or empty, or `forge` is unknown.
 * @example
 * ```ts
 * const headers = deliveryHeaders(secret, body, { forge: 'gitea', name: 'push', id: randomUUID() });
 * await fetch(url, { method: 'POST', headers, body });
 * ```
 */
export function deliveryHeaders(
  secret: Secret,
  body: string | Uint8Array,
  options: DeliveryHeadersOptions,
): Record<string, string> {
  const checked = checkSecret(secret);
  const data = hmacInput(body);
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  for (const key of Object.keys(options)) {
    if (!DELIVERY_HEADERS_OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  for (const field of ['name', 'id'] as const) {
    const value: unknown = options[field];
    if (typeof value !== 'string' || value.length === 0) {
      throw new TypeError(`"${field}" must be a non-empty string`);
    }
  }
  const preset = resolvePreset(options.forge);
  const key = firstSecret(checked);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const header of preset.eventHeaders) headers[header] = options.name;
  const standard = preset.standardHeaders[0];
  // A forge with a choice (GitLab) signs the Standard Webhooks way with a signing token (`whsec_`) only.
  const signsStandard =
    standard !== undefined && (!preset.signingToken || key.startsWith(STANDARD_SECRET_PREFIX));
  if (standard !== undefined && signsStandard) {
    // Its own delivery headers carry the same id (GitLab's Idempotency-Key equals webhook-id).
    if (preset.signingToken) for (const header of preset.deliveryHeaders) headers[header] = options.id;
    const timestamp = timestampOf(options.timestamp);
    headers[standard.id] = options.id;
    headers[standard.timestamp] = timestamp;
    headers[standard.signature] = standardSignature(key, options.id, timestamp, data);
    return headers;
  }
  for (const header of preset.deliveryHeaders) headers[header] = options.id;
  for (const { header, scheme } of preset.signatures) {
    if (scheme === 'token') headers[header] = key;
    else {
      const algorithm = scheme === 'sha1' ? 'sha1' : 'sha256';
      const hex = createHmac(algorithm, key).update(data).digest('hex');
      headers[header] = scheme === 'hex-sha256' ? hex : `${algorithm}=${hex}`;
    }
  }
  return headers;
}

function timestampOf(value: unknown): string {
  if (value === undefined) return String(Math.floor(Date.now() / 1000));
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError('"timestamp" must be a whole number of Unix seconds');
  }
  return String(value);
}

function firstSecret(secret: Secret): string {
  return typeof secret === 'string' ? secret : (secret[0] as string);
}
