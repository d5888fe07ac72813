import { createHash, randomBytes } from 'node:crypto';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * Makes a PKCE code verifier: 32 random bytes, base64url (43 characters).
 *
 * @example
 * ```ts
 * const verifier = generateCodeVerifier();
 * const url = client.authCode.authorizeUrl({ redirect_uri, code_verifier: verifier });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1
 */
export function generateCodeVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The S256 code challenge of a verifier: `BASE64URL(SHA256(verifier))`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2
 */
export function codeChallenge(verifier: string): string {
  if (typeof verifier !== 'string' || !VERIFIER.test(verifier)) {
    throw new TypeError(`"code_verifier" must be 43 to 128 characters of [A-Za-z0-9-._~]`);
  }
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
