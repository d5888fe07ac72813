/**
 * `diagnoseSignature`: why a delivery's signature does (not) verify, in plain words. It checks the signature
 * the way `readDelivery` does, and when it fails it tries what usually went wrong on the way (the body
 * re-serialized, still base64-encoded, form-encoded; a sha1 signature where sha256 is required; the wrong
 * secret) so that a user reads the cause instead of "signature does not match".
 */

import { readHeader } from './delivery.js';
import { type Forge, resolvePreset, type SignatureScheme, type SignatureSource } from './forges.js';
import { checkSecret } from './hmac.js';
import { standardDiagnosis } from './standard-diagnose.js';
import type { DeliveryRequest, Secret } from './types.js';
import { matchesScheme, matchesToken } from './verify.js';

/** The verdict of a signature check, as the ingest would reach it. */
export type SignatureVerdict = 'verified' | 'bad_signature' | 'missing_header';

/** Stable codes of the reasons a diagnosis gives. */
export const DiagnosisCodes = {
  /** Every signature present matches the body as given. */
  verified: 'verified',
  /** No signature header (or no signature value) at all. */
  missingHeader: 'missing_header',
  /** Only a sha1 signature was sent, and sha256 is required. */
  sha1Only: 'sha1_only',
  /** The signature value is not in the form its header carries. */
  malformedSignature: 'malformed_signature',
  /** The HMAC is right but written in uppercase hex. */
  uppercaseHex: 'uppercase_hex',
  /** The body is empty: an HMAC over no bytes proves nothing. */
  emptyBody: 'empty_body',
  /** No configured secret produces the signature over the body or any likely variant of it. */
  wrongSecret: 'wrong_secret',
  /** A token header (GitLab) equals none of the configured secrets. */
  wrongToken: 'wrong_token',
  /** The signature matches the same JSON written another way (compact, pretty-printed, trailing newline). */
  reserialized: 'reserialized',
  /** The signature matches the same JSON with its unicode escapes written the other way. */
  unicodeEscapes: 'unicode_escapes',
  /** The signature matches the base64-decoded body: the body was not decoded. */
  base64Body: 'base64_body',
  /** The delivery is form-encoded (`payload=...`) instead of JSON. */
  formEncoded: 'form_encoded',
  /** Some of several signature headers match and others do not. */
  partialMatch: 'partial_match',
  /** Standard Webhooks: the timestamp is older than the tolerance (a late or replayed delivery). */
  staleTimestamp: 'stale_timestamp',
  /** Standard Webhooks: the timestamp is further ahead than the tolerance (the sender's clock). */
  futureTimestamp: 'future_timestamp',
  /** Standard Webhooks: the timestamp header is not a whole number of Unix seconds. */
  malformedTimestamp: 'malformed_timestamp',
  /** Standard Webhooks: a configured `whsec_` secret is not base64 after its prefix. */
  secretNotBase64: 'secret_not_base64',
  /** Standard Webhooks: the sender keyed its HMAC with the `whsec_` text instead of the decoded bytes. */
  secretNotDecoded: 'secret_not_decoded',
} as const;

/** A reason's stable code. */
export type DiagnosisCode = (typeof DiagnosisCodes)[keyof typeof DiagnosisCodes];

/** One reason of a diagnosis: a stable code and a plain-words message (no secret, no full signature). */
export interface DiagnosisReason {
  readonly code: DiagnosisCode;
  readonly message: string;
}

/** One signature that was checked. */
export interface CheckedSignature {
  /** The header it came in, lowercase; `undefined` when it was given on its own. */
  readonly header: string | undefined;
  readonly scheme: SignatureScheme;
  /** The value, masked: the prefix and a few characters of an HMAC; nothing of a token. */
  readonly signature: string;
  /** Whether it matches the body as given with one of the secrets. */
  readonly matches: boolean;
}

/** What `diagnoseSignature` found. */
export interface SignatureDiagnosis {
  readonly verdict: SignatureVerdict;
  /** At least one reason; the first is the main one. */
  readonly reasons: readonly DiagnosisReason[];
  /** The signatures checked, masked. */
  readonly checked: readonly CheckedSignature[];
}

/** Input of `diagnoseSignature`: the body with either the request headers or one signature value. */
export type DiagnoseOptions = DiagnoseBase &
  (
    | { headers: DeliveryRequest['headers']; signature?: never }
    | { signature: string | undefined; headers?: never }
  );

