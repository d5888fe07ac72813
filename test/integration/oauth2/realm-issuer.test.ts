// An issuer with a path, as realms have (`https://id.example.com/realms/main`): the gem's URL rules against a
// server whose every endpoint lives under that path, OpenID Connect discovery (appends to the path) and the
// RFC 8414 fallback (inserts before it), and a full authorization code flow under the realm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, generateCodeVerifier, OAuth2Error } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { authorizeWithDevInteractions } from '../../helpers/oauth2-flows.js';

const CLIENT_ID = 'realm-app';
const CLIENT_SECRET = 'realm-app-secret';
const REDIRECT_URI = 'https://app.forge.test/realm/callback';
const REALM = '/realms/main';
const client = {
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  response_types: ['code'],
  scope: 'openid profile',
};

let oidc: AuthorizationServer;
let oauthOnly: AuthorizationServer;

beforeAll(async () => {
  [oidc, oauthOnly] = await Promise.all([
    startAuthorizationServer({ issuerPath: REALM, clients: [client] }),
    startAuthorizationServer({
      issuerPath: REALM,
      discovery: 'oauth',
      devInteractions: false,
      clients: [client],
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([oidc?.stop(), oauthOnly?.stop()]);
});

describe('a site with a nested path', () => {
  it('resolves the default relative token URL under the realm', async () => {
    const realm = new Client(CLIENT_ID, CLIENT_SECRET, { site: oidc.issuer });
    expect(oidc.issuer).toMatch(/\/realms\/main$/);
    expect(realm.tokenUrl()).toBe(oidc.tokenEndpoint);
    expect((await realm.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });

  it('resolves a leading-slash token URL on the host, dropping the realm (the server answers 404)', async () => {
    const rooted = new Client(CLIENT_ID, CLIENT_SECRET, { site: oidc.issuer, tokenUrl: '/oauth/token' });
    expect(rooted.tokenUrl()).toBe(`${new URL(oidc.issuer).origin}/oauth/token`);
    const error = await rooted.clientCredentials.getToken().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).response.status).toBe(404);
    expect((error as OAuth2Error).code).toBe('not_found');
  });

  it('uses an absolute token URL as it is, whatever the site', async () => {
    const absolute = new Client(CLIENT_ID, CLIENT_SECRET, {
      site: 'http://127.0.0.1:9/elsewhere',
      tokenUrl: oidc.tokenEndpoint,
    });
    expect((await absolute.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });
});

describe('Client.discover() on a realm', () => {
  it('reads <issuer>/.well-known/openid-configuration and runs the code flow under the realm', async () => {
    const discovered = await Client.discover(oidc.issuer, CLIENT_ID, CLIENT_SECRET);
    expect(discovered.authorizeUrl()).toBe(`${oidc.issuer}/oauth/authorize`);
    const verifier = generateCodeVerifier();
    const result = await authorizeWithDevInteractions(
      discovered.authCode.authorizeUrl({
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile',
        code_verifier: verifier,
      }),
      { redirectUri: REDIRECT_URI, login: 'alice', password: oidc.accounts.alice!.password },
    );
    expect(result.callbackUrl.searchParams.get('iss')).toBe(oidc.issuer);
    const token = await discovered.authCode.getToken(result.code!, {
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });
    expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
  });

  it("falls back to RFC 8414's <origin>/.well-known/oauth-authorization-server<path>", async () => {
    const openidDocument = await fetch(`${oauthOnly.issuer}/.well-known/openid-configuration`);
    expect(openidDocument.status).toBe(404);
    await openidDocument.body?.cancel();

    const discovered = await Client.discover(oauthOnly.issuer, CLIENT_ID, CLIENT_SECRET);

    expect(discovered.metadata?.issuer).toBe(oauthOnly.issuer);
    expect(discovered.tokenUrl()).toBe(oauthOnly.tokenEndpoint);
    expect((await discovered.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });
});
