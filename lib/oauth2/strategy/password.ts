import type { AccessToken, AccessTokenOptions } from '../access-token.js';
import type { Client, TokenParams } from '../client.js';
import { GrantTypes } from '../constants.js';

/**
 * The resource owner password credentials grant. Omitted from OAuth 2.1: avoid it where you can.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3
 */
export class Password {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** Not available: the password grant has no authorization URL. */
  authorizeUrl(): never {
    throw new TypeError(`the password grant has no authorization URL`);
  }

  /** Requests a token with `grant_type=password`, `username`, `password` and extra params. */
  getToken(
    username: string,
    password: string,
    params: TokenParams = {},
    accessTokenOptions: AccessTokenOptions = {},
  ): Promise<AccessToken> {
    if (typeof username !== 'string' || username === '')
      throw new TypeError(`"username" must be a non-empty string`);
    if (typeof password !== 'string') throw new TypeError(`"password" must be a string`);
    return this.#client.getToken(
      { grant_type: GrantTypes.Password, username, password, ...params },
      accessTokenOptions,
    );
  }
}
