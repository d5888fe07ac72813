import type { Client } from '../client.js';
import type { Params } from '../url.js';

/**
 * The implicit grant: only the authorization URL (`response_type=token`). The token comes back in the
 * callback's fragment: read it with `AccessToken.fromKvform(client, fragment)`. Omitted from OAuth 2.1;
 * prefer the authorization code grant with PKCE.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.2
 */
export class Implicit {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** The authorize params: `client_id` and `response_type=token`. */
  authorizeParams(): Params {
    return { client_id: this.#client.id, response_type: 'token' };
  }

  /** The authorization URL with `client_id`, `redirect_uri`, `response_type=token` and extra params. */
  authorizeUrl(params: Params = {}): string {
    if (Object.hasOwn(params, 'client_secret')) {
      throw new TypeError(`"client_secret" is not allowed in the authorize URL`);
    }
    return this.#client.authorizeUrl({
      ...this.authorizeParams(),
      ...this.#client.redirectionParams(),
      ...params,
    });
  }

  /** Not available: the implicit grant has no token request. */
  getToken(): never {
    throw new TypeError(
      `the implicit grant has no token request: read the callback with AccessToken.fromKvform`,
    );
  }
}
