/**
 * Which signatures `diagnoseSignature` checks: the ones `readDelivery` would, picked from the request headers or
 * from one signature value; or, when there is none it can check, the verdict at once.
 */
import { readHeader } from './delivery-head.js';
import { DiagnosisCodes, type DiagnosisReason, type SignatureVerdict } from './diagnosis.js';
import type { Forge, SignatureScheme, SignatureSource } from './forges.js';
import type { DeliveryRequest } from './types.js';

export interface Present {
  readonly header: string | undefined;
  readonly scheme: SignatureScheme;
  readonly value: string;
}

export type Selection =
  | { signatures: readonly Present[] }
  | { verdict: SignatureVerdict; reasons: DiagnosisReason[] };

/** The signatures `readDelivery` checks: every HMAC-SHA256 one present, else the sha1 one, else the token. */
export function selectFromHeaders(
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
export function selectFromValue(
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
