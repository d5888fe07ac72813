import { Forges, resolvePreset } from '../../webhooks/index.js';
import type { HeaderMap } from '../types.js';

/** What a masked value reads as; a `sha256=` / `sha1=` prefix is kept in front of it (the scheme, not the proof). */
export const MASKED = '[masked]';

/** Every signature or token header of every forge preset, lowercase. */
export const SIGNATURE_HEADERS: ReadonlySet<string> = new Set(
  Forges.flatMap((forge) => resolvePreset(forge).signatures.map((source) => source.header)),
);

/** Credentials that are no signature but are never kept either. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** Any other header whose name says it carries a credential (`x-api-key`, `x-custom-token`, ...). */
const CREDENTIAL_NAME = /signature|token|secret|password|passwd|api-?key|auth|credential|session/i;

const SCHEME_PREFIX = /^(sha1|sha256|sha512)=/i;

/** Largest header value kept, in characters; a longer one is cut and marked with `…`. */
const MAX_VALUE_CHARS = 1024;
/** Most headers kept (sorted by name). */
const MAX_HEADERS = 100;

/**
 * Headers the front door adds (Function URL, API Gateway, CloudFront: `host`, `via`, `x-amzn-*`, `x-amz-cf-*`,
 * `x-forwarded-port` and `-proto`) and `content-length` (the record's `bodyBytes` holds it): not the forge's.
 * `x-forwarded-for`, the sender's address, is the forge's and is kept.
 */
const FRONT_DOOR_HEADER = /^(?:host|via|content-length|x-amzn-.*|x-amz-cf-.*|x-forwarded-(?:port|proto))$/;

/** Whether a header (any case) is one the front door added, which the delivery log does not keep. */
export function isFrontDoorHeader(name: string): boolean {
  return FRONT_DOOR_HEADER.test(name.toLowerCase());
}

/**
 * The headers the forge sent: without the ones {@link isFrontDoorHeader} names. The delivery log keeps these
 * (masked), so a record stays within one DynamoDB write unit (1 KB) for a usual delivery.
 *
 * @example
 * ```ts
 * forgeHeaders({ Host: 'abc.lambda-url.us-east-1.on.aws', 'X-GitHub-Event': 'push' }); // { 'X-GitHub-Event': 'push' }
 * ```
 */
export function forgeHeaders(headers: HeaderMap | undefined): HeaderMap | undefined {
  if (typeof headers !== 'object' || headers === null) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isFrontDoorHeader(name)));
}

/** Whether a header (any case) is masked by {@link maskHeaders}. */
export function isMaskedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SIGNATURE_HEADERS.has(lower) || CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_NAME.test(lower);
}

function maskValue(value: string): string {
  const scheme = SCHEME_PREFIX.exec(value.trim());
  return scheme === null ? MASKED : `${scheme[1]?.toLowerCase()}=${MASKED}`;
}

/**
 * A delivery's headers safe to store and show: names lowercased, repeated values joined with `, `, every
 * signature or token header of every forge preset (and any credential header) replaced by `[masked]` (keeping
 * only a `sha256=` / `sha1=` scheme prefix), values cut at 1,024 characters, at most 100 headers.
 *
 * @example
 * ```ts
 * maskHeaders({ 'X-Hub-Signature-256': 'sha256=9f2c…', 'X-Gitlab-Token': 's3cret' });
 * // { 'x-hub-signature-256': 'sha256=[masked]', 'x-gitlab-token': '[masked]' }
 * ```
 */
export function maskHeaders(headers: HeaderMap | undefined): Record<string, string> {
  const masked: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return masked;
  const names = Object.keys(headers)
    .filter((name) => headers[name] !== undefined)
    .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  for (const name of names) {
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw.map(String).join(', ') : String(raw);
    const lower = name.toLowerCase().slice(0, 256);
    if (!Object.hasOwn(masked, lower) && Object.keys(masked).length >= MAX_HEADERS) break;
    const safe = isMaskedHeader(lower)
      ? maskValue(value)
      : value.length > MAX_VALUE_CHARS
        ? `${value.slice(0, MAX_VALUE_CHARS)}…`
        : value;
    // Two spellings of one header (`X-A` and `x-a`) are one header, as HTTP has it.
    masked[lower] = Object.hasOwn(masked, lower) ? `${masked[lower]}, ${safe}` : safe;
  }
  return masked;
}
