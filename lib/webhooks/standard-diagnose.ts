/**
 * Why a Standard Webhooks delivery does (not) verify, in plain words: a timestamp out of tolerance (and by how
 * much), a header missing or malformed, a `whsec_` secret that is not base64 or that the sender used without
 * decoding it, the body changed on the way, or the wrong secret. Internal: `diagnoseSignature` calls it.
 */
import { readHeader } from './delivery-head.js';
import type {
  CheckedSignature,
  DiagnoseOptions,
  DiagnosisCode,
  DiagnosisReason,
  SignatureDiagnosis,
} from './diagnosis.js';
import type { ForgePreset } from './forges.js';
import type { StandardHeaderNames } from './standard.js';
import {
  checkTimestamp,
  DEFAULT_TOLERANCE_SECONDS,
  formatSeconds,
  isBase64,
  matchStandard,
  parseStandardSignatures,
  STANDARD_SECRET_PREFIX,
  standardKey,
} from './standard.js';

/** A form of the body the sender may have signed, with the reason it would be. */
export interface BodyVariant {
  readonly code: DiagnosisCode;
  readonly message: string;
  readonly bytes: Buffer;
}

/** What `diagnoseStandard` needs. */
export interface StandardDiagnoseInput {
  readonly read: (name: string) => string | undefined;
  readonly sets: readonly StandardHeaderNames[];
  readonly body: Buffer;
  readonly secrets: readonly string[];
  readonly toleranceSeconds: number;
  /** Whether a delivery without these headers may still verify another way (GitLab's token). */
  readonly otherwise: boolean;
  readonly variants: () => Iterable<BodyVariant>;
}

/**
 * `diagnoseSignature`'s answer for a preset with Standard Webhooks headers, or `undefined` when the delivery is
 * to be diagnosed the HMAC or token way (GitLab without its signature headers, or required to use its token).
 */
export function standardDiagnosis(
  options: DiagnoseOptions,
  preset: ForgePreset,
  secrets: string | readonly string[],
  body: Buffer,
  variants: () => Iterable<BodyVariant>,
): SignatureDiagnosis | undefined {
  if (preset.standardHeaders.length === 0 || options.verifyWith === 'token') return undefined;
  const otherwise = options.verifyWith !== 'signature' && preset.signatures.some((s) => s.scheme === 'token');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isSafeInteger(tolerance) || tolerance <= 0) {
    throw new TypeError('"toleranceSeconds" must be a positive integer');
  }
  const headers = options.headers;
  if (headers === undefined && !otherwise) {
    const set = preset.standardHeaders[0] as StandardHeaderNames;
    const message = `a ${preset.forge} signature is over the id, the timestamp and the body: give the delivery's "${set.id}", "${set.timestamp}" and "${set.signature}" headers`;
    return refused('missing_header', [reason('missing_header', message)]);
  }
  return diagnoseStandard({
    read: (name) => (headers === undefined ? undefined : readHeader(headers, name)),
    sets: preset.standardHeaders,
    body,
    secrets: typeof secrets === 'string' ? [secrets] : secrets,
    toleranceSeconds: tolerance,
    otherwise,
    variants,
  });
}

/**
 * The diagnosis of a Standard Webhooks delivery, or `undefined` when none of its signature headers is present
 * and the delivery may verify another way (`otherwise`).
 */
