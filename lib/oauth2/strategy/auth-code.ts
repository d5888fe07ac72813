import type { AccessToken, AccessTokenOptions } from '../access-token.js';
import type { Client, TokenParams } from '../client.js';
import { GrantTypes } from '../constants.js';
import { codeChallenge } from '../pkce.js';
import type { Params } from '../url.js';

/**
 * The authorization code grant, with PKCE (S256) built in: give `code_verifier` to `authorizeUrl` to add
 * the challenge, and to `getToken` to send the verifier. No verifier is invented silently.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1
 * @see https://www.rfc-editor.org/rfc/rfc7636
 */
export class AuthCode {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** The authorize params: `client_id` and `response_type=code`. */
  authorizeParams(): Params {
    return { client_id: this.#client.id, response_type: 'code' };
  }

  /**
   * The authorization URL: `client_id`, `redirect_uri` (percent-encoded), `response_type=code` and extra
   * params; with `code_verifier`, `code_challenge` and `code_challenge_method=S256` instead of it.
   */
  authorizeUrl(params: Params = {}): string {
    if (Object.hasOwn(params, 'client_secret')) {
      throw new TypeError(`"client_secret" is not allowed in the authorize URL`);
    }
    const { code_verifier: verifier, ...rest } = params;
    const query: Params = { ...this.authorizeParams(), ...this.#client.redirectionParams(), ...rest };
    if (verifier !== undefined) {
      if (typeof verifier !== 'string') throw new TypeError(`"code_verifier" must be a string`);
      query.code_challenge = codeChallenge(verifier);
      query.code_challenge_method = 'S256';
    }
    return this.#client.authorizeUrl(query);
  }

  /**
   * Exchanges the code for a token (`grant_type=authorization_code`); `redirect_uri`, `code_verifier`,
   * `headers` and extra params go in `params`.
   */
  getToken(
    code: string,
    params: TokenParams & { redirect_uri?: string; code_verifier?: string } = {},
    accessTokenOptions: AccessTokenOptions = {},
  ): Promise<AccessToken> {
    if (typeof code !== 'string' || code === '') throw new TypeError(`"code" must be a non-empty string`);
    return this.#client.getToken(
      { grant_type: GrantTypes.AuthorizationCode, code, ...this.#client.redirectionParams(), ...params },
      accessTokenOptions,
    );
  }
}
