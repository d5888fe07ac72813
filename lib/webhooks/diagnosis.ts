/**
 * What `diagnoseSignature` answers and takes: the verdict, the stable codes of its reasons, the signatures it
 * checked, and its options.
 */
import type { Forge, SignatureScheme } from './forges.js';
import type { DeliveryRequest, Secret } from './types.js';

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