export function diagnoseStandard(input: StandardDiagnoseInput): SignatureDiagnosis | undefined {
  const set = input.sets.find((candidate) => input.read(candidate.signature) !== undefined);
  if (set === undefined) {
    if (input.otherwise) return undefined;
    const first = input.sets[0] as StandardHeaderNames;
    return refused('missing_header', [
      reason(
        'missing_header',
        `no signature: the delivery has no "${first.signature}" header; set the signing secret in the sender's webhook settings`,
      ),
    ]);
  }
  const signature = input.read(set.signature) as string;
  const id = input.read(set.id);
  const timestamp = input.read(set.timestamp);
  const missing = [set.id, set.timestamp].filter((_, index) => [id, timestamp][index] === undefined);
  if (missing.length > 0) {
    const names = missing.map((name) => `"${name}"`).join(' and ');
    return refused('missing_header', [
      reason(
        'missing_header',
        `the signature is over the id, the timestamp and the body, and ${names} is missing`,
      ),
    ]);
  }
  const reasons: DiagnosisReason[] = [];
  const check = checkTimestamp(timestamp as string, input.toleranceSeconds);
  if (!check.ok) {
    if (check.reason === 'malformed') {
      return refused('bad_signature', [
        reason('malformed_timestamp', `"${set.timestamp}" is not a whole number of Unix seconds`),
      ]);
    }
    const tolerance = formatSeconds(check.tolerance);
    reasons.push(
      check.reason === 'stale'
        ? reason(
            'stale_timestamp',
            `"${set.timestamp}" is ${formatSeconds(check.by)} old, beyond the tolerance of ${tolerance}: a late delivery, a captured one replayed, or a clock that is off`,
          )
        : reason(
            'future_timestamp',
            `"${set.timestamp}" is ${formatSeconds(check.by)} in the future, beyond the tolerance of ${tolerance}: the sender's clock is ahead`,
          ),
    );
  }
  const keys: Buffer[] = [];
  for (const [index, secret] of input.secrets.entries()) {
    if (secret.startsWith(STANDARD_SECRET_PREFIX) && !isBase64(secret.slice(STANDARD_SECRET_PREFIX.length))) {
      const which = input.secrets.length === 1 ? 'the configured secret' : `secret ${index + 1} of the list`;
      reasons.push(
        reason(
          'secret_not_base64',
          `${which} starts with "whsec_" but the rest is not base64: copy it again whole`,
        ),
      );
    } else keys.push(standardKey(secret));
  }
  const checked: CheckedSignature = {
    header: set.signature,
    scheme: 'standard',
    signature: maskStandard(signature),
    matches: matchStandard(keys, id as string, timestamp as string, input.body, signature) >= 0,
  };
  if (checked.matches) {
    if (reasons.length === 0) {
      return {
        verdict: 'verified',
        reasons: [reason('verified', 'the signature matches the id, the timestamp and the body')],
        checked: [checked],
      };
    }
    reasons.push(reason('verified', 'the signature itself matches the id, the timestamp and the body'));
    return { verdict: 'bad_signature', reasons, checked: [checked] };
  }
  reasons.push(explain(input, set, signature, keys, id as string, timestamp as string));
  return { verdict: 'bad_signature', reasons, checked: [checked] };
}

/** Why the signature does not match: malformed, an undecoded secret, a changed body, else the wrong secret. */
function explain(
  input: StandardDiagnoseInput,
  set: StandardHeaderNames,
  signature: string,
  keys: readonly Buffer[],
  id: string,
  timestamp: string,
): DiagnosisReason {
  if (parseStandardSignatures(signature).length === 0) {
    return reason(
      'malformed_signature',
      'the signature header holds no "v1,<base64 of 32 bytes>" entry (several are separated by spaces)',
    );
  }
  const prefixed = input.secrets.filter((secret) => secret.startsWith(STANDARD_SECRET_PREFIX));
  const undecoded = prefixed.map((secret) => Buffer.from(secret, 'utf8'));
  if (undecoded.length > 0 && matchStandard(undecoded, id, timestamp, input.body, signature) >= 0) {
    return reason(
      'secret_not_decoded',
      'the sender keyed its HMAC with the "whsec_..." text itself: the key is the base64-decoded part after "whsec_"',
    );
  }
  for (const variant of input.variants()) {
    if (matchStandard(keys, id, timestamp, variant.bytes, signature) >= 0) {
      return { code: variant.code, message: variant.message };
    }
  }
  const count =
    input.secrets.length === 1
      ? 'the configured secret'
      : `any of the ${input.secrets.length} configured secrets`;
  return reason(
    'wrong_secret',
    `the signature was not made with ${count} over this id, timestamp and body: the secret is wrong, or the body, "${set.id}" or "${set.timestamp}" was changed on the way`,
  );
}

/** `v1,AbCd…[44 characters]` per entry: enough to tell signatures apart, too little to reuse. */
function maskStandard(value: string): string {
  return value
    .split(' ')
    .map((entry) => {
      const comma = entry.indexOf(',');
      const prefix = comma === -1 ? '' : entry.slice(0, comma + 1).replace(/[^\x20-\x7e]/g, '?');
      const rest = entry.slice(prefix.length).replace(/[^\x20-\x7e]/g, '?');
      return `${prefix}${rest.slice(0, 4)}…[${rest.length} characters]`;
    })
    .join(' ');
}

function reason(code: string, message: string): DiagnosisReason {
  return { code: code as DiagnosisCode, message };
}

function refused(
  verdict: 'missing_header' | 'bad_signature',
  reasons: DiagnosisReason[],
): SignatureDiagnosis {
  return { verdict, reasons, checked: [] };
}
