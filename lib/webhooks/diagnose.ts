/**
 * `diagnoseSignature`: why a delivery's signature does (not) verify, in plain words. It checks the signature
 * the way `readDelivery` does, and when it fails it tries what usually went wrong on the way (the body
 * re-serialized, still base64-encoded, form-encoded; a sha1 signature where sha256 is required; the wrong
 * secret) so that a user reads the cause instead of "signature does not match".
 */

import { bodyVariants, isFormBody } from './body-variants.js';
import { readHeader } from './delivery-head.js';
import {
  type CheckedSignature,
  type DiagnoseOptions,
  type DiagnosisCode,
  DiagnosisCodes,
  type DiagnosisReason,
  type SignatureDiagnosis,
} from './diagnosis.js';
import { resolvePreset, type SignatureScheme } from './forges.js';
import { checkSecret } from './hmac.js';
import { type Present, selectFromHeaders, selectFromValue } from './signature-selection.js';
import { standardDiagnosis } from './standard-diagnose.js';
import type { DeliveryRequest, Secret } from './types.js';
import { matchesScheme, matchesToken } from './verify.js';

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