interface DiagnoseBase {
  /** The body as the receiver verified it (a string is taken as UTF-8). */
  body: Uint8Array | string;
  /** The configured secret(s). */
  secrets: Secret;
  /** The forge preset: which headers carry a signature, and how. Default `'generic'`. */
  forge?: Forge;
  /** Whether a sha1 signature counts when it is the only one. Default `true`, as `readDelivery`. */
  allowSha1?: boolean;
  /** Standard Webhooks: the timestamp tolerance in seconds, as `readDelivery`. Default 300. */
  toleranceSeconds?: number;
  /** GitLab: which of its two schemes the source requires, as `readDelivery`. Default: either. */
  verifyWith?: 'signature' | 'token';
}

const OPTION_KEYS = new Set([
  'body',
  'headers',
  'signature',
  'secrets',
  'forge',
  'allowSha1',
  'toleranceSeconds',
  'verifyWith',
]);
const HEX = /^[0-9a-f]+$/;
const HEX_ANY_CASE = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
// A \uXXXX escape of a character from U+0080 up.
const NON_ASCII_ESCAPE = /\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})[0-9a-fA-F]/;

/**
 * Diagnoses a delivery's signature: the verdict the ingest reaches and the reasons in plain words. When the
 * signature fails it tries the usual causes: the JSON re-serialized (compact, pretty-printed, unicode escapes
 * changed, a trailing newline), a base64 body that was not decoded, a form-encoded delivery, a sha1 signature
 * where sha256 is required, a malformed value; else every configured secret is wrong. Messages never contain
 * a secret or a full signature value.
 *
 * @throws TypeError when an option is missing or invalid (a programming error, not a bad delivery).
 * @example
 * ```ts
 * const { verdict, reasons } = diagnoseSignature({ body: rawBody, headers, secrets: [secret], forge: 'github' });
 * if (verdict !== 'verified') console.log(reasons.map((reason) => reason.message).join('\n'));
 * ```
 */
export function diagnoseSignature(options: DiagnoseOptions): SignatureDiagnosis {
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  const secrets = checkSecret(options.secrets, 'secrets');
  const preset = resolvePreset(options.forge);
  const allowSha1 = options.allowSha1 ?? true;
  if (typeof allowSha1 !== 'boolean') throw new TypeError('"allowSha1" must be a boolean');
  const body = bodyBytes(options.body);
  const hasHeaders = options.headers !== undefined;
  const hasSignature = Object.hasOwn(options, 'signature');
  if (hasHeaders === hasSignature) throw new TypeError('pass either "headers" or "signature"');
  if (hasHeaders && (options.headers === null || typeof options.headers !== 'object')) {
    throw new TypeError('"headers" must be an object');
  }
  if (hasSignature && options.signature !== undefined && typeof options.signature !== 'string') {
    throw new TypeError('"signature" must be a string');
  }

  // Standard Webhooks (and GitLab with its signature headers): its own reasons.
  const standard = standardDiagnosis(options, preset, secrets, body, () => bodyVariants(body, false));
  if (standard !== undefined) return standard;
  const selected = hasHeaders
    ? selectFromHeaders(options.headers as DeliveryRequest['headers'], preset.signatures, allowSha1)
    : selectFromValue(options.signature, preset.signatures, preset.forge, allowSha1);
  if ('verdict' in selected) return { ...selected, checked: [] };

  const count = typeof secrets === 'string' ? 1 : secrets.length;
  const formBody = isFormBody(
    body,
    hasHeaders ? readHeader(options.headers ?? {}, 'content-type') : undefined,
  );
  const checked: CheckedSignature[] = [];
  const reasons: DiagnosisReason[] = [];
  for (const present of selected.signatures) {
    const matches = checkOne(secrets, present, body);
    checked.push({
      header: present.header,
      scheme: present.scheme,
      signature: maskSignature(present.value, present.scheme),
      matches,
    });
    if (!matches) reasons.push(explain(secrets, count, present, body, formBody));
  }

  if (reasons.length === 0) {
    const verified: DiagnosisReason[] = [
      {
        code: DiagnosisCodes.verified,
        message: `the signature matches the body with ${count === 1 ? 'the configured secret' : 'one of the configured secrets'}`,
      },
    ];
    if (formBody) verified.push(formReason());
    return { verdict: 'verified', reasons: verified, checked };
  }
  if (checked.some((signature) => signature.matches)) {
    const good = checked.filter((signature) => signature.matches).map((signature) => quoted(signature));
    const bad = checked.filter((signature) => !signature.matches).map((signature) => quoted(signature));
    reasons.unshift({
      code: DiagnosisCodes.partialMatch,
      message: `${good.join(', ')} matches but ${bad.join(', ')} does not: every sha256 signature sent must match`,
    });
  }
  return { verdict: 'bad_signature', reasons: unique(reasons), checked };
}

