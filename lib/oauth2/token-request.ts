/**
 * The token endpoint helpers of a {@link Client}: the authenticated request any grant (and a revocation) sends,
 * and the {@link AccessToken} its response holds.
 */
import { AccessToken, type AccessTokenOptions } from './access-token.js';
import type { Authenticator } from './auth/authenticator.js';
import type { Client, TokenParams } from './client.js';
import { config } from './configuration.js';
import { OAuth2Error, TokenError } from './errors.js';
import { isJsonContentType, lowerHeaders } from './http-request.js';
import type { Response } from './response.js';
import type { RequestOptions } from './types.js';
import { encodeParams } from './url.js';

/**
 * The options of an authenticated POST to a token-endpoint-like URL (token, revocation): `params` form-encoded
 * (JSON when the `headers` say `Content-Type: application/json`) with the client authentication per
 * `authScheme`, and every value of a filtered debug key (plus `extraSecrets`) to redact.
 */
export async function tokenRequestOptions(
  authenticator: Authenticator,
  tokenUrl: () => string,
  params: TokenParams,
  extraSecrets: ReadonlyArray<string | undefined>,
): Promise<RequestOptions> {
  if (params === null || typeof params !== 'object') throw new TypeError(`"params" must be an object`);
  const { headers, parse, snaky, snakyHashClass, ...wire } = params;
  const auth = await authenticator.apply(wire, tokenUrl());
  const callerHeaders = lowerHeaders(headers);
  const mergedHeaders = { ...auth.headers, ...callerHeaders };
  const json = isJsonContentType(mergedHeaders['content-type']);
  const body = json ? JSON.stringify(auth.params) : encodeParams(auth.params);
  if (!json) mergedHeaders['content-type'] ??= 'application/x-www-form-urlencoded';
  const filtered = new Set(config.filteredDebugKeys.map((k) => k.toLowerCase()));
  const redact = [...extraSecrets];
  for (const [key, value] of Object.entries(auth.params)) {
    if (typeof value === 'string' && filtered.has(key.toLowerCase())) redact.push(value);
  }
  return {
    body,
    headers: mergedHeaders,
    redact,
    ...(parse === undefined ? {} : { parse }),
    ...(snaky === undefined ? {} : { snaky }),
    ...(snakyHashClass === undefined ? {} : { snakyHashClass }),
  };
}

/**
 * The token of a token response (what `Client#getToken` returns). Every failure caused by the server's
 * answer is an {@link OAuth2Error} carrying the response: no object or an empty one, no token at all
 * ({@link TokenError} `missing_token`, unless `raiseErrors` is false: then, as the gem does, a token with an
 * empty string and a warning), or a field of the wrong type (`expires_in: "soon"`). A wrong field among
 * the caller's own `accessTokenOptions` stays the caller's `TypeError`.
 */
export function tokenFromResponse(
  client: Client,
  response: Response,
  accessTokenOptions: AccessTokenOptions,
): AccessToken {
  const parsed = response.parsed;
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    Object.keys(parsed).length === 0
  ) {
    throw new OAuth2Error(response, 'token response holds no token');
  }
  let token: AccessToken;
  try {
    token = AccessToken.fromHash(client, { ...parsed, ...accessTokenOptions });
  } catch (error) {
    if (error instanceof TokenError && error.response === undefined) {
      throw new TokenError(error.code ?? 'missing_token', 'token response holds no token', response);
    }
    if (error instanceof TypeError) {
      // The options alone, on a placeholder token: a TypeError there is the caller's, not the server's.
      new AccessToken(client, 'placeholder', accessTokenOptions);
      throw new OAuth2Error(response, `token response: ${error.message}`, { cause: error });
    }
    throw error;
  }
  token.response = response;
  return token;
}
