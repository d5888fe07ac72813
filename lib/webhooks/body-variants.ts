/**
 * The forms a body likely had when the forge signed it (form-encoded, still base64, re-serialized, unicode
 * escapes changed), most telling first, for `diagnoseSignature` to try a failed signature against.
 */
import { type DiagnosisCode, DiagnosisCodes } from './diagnosis.js';

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
// A \uXXXX escape of a character from U+0080 up.
const NON_ASCII_ESCAPE = /\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})[0-9a-fA-F]/;

interface Variant {
  readonly code: DiagnosisCode;
  readonly message: string;
  readonly bytes: Buffer;
}

const VERIFY_RAW = 'verify the raw bytes as received, before any JSON parsing';

/** Forms the body likely had when the forge signed it, most telling first. */
export function* bodyVariants(body: Buffer, formBody: boolean): Generator<Variant> {
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

export function isFormBody(body: Buffer, contentType: string | undefined): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return true;
  return body.subarray(0, 8).toString('latin1') === 'payload=';
}