/**
 * A signature value safe to show: an HMAC keeps its prefix and the first 4 hex characters; a token (which is
 * the secret itself) shows only its length.
 */
export function maskSignature(value: string, scheme: SignatureScheme): string {
  if (scheme === 'token') return `[token, ${value.length} characters]`;
  const prefix = /^(sha256=|sha1=)/.exec(value)?.[0] ?? '';
  const rest = value.slice(prefix.length).replace(/[^\x20-\x7e]/g, '?');
  return `${prefix}${rest.slice(0, 4)}…[${rest.length} characters]`;
}

interface Present {
  readonly header: string | undefined;
  readonly scheme: SignatureScheme;
  readonly value: string;
}

type Selection =
  | { signatures: readonly Present[] }
  | { verdict: SignatureVerdict; reasons: DiagnosisReason[] };

/** The signatures `readDelivery` checks: every HMAC-SHA256 one present, else the sha1 one, else the token. */
function selectFromHeaders(
  headers: DeliveryRequest['headers'],
  sources: readonly SignatureSource[],
  allowSha1: boolean,
): Selection {
  const sha256: Present[] = [];
  let sha1: Present | undefined;
  let token: Present | undefined;
  for (const source of sources) {
    const value = readHeader(headers, source.header);
    if (value === undefined) continue;
    const present = { header: source.header, scheme: source.scheme, value };
    if (source.scheme === 'sha1') sha1 ??= present;
    else if (source.scheme === 'token') token ??= present;
    else sha256.push(present);
  }
  if (sha256.length > 0) return { signatures: sha256 };
  const primary = sources.find((source) => source.scheme !== 'sha1') as SignatureSource;
  if (sha1 !== undefined) {
    if (allowSha1) return { signatures: [sha1] };
    return sha1Only(primary.header, sha1.header);
  }
  if (token !== undefined) return { signatures: [token] };
  return missingHeader(sources);
}

/** The scheme of a lone signature value under a preset: by its prefix, else the preset's bare hex or token. */
function selectFromValue(
  value: string | undefined,
  sources: readonly SignatureSource[],
  forge: Forge,
  allowSha1: boolean,
): Selection {
  if (value === undefined || value.length === 0) return missingHeader(sources);
  const find = (scheme: SignatureScheme) => sources.find((source) => source.scheme === scheme);
  const token = find('token');
  if (token !== undefined) return { signatures: [{ header: token.header, scheme: 'token', value }] };
  const primary = sources.find((source) => source.scheme !== 'sha1') as SignatureSource;
  if (value.startsWith('sha1=')) {
    const sha1 = find('sha1');
    if (sha1 === undefined) {
      return {
        verdict: 'bad_signature',
        reasons: [
          {
            code: DiagnosisCodes.sha1Only,
            message: `a sha1 signature was sent but ${forge} signs "${primary.header}" with sha256: check the webhook's settings in the forge`,
          },
        ],
      };
    }
    if (!allowSha1) return sha1Only(primary.header, sha1.header);
    return { signatures: [{ header: sha1.header, scheme: 'sha1', value }] };
  }
  const sha256 = find('sha256');
  const bare = find('hex-sha256');
  if (value.startsWith('sha256=') && sha256 !== undefined) {
    return { signatures: [{ header: sha256.header, scheme: 'sha256', value }] };
  }
  if (bare !== undefined) return { signatures: [{ header: bare.header, scheme: 'hex-sha256', value }] };
  return { signatures: [{ header: primary.header, scheme: primary.scheme, value }] };
}

function sha1Only(primary: string, sha1Header: string | undefined): Selection {
  return {
    verdict: 'missing_header',
    reasons: [
      {
        code: DiagnosisCodes.sha1Only,
        message: `only a sha1 signature was sent ("${sha1Header}") and sha256 is required: the forge sends "${primary}" when the webhook has a secret; sha1-only senders are refused`,
      },
    ],
  };
}

function missingHeader(sources: readonly SignatureSource[]): Selection {
  const names = sources.map((source) => `"${source.header}"`).join(' or ');
  const token = sources.some((source) => source.scheme === 'token');
  return {
    verdict: 'missing_header',
    reasons: [
      {
        code: DiagnosisCodes.missingHeader,
        message: `no signature: the delivery has no ${names} header; set the ${token ? 'secret token' : 'secret'} in the forge's webhook settings`,
      },
    ],
  };
}

