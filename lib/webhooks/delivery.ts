/**
 * `readDelivery`: the pure, I/O-free check of one webhook delivery, shared by the Node middleware and the
 * Lambda ingest so that both answer identically.
 */
import { ErrorCodes } from './constants.js';
import { failure, safe } from './delivery-failure.js';
import { type DeliveryHead, readDeliveryHead } from './delivery-head.js';
import { type ResolvedDeliveryOptions, resolveDeliveryOptions } from './delivery-options.js';
import { resolvePreset, routeForgeEvent } from './forges.js';
import { matchStandard } from './standard.js';
import type { DeliveryOptions, DeliveryRequest, DeliveryResult, ReceivedEvent } from './types.js';
import { schemeMatchIndex } from './verify.js';

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
    ...(head.hook === undefined ? {} : { hook: head.hook }),
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
 * The event a verified delivery is dispatched as: `{ id, name, payload }` for the neutral preset (as before
 * presets), plus the mapped `action`, `forge` and the forge's own names for any other. Internal.
 */
export function receivedEvent(result: Extract<DeliveryResult, { ok: true }>): ReceivedEvent {
  const { id, name, payload } = result;
  if (resolvePreset(result.forge).neutral) return { id, name, payload };
  const { action, forge, nativeName, nativeAction } = result;
  return { id, name, action, forge, nativeName, nativeAction, payload };
}
