import { createPrivateKey, type JsonWebKey, KeyObject, type webcrypto } from 'node:crypto';
import { SigningError } from './errors.js';
import type { SigningKey } from './types.js';

/** Options of {@link signJwt}. */
export interface SignJwtOptions {
  /** The signing key. */
  key: SigningKey;
  /** The JWS algorithm (`RS256`, `ES256`, `PS256`, `EdDSA`, `HS256`, ...). */
  algorithm: string;
  /** The `kid` header. */
  keyId?: string | undefined;
  /** The `typ` header; none when not given (the gem's assertion header is `alg` and `kid` only). */
  type?: string | undefined;
}

function isJwk(key: unknown): key is JsonWebKey & { kid?: string; alg?: string } {
  return key !== null && typeof key === 'object' && !(key instanceof Uint8Array) && 'kty' in key;
}

/** The algorithm to sign with: the explicit one, else the JWK's `alg`, else the fallback. */
export function algorithmFor(key: SigningKey, explicit: string | undefined, fallback: string): string {
  if (explicit) return explicit;
  if (isJwk(key) && typeof key.alg === 'string') return key.alg;
  return fallback;
}

/** Builds and signs a JWT with jose (loaded on first use). */
export async function signJwt(payload: Record<string, unknown>, options: SignJwtOptions): Promise<string> {
  const { algorithm } = options;
  if (typeof algorithm !== 'string' || algorithm === '')
    throw new TypeError(`"algorithm" must be a non-empty string`);
  const jose = await import('jose');
  try {
    let key: webcrypto.CryptoKey | KeyObject | Uint8Array;
    const raw = options.key;
    if (typeof raw === 'string') {
      if (raw.includes('-----BEGIN')) key = createPrivateKey(raw);
      else if (algorithm.startsWith('HS')) key = new TextEncoder().encode(raw);
      else throw new TypeError(`"key" must be a PEM private key for ${algorithm}`);
    } else if (raw instanceof Uint8Array || raw instanceof KeyObject) {
      key = raw;
    } else if (isJwk(raw)) {
      key = (await jose.importJWK(raw as Parameters<typeof jose.importJWK>[0], algorithm)) as
        | webcrypto.CryptoKey
        | Uint8Array;
    } else {
      key = raw as webcrypto.CryptoKey;
    }
    const kid = options.keyId ?? (isJwk(raw) && typeof raw.kid === 'string' ? raw.kid : undefined);
    return await new jose.SignJWT(payload)
      .setProtectedHeader({
        alg: algorithm,
        ...(options.type ? { typ: options.type } : {}),
        ...(kid ? { kid } : {}),
      })
      .sign(key);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw new SigningError(`could not sign the JWT with algorithm "${algorithm}"`, error);
  }
}
