import { randomUUID } from 'node:crypto';
import type { AuthScheme } from '../constants.js';
import { CLIENT_ASSERTION_TYPE } from '../constants.js';
import { signJwt } from '../jwt.js';
import type { SigningKey } from '../types.js';
import type { Params } from '../url.js';
import { formEncode } from '../url.js';

/** What an {@link Authenticator} needs to know about the client. */
export interface AuthenticatorOptions {
  id: string;
  secret: string | undefined;
  scheme: AuthScheme;
  basicAuthEncoding: 'form' | 'none';
  privateKey?: SigningKey | undefined;
  privateKeyAlg: string;
  keyId?: string | undefined;
  assertionAudience?: string | string[] | undefined;
  assertionLifetime: number;
}

/** Form parameters and headers after client authentication was applied. */
export interface Authenticated {
  params: Params;
  headers: Record<string, string>;
}

/**
 * The `Authorization: Basic` value for a client id and secret. `'form'` encoding form-encodes both before
 * base64 as RFC 6749 §2.3.1 says; `'none'` is the gem's (and many providers') unencoded form.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3.1
 */
export function basicAuthHeader(id: string, secret: string, encoding: 'form' | 'none' = 'form'): string {
  const pair = encoding === 'form' ? `${formEncode(id)}:${formEncode(secret)}` : `${id}:${secret}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/**
 * Applies the client authentication scheme to a token-endpoint request (token, refresh, revocation).
 *
 * - `basic_auth`: `Authorization: Basic ...`, no `client_id` in the body (a public client without a
 *   secret sends `client_id` in the body instead).
 * - `request_body`: `client_id` and `client_secret` in the body.
 * - `tls_client_auth`: `client_id` in the body; the certificate is on the connection.
 * - `private_key_jwt`: `client_id`, `client_assertion_type` and a signed `client_assertion`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.3
 * @see https://www.rfc-editor.org/rfc/rfc8705#section-2.1.1
 * @see https://www.rfc-editor.org/rfc/rfc7523#section-2.2
 */
export class Authenticator {
  readonly #options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
  }

  /** Returns the params with the credentials added, and the headers to send. */
  async apply(params: Params, tokenUrl: string): Promise<Authenticated> {
    const o = this.#options;
    switch (o.scheme) {
      case 'basic_auth': {
        if (o.secret === undefined) return { params: { client_id: o.id, ...params }, headers: {} };
        return { params, headers: { authorization: basicAuthHeader(o.id, o.secret, o.basicAuthEncoding) } };
      }
      case 'request_body': {
        const creds: Params = { client_id: o.id };
        if (o.secret !== undefined) creds.client_secret = o.secret;
        return { params: { ...params, ...creds }, headers: {} };
      }
      case 'tls_client_auth':
        return { params: { ...params, client_id: o.id }, headers: {} };
      case 'private_key_jwt': {
        const assertion = await this.clientAssertion(tokenUrl);
        return {
          params: {
            ...params,
            client_id: o.id,
            client_assertion_type: CLIENT_ASSERTION_TYPE,
            client_assertion: assertion,
          },
          headers: {},
        };
      }
    }
  }

  /** Builds and signs a `client_assertion` JWT (iss = sub = client_id, aud, jti, iat, exp). */
  async clientAssertion(tokenUrl: string): Promise<string> {
    const o = this.#options;
    if (o.privateKey === undefined) throw new TypeError(`"privateKey" is required for "private_key_jwt"`);
    const now = Math.floor(Date.now() / 1000);
    return signJwt(
      {
        iss: o.id,
        sub: o.id,
        aud: o.assertionAudience ?? tokenUrl,
        jti: randomUUID(),
        iat: now,
        exp: now + o.assertionLifetime,
      },
      { key: o.privateKey, algorithm: o.privateKeyAlg, keyId: o.keyId, type: 'JWT' },
    );
  }
}
