import type { AccessToken, AccessTokenOptions } from '../access-token.js';
import type { Client, TokenParams } from '../client.js';
import { GrantTypes } from '../constants.js';

/**
 * The client credentials grant, with extra params such as `scope` or RFC 8707's `resource`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 * @see https://www.rfc-editor.org/rfc/rfc8707#section-2
 */
export class ClientCredentials {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** Not available: the client credentials grant has no authorization URL. */
  authorizeUrl(): never {
    throw new TypeError(`the client credentials grant has no authorization URL`);
  }

  /** Requests a token with `grant_type=client_credentials` and extra params. */
  getToken(params: TokenParams = {}, accessTokenOptions: AccessTokenOptions = {}): Promise<AccessToken> {
    return this.#client.getToken({ grant_type: GrantTypes.ClientCredentials, ...params }, accessTokenOptions);
  }
}
