// The authorization code grant with PKCE (required by the server), driven end to end through oidc-provider's
// development login and consent pages with fetch and a cookie jar, no browser.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessToken,
  Client,
  codeChallenge,
  generateCodeVerifier,
  OAuth2Error,
} from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { authorizeWithDevInteractions } from '../../helpers/oauth2-flows.js';

const CLIENT_ID = 'web-app';
const CLIENT_SECRET = 'web-app-secret';
const REDIRECT_URI = 'https://app.forge.test/oauth/callback';

let server: AuthorizationServer;
let client: Client;
let password: string;

beforeAll(async () => {
  server = await startAuthorizationServer({
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token', 'implicit'],
        response_types: ['code', 'id_token token'],
        scope: 'openid profile email',
      },
    ],
  });
  password = server.accounts.alice!.password;
  client = new Client(CLIENT_ID, CLIENT_SECRET, { site: server.issuer });
});

afterAll(async () => {
  await server?.stop();
});

async function authorize(verifier: string | undefined, state: string, consent = true) {
  const url = client.authCode.authorizeUrl({
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile',
    state,
    ...(verifier === undefined ? {} : { code_verifier: verifier }),
  });
  return authorizeWithDevInteractions(url, { redirectUri: REDIRECT_URI, login: 'alice', password, consent });
}

describe('authCode with PKCE', () => {
  it('builds an authorize URL with the S256 challenge and never the verifier', () => {
    const verifier = generateCodeVerifier();
    const url = new URL(
      client.authCode.authorizeUrl({ redirect_uri: REDIRECT_URI, code_verifier: verifier }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(`${server.issuer}/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(url.searchParams.get('code_challenge')).toBe(codeChallenge(verifier));
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.href).not.toContain(verifier);
  });

  it('signs in, consents, and exchanges the code for tokens that work', async () => {
    const verifier = generateCodeVerifier();
    const result = await authorize(verifier, 'state-1');
    expect(result.error).toBeNull();
    expect(result.state).toBe('state-1');
    expect(result.callbackUrl.searchParams.get('iss')).toBe(server.issuer);
    expect(result.visited.some((url) => url.includes('/interaction/'))).toBe(true);

    const token = await client.authCode.getToken(result.code!, {
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });

    expect(token.refreshToken).toEqual(expect.any(String));
    const { payload } = await jwtVerify(
      String(token.params.id_token),
      createRemoteJWKSet(new URL(server.jwksUri)),
      {
        issuer: server.issuer,
        audience: CLIENT_ID,
      },
    );
    expect(payload.sub).toBe('alice');
    const userinfo = await token.get('oauth/userinfo');
    expect(userinfo.parsed).toMatchObject({ sub: 'alice', name: 'Alice' });

    const refreshed = await token.refresh();
    expect(refreshed.token).not.toBe(token.token);
    expect((await refreshed.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
  });

  it('adds the redirect_uri configured on the client to the authorize URL and to the exchange', async () => {
    const configured = new Client(CLIENT_ID, CLIENT_SECRET, {
      site: server.issuer,
      redirectUri: REDIRECT_URI,
    });
    const verifier = generateCodeVerifier();
    const url = configured.authCode.authorizeUrl({ scope: 'openid', code_verifier: verifier });
    expect(new URL(url).searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    const result = await authorizeWithDevInteractions(url, {
      redirectUri: REDIRECT_URI,
      login: 'alice',
      password,
    });
    const token = await configured.authCode.getToken(result.code!, { code_verifier: verifier });
    expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
  });

  it('is refused by the server without a code challenge', async () => {
    const result = await authorize(undefined, 'state-2');
    expect(result.code).toBeNull();
    expect(result.error).toBe('invalid_request');
    expect(result.callbackUrl.searchParams.get('error_description')).toMatch(/requires PKCE/);
  });

  it('fails the exchange with invalid_grant for the wrong verifier', async () => {
    const result = await authorize(generateCodeVerifier(), 'state-3');
    const error = await client.authCode
      .getToken(result.code!, { redirect_uri: REDIRECT_URI, code_verifier: generateCodeVerifier() })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).code).toBe('invalid_grant');
  });

  it('fails a second exchange of the same code with invalid_grant', async () => {
    const verifier = generateCodeVerifier();
    const result = await authorize(verifier, 'state-4');
    await client.authCode.getToken(result.code!, { redirect_uri: REDIRECT_URI, code_verifier: verifier });
    const error = await client.authCode
      .getToken(result.code!, { redirect_uri: REDIRECT_URI, code_verifier: verifier })
      .catch((caught: unknown) => caught);
    expect((error as OAuth2Error).code).toBe('invalid_grant');
  });

  it('comes back with access_denied when the user refuses consent', async () => {
    const result = await authorize(generateCodeVerifier(), 'state-5', false);
    expect(result.code).toBeNull();
    expect(result.error).toBe('access_denied');
    expect(result.state).toBe('state-5');
  });
});

describe('implicit', () => {
  it('reads the token from the callback fragment with AccessToken.fromKvform and uses it', async () => {
    const url = client.implicit.authorizeUrl({
      redirect_uri: REDIRECT_URI,
      response_type: 'id_token token',
      scope: 'openid profile',
      nonce: 'nonce-1',
      state: 'state-6',
    });
    const result = await authorizeWithDevInteractions(url, {
      redirectUri: REDIRECT_URI,
      login: 'alice',
      password,
    });
    expect(result.code).toBeNull();
    const fragment = result.callbackUrl.hash.slice(1);

    const token = AccessToken.fromKvform(client, fragment);

    expect(token.token).toBe(new URLSearchParams(fragment).get('access_token'));
    expect(token.params.state).toBe('state-6');
    expect(token.params.token_type).toBe('Bearer');
    expect(token.expiresAt).toBeGreaterThan(Math.floor(Date.now() / 1000) + 3500);
    expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice', name: 'Alice' });
  });
});
