/**
 * Reading one webhook proxy channel message: pure, no I/O. The public proxy service (smee.io) sends each
 * relayed delivery as an unnamed server-sent event whose data is a JSON object holding the delivery's request
 * headers (lowercased) at the top level plus `body` (the parsed JSON body), `query` and `timestamp`.
 */
import { ProxyChannelError, ProxyChannelErrorCodes } from './errors.js';
import type { SignedEvent } from './types.js';

/** Names of the message keys a delivery is read from, any case. */
export interface ProxyMessageKeys {
  /** Delivery id key. Default `'x-request-id'`; when absent, `'x-forge-delivery'` is read instead. */
  id?: string;
  /** Event name key. Default `'x-forge-event'`. */
  event?: string;
  /** HMAC-SHA256 signature key, preferred when present. Default `'x-hub-signature-256'`. */
  signature256?: string;
  /** HMAC-SHA1 signature key, used only when there is no sha256 one. Default `'x-hub-signature'`. */
  signature?: string;
}

/** Options of {@link readProxyMessage}. */
export interface ProxyMessageOptions {
  /** Message key names. Defaults in {@link ProxyMessageKeys}. */
  keys?: ProxyMessageKeys;
  /** Accept a sha1 signature when it is the only one. Default `true`. */
  allowSha1?: boolean;
  /** Refuse a message without a delivery id. Default `true`. */
  requireDeliveryId?: boolean;
}

/**
 * A message turned into `verifyAndReceive`'s input. `bodyForm` says whether the body came as the exact text
 * (`'text'`) or as a parsed object that is re-serialized the way the forge serializes (`'object'`).
 */
export type ProxyDelivery =
  | { ok: true; event: SignedEvent & { id: string }; bodyForm: 'text' | 'object' }
  | { ok: false; error: ProxyChannelError };

/** Fallback key for the delivery id: the forge's own delivery header, which the proxy relays too. */
const FALLBACK_ID_KEY = 'x-forge-delivery';

function readKey(message: Record<string, unknown>, key: string): string | undefined {
  let value = message[key];
  if (value === undefined) {
    const lower = key.toLowerCase();
    for (const name of Object.keys(message)) {
      if (name.toLowerCase() === lower) {
        value = message[name];
        break;
      }
    }
  }
  if (Array.isArray(value)) value = value[0];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function fail(code: keyof typeof ProxyChannelErrorCodes, status: number, message: string): ProxyDelivery {
  return { ok: false, error: new ProxyChannelError(message, { code: ProxyChannelErrorCodes[code], status }) };
}

/**
 * Reads one proxy channel message (the `data` of a server-sent event) into the arguments of
 * `verifyAndReceive`, or a {@link ProxyChannelError} saying why it cannot be used. Never throws.
 *
 * A string `body` is passed on as is, so exactly those bytes (UTF-8) are verified. An object `body` is passed
 * on as the object, which `verifyAndReceive` re-serializes the way the forge serializes (`serializePayload`);
 * that can differ from the signed bytes, see docs/webhooks-proxy.md.
 */
export function readProxyMessage(data: unknown, options: ProxyMessageOptions = {}): ProxyDelivery {
  const keys = options.keys ?? {};
  let message: unknown;
  try {
    message = typeof data === 'string' ? JSON.parse(data) : undefined;
  } catch {
    return fail('invalidMessage', 400, 'message data is not valid JSON');
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return fail('invalidMessage', 400, 'message data is not a JSON object');
  }
  const fields = message as Record<string, unknown>;

  const contentType = readKey(fields, 'content-type');
  if (contentType !== undefined) {
    const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
    if (mediaType !== 'application/json') {
      return fail('unsupportedMediaType', 415, 'relayed "content-type" must be "application/json"');
    }
  }

  const eventKey = keys.event ?? 'x-forge-event';
  const name = readKey(fields, eventKey);
  if (name === undefined) return fail('missingField', 400, `message has no "${eventKey}" key`);

  const idKey = keys.id ?? 'x-request-id';
  const id = readKey(fields, idKey) ?? (keys.id === undefined ? readKey(fields, FALLBACK_ID_KEY) : undefined);
  if (id === undefined && options.requireDeliveryId !== false) {
    return fail('missingField', 400, `message has no "${idKey}" key`);
  }

  const signature256Key = keys.signature256 ?? 'x-hub-signature-256';
  const signatureKey = keys.signature ?? 'x-hub-signature';
  let signature = readKey(fields, signature256Key);
  if (signature === undefined && options.allowSha1 !== false) signature = readKey(fields, signatureKey);
  if (signature === undefined) {
    const expected =
      options.allowSha1 === false ? `"${signature256Key}"` : `"${signature256Key}" or "${signatureKey}"`;
    return fail('missingField', 400, `message has no ${expected} key`);
  }

  const body = fields.body;
  if (typeof body === 'string' && body.length > 0) {
    return { ok: true, event: { id: id ?? '', name, payload: body, signature }, bodyForm: 'text' };
  }
  if (body !== null && typeof body === 'object') {
    return { ok: true, event: { id: id ?? '', name, payload: body, signature }, bodyForm: 'object' };
  }
  return fail('missingField', 400, 'message has no "body" key holding a string or an object');
}