function checkOne(secrets: Secret, present: Present, body: Buffer): boolean {
  if (present.scheme === 'token') return matchesToken(secrets, present.value);
  return body.byteLength > 0 && matchesScheme(secrets, present.scheme, present.value, body);
}

/** Why one signature does not match: the first variant of the body that matches, or the wrong secret. */
function explain(
  secrets: Secret,
  count: number,
  present: Present,
  body: Buffer,
  formBody: boolean,
): DiagnosisReason {
  const which = count === 1 ? 'the configured secret' : `any of the ${count} configured secrets`;
  if (present.scheme === 'token') {
    return {
      code: DiagnosisCodes.wrongToken,
      message: `the "${present.header}" token equals none of the ${count} configured secrets: set the same secret token in the forge and in forgebridge`,
    };
  }
  const shape = checkShape(present);
  if (shape !== undefined) {
    if (shape.normalized !== undefined && matchesScheme(secrets, present.scheme, shape.normalized, body)) {
      const uppercase = shape.normalized === present.value.toLowerCase();
      return {
        code: uppercase ? DiagnosisCodes.uppercaseHex : DiagnosisCodes.malformedSignature,
        message: `${shape.message}; written that way it matches the body, so only the sender's writing of it is wrong`,
      };
    }
    return { code: shape.code, message: shape.message };
  }
  if (body.byteLength === 0) {
    return {
      code: DiagnosisCodes.emptyBody,
      message:
        'the body is empty: the signature covers the exact bytes the forge sent, so the raw body must be read before anything consumes it',
    };
  }
  for (const variant of bodyVariants(body, formBody)) {
    if (matchesScheme(secrets, present.scheme, present.value, variant.bytes)) {
      return { code: variant.code, message: variant.message };
    }
  }
  return {
    code: DiagnosisCodes.wrongSecret,
    message: `${quoted(present)} does not match the body with ${which}, nor any re-serialized, base64 or form-encoded form of it: the forge signs with another secret (or the body was changed on the way)`,
  };
}

/**
 * Why a signature value is not of its header's form, with its code; `normalized` is the value as it should
 * have been written (prefix and lowercase hex), to check whether only the writing is wrong.
 */
function checkShape(
  present: Present,
): { code: DiagnosisCode; message: string; normalized?: string } | undefined {
  const { scheme, value } = present;
  const prefix = scheme === 'hex-sha256' ? '' : `${scheme}=`;
  const length = scheme === 'sha1' ? 40 : 64;
  const form =
    scheme === 'hex-sha256' ? `${length} hex characters` : `"${prefix}" and ${length} hex characters`;
  const malformed = DiagnosisCodes.malformedSignature;
  if (scheme !== 'sha1' && value.startsWith('sha1=')) {
    return {
      code: DiagnosisCodes.sha1Only,
      message: `${quoted(present)} carries a sha1 signature but sha256 is required there: check the webhook's settings in the forge`,
    };
  }
  if (!value.startsWith(prefix)) {
    const bare = value.length === length && HEX_ANY_CASE.test(value);
    if (!bare)
      return {
        code: malformed,
        message: `${quoted(present)} is not a signature: the header carries ${form}`,
      };
    return {
      code: malformed,
      message: `${quoted(present)} lacks the "${prefix}" prefix: the header carries ${form}`,
      normalized: `${prefix}${value.toLowerCase()}`,
    };
  }
  const hex = value.slice(prefix.length);
  if (hex.length !== length || !HEX_ANY_CASE.test(hex)) {
    return { code: malformed, message: `${quoted(present)} is malformed: the header carries ${form}` };
  }
  if (!HEX.test(hex)) {
    return {
      code: malformed,
      message: `${quoted(present)} is written in uppercase hex: the header carries lowercase hex`,
      normalized: `${prefix}${hex.toLowerCase()}`,
    };
  }
  return undefined;
}

interface Variant {
  readonly code: DiagnosisCode;
  readonly message: string;
  readonly bytes: Buffer;
}

const VERIFY_RAW = 'verify the raw bytes as received, before any JSON parsing';

