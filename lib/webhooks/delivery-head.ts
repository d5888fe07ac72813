/**
 * The header checks of `readDelivery` (content type, event, delivery id, signatures), which the middleware runs
 * before it reads the body, and the case-insensitive header reading they share with the diagnosis.
 */
import { ErrorCodes } from './constants.js';
import { type DeliveryFailure, failure, missing, safe } from './delivery-failure.js';
import type { ResolvedDeliveryOptions } from './delivery-options.js';
import type { SignatureScheme, SignatureSource } from './forges.js';
import { readStandardHead, type StandardHeaderNames } from './standard.js';
import type { DeliveryRequest } from './types.js';

/** What the headers alone tell about a delivery that passed the header checks. Internal. */
export interface DeliveryHead {
  readonly ok: true;
  readonly id: string;
  /** The hook that sent it, where the preset reads one. */
  readonly hook?: string;
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
  const hook = firstHeader(headers, options.hookHeaders);
  if (hook !== undefined && !HOOK_ID.test(hook)) {
    return failure(400, ErrorCodes.invalidHeader, `"${options.hookHeaders[0]}" is not a hook id`);
  }
  const withHook = hook === undefined ? {} : { hook };
  if (options.standardHeaders.length > 0) {
    const standard = readStandardHead(
      (name) => readHeader(headers, name),
      options.standardHeaders,
      options.toleranceSeconds,
    );
    if (standard?.ok === false) return failure(standard.status, standard.code, standard.message);
    if (standard !== undefined) {
      // The id the signature covers is the delivery's id: another id header that disagrees with it would let one
      // signed delivery pass again and again under new ids (a GitLab Idempotency-Key, a svix-id beside webhook-*).
      if (id !== undefined && id !== standard.id) {
        return failure(
          400,
          ErrorCodes.invalidHeader,
          `the delivery id header disagrees with the signed "${standard.idHeader}"`,
        );
      }
      const signatures: PresentSignature[] = [{ scheme: 'standard', value: standard.signature }];
      return { ok: true, id: standard.id, ...withHook, nativeName, signatures, standard };
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
  return { ok: true, id: id ?? '', ...withHook, nativeName, signatures };
}

/** A hook id as forges send one: GitHub's number, Bitbucket's `{uuid}`. */
const HOOK_ID = /^[A-Za-z0-9{}._:-]{1,128}$/;

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

function mediaType(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && mediaType(contentType) === 'application/json';
}

/** The first of `names` present on the request. */
function firstHeader(headers: DeliveryRequest['headers'], names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = readHeader(headers, name);
    if (value !== undefined) return value;
  }
  return undefined;
}
