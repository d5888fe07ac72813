import type { AccessToken, AccessTokenOptions } from '../access-token.js';
import type { Client, TokenParams } from '../client.js';
import { GrantTypes } from '../constants.js';
import { signJwt } from '../jwt.js';
import type { SigningKey } from '../types.js';

/** How the assertion JWT is signed. */
export interface AssertionEncoding {
  /** The JWS algorithm, for example `'RS256'`, `'ES256'` or `'HS256'`. */
  algorithm: string;
  /** The signing key: PEM, JWK, CryptoKey, KeyObject, or a string/bytes secret for HS*. */
  key: SigningKey;
  /** The `kid` header. */
  kid?: string;
}

/** The claims of the assertion: `iss`, `aud`, `sub` and `exp` (epoch seconds), plus any others. */
export type AssertionClaims = Record<string, unknown> & {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
};

/**
 * The JWT bearer assertion grant (RFC 7523 §2.1): the claims are signed with jose and sent as
 * `assertion` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`. The spec's array form
 * `getToken([claims, algorithm, key])` is accepted too.
 *
 * @example
 * ```ts
 * const now = Math.floor(Date.now() / 1000);
 * const token = await client.assertion.getToken(
 *   { iss: 'my-service', sub: 'user-1', aud: client.tokenUrl(), exp: now + 300 },
 *   { algorithm: 'RS256', key: privateKeyPem },
 *   { scope: 'read' },
 * );
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7523#section-2.1
 */
export class Assertion {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** Not available: the assertion grant has no authorization URL. */
  authorizeUrl(): never {
    throw new TypeError(`the assertion grant has no authorization URL`);
  }

  /** Signs the claims and requests a token with them; `params` are extra token-request params. */
  getToken(
    claims: AssertionClaims,
    encoding: AssertionEncoding,
    params?: TokenParams,
    accessTokenOptions?: AccessTokenOptions,
  ): Promise<AccessToken>;
  /** The spec's form: `[claims, algorithm, key]`, then extra params and access token options. */
  getToken(
    claims: readonly [AssertionClaims, string, SigningKey],
    params?: TokenParams,
    accessTokenOptions?: AccessTokenOptions,
  ): Promise<AccessToken>;
  async getToken(
    claims: AssertionClaims | readonly [AssertionClaims, string, SigningKey],
    ...rest: Array<AssertionEncoding | TokenParams | AccessTokenOptions | undefined>
  ): Promise<AccessToken> {
    let claimSet: AssertionClaims;
    let enc: AssertionEncoding;
    let params: TokenParams;
    let accessTokenOptions: AccessTokenOptions;
    if (Array.isArray(claims)) {
      const [c, algorithm, key] = claims as readonly [AssertionClaims, string, SigningKey];
      claimSet = c;
      enc = { algorithm, key };
      params = (rest[0] as TokenParams | undefined) ?? {};
      accessTokenOptions = (rest[1] as AccessTokenOptions | undefined) ?? {};
    } else {
      claimSet = claims as AssertionClaims;
      const encoding = rest[0] as AssertionEncoding | undefined;
      if (encoding === undefined || encoding === null || typeof encoding !== 'object') {
        throw new TypeError(`"encoding" with "algorithm" and "key" is required`);
      }
      enc = encoding;
      params = (rest[1] as TokenParams | undefined) ?? {};
      accessTokenOptions = (rest[2] as AccessTokenOptions | undefined) ?? {};
    }
    if (claimSet === null || typeof claimSet !== 'object') throw new TypeError(`"claims" must be an object`);
    if (enc.key === undefined || enc.key === null) throw new TypeError(`"key" is required`);
    const assertion = await signJwt(
      { ...claimSet },
      { key: enc.key, algorithm: enc.algorithm, keyId: enc.kid },
    );
    return this.#client.getToken(
      { grant_type: GrantTypes.JwtBearer, assertion, ...params },
      accessTokenOptions,
    );
  }
}