/** Forms the body likely had when the forge signed it, most telling first. */
function* bodyVariants(body: Buffer, formBody: boolean): Generator<Variant> {
  const text = body.toString('utf8');
  if (formBody) {
    const json = new URLSearchParams(text).get('payload');
    if (json !== null && json.length > 0) {
      yield {
        code: DiagnosisCodes.formEncoded,
        message: `the delivery is form-encoded ("payload=..."): the signature matches the JSON inside it; set the webhook's content type to "application/json" in the forge settings`,
        bytes: Buffer.from(json, 'utf8'),
      };
    }
  }
  const trimmed = text.trim();
  if (trimmed.length >= 8 && trimmed.length % 4 === 0 && BASE64.test(trimmed)) {
    const decoded = Buffer.from(
      trimmed,
      trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64',
    );
    yield {
      code: DiagnosisCodes.base64Body,
      message:
        'the body is still base64-encoded: the signature matches its base64-decoded bytes; decode the body when the event says "isBase64Encoded" (API Gateway, Lambda function URLs) before verifying',
      bytes: decoded,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  if (!formBody && parsed !== null && typeof parsed === 'object') {
    const form = [`payload=${encodeURIComponent(text)}`, new URLSearchParams({ payload: text }).toString()];
    for (const candidate of form) {
      yield {
        code: DiagnosisCodes.formEncoded,
        message: `the delivery was form-encoded ("payload=..."): the signature matches the form body, not the JSON taken out of it; set the webhook's content type to "application/json" in the forge settings`,
        bytes: Buffer.from(candidate, 'utf8'),
      };
    }
  }
  // The smallest change first: it is the more telling reason when a re-serialization matches too.
  const newline = text.endsWith('\n');
  yield {
    code: DiagnosisCodes.reserialized,
    message: `the body was changed: the signature matches it ${newline ? 'without' : 'with'} a trailing newline; ${VERIFY_RAW}`,
    bytes: Buffer.from(newline ? text.replace(/\r?\n$/, '') : `${text}\n`, 'utf8'),
  };
  // A body with \uXXXX escapes of non-ASCII characters: JSON.stringify writes the characters themselves, so
  // a re-serialized form that matches means the escapes were changed.
  const unescaped = NON_ASCII_ESCAPE.test(text);
  const layouts: [string, string][] = [
    [JSON.stringify(parsed), 'written compactly'],
    [JSON.stringify(parsed, null, 2), 'pretty-printed (2-space indent)'],
    [JSON.stringify(parsed, null, 4), 'pretty-printed (4-space indent)'],
    [JSON.stringify(parsed, null, '\t'), 'pretty-printed (tab indent)'],
  ];
  for (const [candidate, layout] of layouts) {
    if (candidate === text) continue;
    yield unescaped
      ? {
          code: DiagnosisCodes.unicodeEscapes,
          message: `the body was re-serialized with unicode escapes changed: the signature matches the same JSON ${layout} with its \\uXXXX escapes written as UTF-8 characters; ${VERIFY_RAW}`,
          bytes: Buffer.from(candidate, 'utf8'),
        }
      : {
          code: DiagnosisCodes.reserialized,
          message: `the body was re-serialized: the signature matches the same JSON ${layout}; ${VERIFY_RAW}`,
          bytes: Buffer.from(candidate, 'utf8'),
        };
  }
  for (const [candidate, layout] of layouts.slice(0, 2)) {
    const escaped = escapeNonAscii(candidate);
    if (escaped === candidate || escaped === text) continue;
    yield {
      code: DiagnosisCodes.unicodeEscapes,
      message: `the body was re-serialized with unicode escapes changed: the signature matches the same JSON ${layout} with non-ASCII characters written as \\uXXXX escapes; ${VERIFY_RAW}`,
      bytes: Buffer.from(escaped, 'utf8'),
    };
  }
}

function escapeNonAscii(json: string): string {
  return json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isFormBody(body: Buffer, contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return true;
  return body.subarray(0, 8).toString('latin1') === 'payload=';
}

function formReason(): DiagnosisReason {
  return {
    code: DiagnosisCodes.formEncoded,
    message: `the delivery is form-encoded ("payload=..."): the signature is right but the ingest accepts only JSON (415); set the webhook's content type to "application/json" in the forge settings`,
  };
}

function quoted(signature: { header: string | undefined; scheme: SignatureScheme }): string {
  return signature.header === undefined ? `the ${signature.scheme} signature` : `"${signature.header}"`;
}

function bodyBytes(body: unknown): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('"body" must be a string or a Uint8Array');
}

function unique(reasons: DiagnosisReason[]): DiagnosisReason[] {
  const seen = new Set<string>();
  return reasons.filter((reason) => {
    const key = `${reason.code}\n${reason.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
