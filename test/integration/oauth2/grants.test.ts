// The grant strategies of lib/oauth2 against a real oidc-provider: client_credentials with a resource
// indicator (JWT access tokens checked against the server's JWKS), password, refresh_token (rotation and a
// server that omits the refresh token), the RFC 7523 JWT bearer assertion, auto-refresh and raiseErrors.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { type CryptoKey, createRemoteJWKSet, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessToken, Client, OAuth2Error, TokenError } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  FORGE_API_RESOURCE,
  JWT_BEARER_GRANT,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

const CLIENT_ID = 'grants-client';
const CLIENT_SECRET = 'grants-client-secret';
const KEEPER_ID = 'keeper-client';
const KEEPER_SECRET = 'keeper-client-secret';
const ASSERTION_ISSUER = 'forge-ci';
const OTHER_RESOURCE = 'https://api.forge.test/v2';
const grantTypes = ['client_credentials', 'password', 'refresh_token', JWT_BEARER_GRANT];

let server: AuthorizationServer;
let client: Client;
let password: string;
let assertionKey: CryptoKey;
let strangerKey: CryptoKey;

const now = (): number => Math.floor(Date.now() / 1000);

async function rejection(promise: Promise<unknown>): Promise<OAuth2Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuth2Error);
  return error as OAuth2Error;
}

const HMAC_SECRET = 'a shared secret of at least thirty-two bytes';
const pem = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

beforeAll(async () => {
  const trusted = await generateKeyPair('ES256');
  assertionKey = trusted.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const common = { grant_types: grantTypes, response_types: [], redirect_uris: [] };
  server = await startAuthorizationServer({
    devInteractions: false,
    clients: [
      {
        ...common,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        scope: 'openid profile forge:read forge:write',
      },
      { ...common, client_id: KEEPER_ID, client_secret: KEEPER_SECRET, scope: 'openid' },
    ],
    assertionIssuers: [
      { issuer: ASSERTION_ISSUER, key: trusted.publicKey, algorithms: ['ES256'] },
      { issuer: 'hmac-issuer', key: new TextEncoder().encode(HMAC_SECRET), algorithms: ['HS256'] },
      { issuer: 'pem-issuer', key: createPublicKey(pem.publicKey), algorithms: ['RS256'] },
    ],
    omitRefreshTokenOnRefresh: [KEEPER_ID],
    resources: {
      [FORGE_API_RESOURCE]: { scope: 'forge:read forge:write' },
      [OTHER_RESOURCE]: { scope: 'forge:read', accessTokenTtl: 120 },
    },
  });
  password = server.accounts.alice!.password;
  client = new Client(CLIENT_ID, CLIENT_SECRET, { site: server.issuer });
});

afterAll(async () => {
  await server?.stop();
});

describe('clientCredentials.getToken()', () => {
  it('gets a JWT access token for a resource that verifies against the server JWKS', async () => {
    server.resetCounters();
    const token = await client.clientCredentials.getToken({
      resource: FORGE_API_RESOURCE,
      scope: 'forge:read',
    });

    const { payload, protectedHeader } = await jwtVerify(
      token.token,
      createRemoteJWKSet(new URL(server.jwksUri)),
      {
        issuer: server.issuer,
        audience: FORGE_API_RESOURCE,
        typ: 'at+jwt',
      },
    );
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.client_id).toBe(CLIENT_ID);
    expect(payload.scope).toBe('forge:read');
    expect(token.params.token_type).toBe('Bearer');
    expect(token.params.scope).toBe('forge:read');
    expect(token.expiresAt).toBeGreaterThanOrEqual(now() + 3590);
    expect(token.expiresAt).toBeLessThanOrEqual(now() + 3600);
    expect(token.expired()).toBe(false);
    expect(server.tokenRequests('client_credentials')).toBe(1);
  });

  it('gets an opaque token without a resource', async () => {
    const token = await client.clientCredentials.getToken();
    expect(token.token).toMatch(/^[\w-]{40,}$/);
    expect(token.token.split('.')).toHaveLength(1);
  });

  it("uses the resource's own lifetime for its tokens", async () => {
    const token = await client.clientCredentials.getToken({ resource: OTHER_RESOURCE, scope: 'forge:read' });
    expect(token.expiresIn).toBe(120);
    expect(token.expiresAt).toBeLessThanOrEqual(now() + 120);
  });

  it('sends an array parameter as repeated keys: both resources reach the server', async () => {
    const error = await rejection(
      client.clientCredentials.getToken({ resource: [FORGE_API_RESOURCE, OTHER_RESOURCE] }),
    );
    expect(error.code).toBe('invalid_target');
    expect(error.description).toBe('only a single resource indicator value is supported for this grant type');
  });

  it('rejects an unknown resource with invalid_target', async () => {
    const error = await rejection(client.clientCredentials.getToken({ resource: 'urn:unknown:api' }));
    expect(error.code).toBe('invalid_target');
    expect(error.response.status).toBe(400);
    expect(error.message).toMatch(/^invalid_target: /);
  });

  it('sends a JSON body when the headers ask for it, which this server refuses', async () => {
    const error = await rejection(
      client.clientCredentials.getToken({ headers: { 'Content-Type': 'application/json' } }),
    );
    expect(error.code).toBe('invalid_request');
    expect(error.description).toMatch(
      /only application\/x-www-form-urlencoded content-type bodies are supported/,
    );
  });

  it('rejects a wrong client secret with invalid_client', async () => {
    const wrong = new Client(CLIENT_ID, 'not-the-secret', { site: server.issuer });
    const error = await rejection(wrong.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
    expect(error.response.status).toBe(401);
    expect(error.message).not.toContain('not-the-secret');
  });
});

describe('password.getToken()', () => {
  it('gets an access and a refresh token for the right password, usable at the userinfo endpoint', async () => {
    const token = await client.password.getToken('alice', password, { scope: 'openid profile' });
    expect(token.refreshToken).toEqual(expect.any(String));
    const userinfo = await token.get('oauth/userinfo');
    expect(userinfo.status).toBe(200);
    expect(userinfo.parsed).toMatchObject({ sub: 'alice', name: 'Alice' });
  });

  it('fails with invalid_grant for a wrong password', async () => {
    const error = await rejection(client.password.getToken('alice', `${password}-wrong`));
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('invalid resource owner credentials');
    expect(error.response.status).toBe(400);
    expect(error.message).toMatch(/^invalid_grant: invalid resource owner credentials\n/);
  });

  it('fails with invalid_grant for an unknown user', async () => {
    const error = await rejection(client.password.getToken('mallory', password));
    expect(error.code).toBe('invalid_grant');
  });
});

describe('AccessToken#refresh()', () => {
  it('gets a new token and a rotated refresh token; the old refresh token is then refused', async () => {
    const first = await client.password.getToken('alice', password, { scope: 'openid' });
    const second = await first.refresh();

    expect(second.token).not.toBe(first.token);
    expect(second.refreshToken).toEqual(expect.any(String));
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await second.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });

    const reuse = await rejection(first.refresh());
    expect(reuse.code).toBe('invalid_grant');
  });

  it('keeps the old refresh token when the response omits it, and it keeps working', async () => {
    const keeper = new Client(KEEPER_ID, KEEPER_SECRET, { site: server.issuer });
    const first = await keeper.password.getToken('alice', password, { scope: 'openid' });
    server.resetCounters();

    const second = await first.refresh();
    expect(second.response?.parsed).not.toHaveProperty('refresh_token');
    expect(second.refreshToken).toBe(first.refreshToken);
    const third = await second.refresh();
    expect(third.refreshToken).toBe(first.refreshToken);
    expect(third.token).not.toBe(second.token);
    expect(server.tokenRequests('refresh_token')).toBe(2);
  });

  it('rejects with missing_refresh_token when there is none', async () => {
    const token = await client.clientCredentials.getToken();
    await expect(token.refresh()).rejects.toThrow(TokenError);
    await expect(token.refresh()).rejects.toMatchObject({ code: 'missing_refresh_token' });
  });
});

describe('assertion.getToken() (RFC 7523 JWT bearer)', () => {
  const claims = (overrides: Record<string, unknown> = {}) => ({
    iss: ASSERTION_ISSUER,
    sub: 'alice',
    aud: server.tokenEndpoint,
    exp: now() + 300,
    ...overrides,
  });

  it('gets a token for a valid assertion, acting for its subject', async () => {
    const token = await client.assertion.getToken(
      claims(),
      { algorithm: 'ES256', key: assertionKey },
      { scope: 'openid' },
    );
    expect(token.refreshToken).toBeUndefined();
    expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
  });

  it("accepts the gem's [claims, algorithm, key] form and a resource", async () => {
    const token = await client.assertion.getToken([claims(), 'ES256', assertionKey], {
      resource: FORGE_API_RESOURCE,
      scope: 'forge:write',
    });
    const { payload } = await jwtVerify(token.token, createRemoteJWKSet(new URL(server.jwksUri)), {
      audience: FORGE_API_RESOURCE,
    });
    expect(payload).toMatchObject({ sub: 'alice', scope: 'forge:write', client_id: CLIENT_ID });
  });

  it("signs with the gem's string keys: an HMAC secret and a PEM private key", async () => {
    const hmac = await client.assertion.getToken([claims({ iss: 'hmac-issuer' }), 'HS256', HMAC_SECRET], {
      scope: 'openid',
    });
    const rsa = await client.assertion.getToken([claims({ iss: 'pem-issuer' }), 'RS256', pem.privateKey], {
      scope: 'openid',
    });
    for (const token of [hmac, rsa]) {
      expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
    }
  });

  it('fails for an assertion made with the wrong HMAC secret', async () => {
    const error = await rejection(
      client.assertion.getToken([claims({ iss: 'hmac-issuer' }), 'HS256', `${HMAC_SECRET}!`]),
    );
    expect(error.description).toBe('assertion rejected: signature verification failed');
  });

  it('fails for an expired assertion', async () => {
    const error = await rejection(
      client.assertion.getToken(claims({ exp: now() - 60 }), { algorithm: 'ES256', key: assertionKey }),
    );
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('assertion rejected: "exp" claim timestamp check failed');
  });

  it('fails for an assertion meant for another audience', async () => {
    const error = await rejection(
      client.assertion.getToken(claims({ aud: 'https://elsewhere.test/token' }), {
        algorithm: 'ES256',
        key: assertionKey,
      }),
    );
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('assertion rejected: unexpected "aud" claim value');
  });

  it('fails for an assertion signed with another key', async () => {
    const error = await rejection(
      client.assertion.getToken(claims(), { algorithm: 'ES256', key: strangerKey }),
    );
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('assertion rejected: signature verification failed');
  });

  it('fails for an assertion from an untrusted issuer', async () => {
    const error = await rejection(
      client.assertion.getToken(claims({ iss: 'someone-else' }), { algorithm: 'ES256', key: assertionKey }),
    );
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('assertion "iss" is not a trusted issuer');
  });
});

describe('auto-refresh', () => {
  it('refreshes an expired token before the request, once for concurrent callers', async () => {
    const fresh = await client.password.getToken('alice', password, { scope: 'openid' });
    const stale = AccessToken.fromHash(client, {
      ...fresh.toHash(),
      expires_at: now() - 5,
      auto_refresh: true,
    });
    expect(stale.expired()).toBe(true);
    server.resetCounters();

    const responses = await Promise.all(Array.from({ length: 5 }, () => stale.get('oauth/userinfo')));

    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(server.tokenRequests('refresh_token')).toBe(1);
    expect(server.tokenRequests()).toBe(1);
    expect(stale.expired()).toBe(false);
    expect(stale.token).not.toBe(fresh.token);
    expect(stale.refreshToken).not.toBe(fresh.refreshToken);
  });

  it('calls onRefresh once with the refreshed token', async () => {
    const fresh = await client.password.getToken('alice', password, { scope: 'openid' });
    const seen: string[] = [];
    const stale = AccessToken.fromHash(client, {
      ...fresh.toHash(),
      expires_at: now() - 5,
      auto_refresh: true,
      onRefresh: (token: AccessToken) => void seen.push(token.token),
    });
    await Promise.all([stale.get('oauth/userinfo'), stale.get('oauth/userinfo')]);
    expect(seen).toEqual([stale.token]);
  });

  it('re-acquires a client_credentials token through a custom refresher', async () => {
    const first = await client.clientCredentials.getToken({ scope: 'openid' });
    const stale = AccessToken.fromHash(client, {
      ...first.toHash(),
      expires_at: now() - 5,
      autoRefresh: () => client.clientCredentials.getToken({ scope: 'openid' }),
    });
    server.resetCounters();
    await Promise.all([stale.get('oauth/jwks'), stale.get('oauth/jwks'), stale.get('oauth/jwks')]);
    expect(server.tokenRequests('client_credentials')).toBe(1);
    expect(stale.token).not.toBe(first.token);
    expect(stale.expired()).toBe(false);
  });

  it('rejects every waiting caller when the refresh is refused, and tries again on the next call', async () => {
    const fresh = await client.password.getToken('alice', password, { scope: 'openid' });
    await client.revokeToken(fresh.refreshToken!, 'refresh_token');
    const stale = AccessToken.fromHash(client, {
      ...fresh.toHash(),
      expires_at: now() - 5,
      auto_refresh: true,
    });
    server.resetCounters();

    const results = await Promise.allSettled([stale.get('oauth/userinfo'), stale.get('oauth/userinfo')]);

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({
        name: 'OAuth2Error',
        code: 'invalid_grant',
      });
    }
    expect(server.tokenRequests('refresh_token')).toBe(1);
    await expect(stale.get('oauth/userinfo')).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(server.tokenRequests('refresh_token')).toBe(2);
  });

  it('does not refresh an expired token unless asked to', async () => {
    const fresh = await client.password.getToken('alice', password, { scope: 'openid' });
    const stale = AccessToken.fromHash(client, { ...fresh.toHash(), expires_at: now() - 5 });
    server.resetCounters();
    expect((await stale.get('oauth/userinfo')).status).toBe(200);
    expect(server.tokenRequests()).toBe(0);
    expect(stale.token).toBe(fresh.token);
  });
});

describe('token modes at the userinfo endpoint', () => {
  it('sends the token in the query with mode "query"', async () => {
    const token = await client.password.getToken('alice', password, { scope: 'openid' }, { mode: 'query' });
    const seen: string[] = [];
    const spy = new Client(CLIENT_ID, CLIENT_SECRET, {
      site: server.issuer,
      connection: {
        onRequest: (request) => void seen.push(request.url, request.headers.authorization ?? ''),
      },
    });
    const viaQuery = AccessToken.fromHash(spy, token.toHash());
    expect((await viaQuery.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
    expect(new URL(seen[0]!).searchParams.get('access_token')).toBe(token.token);
    expect(seen[1]).toBe('');
  });

  it('calls an absolute URL with the token, whatever the client site', async () => {
    const elsewhere = new Client(CLIENT_ID, CLIENT_SECRET, { site: 'http://127.0.0.1:9/unused' });
    const hash = (await client.password.getToken('alice', password, { scope: 'openid' })).toHash();
    const token = AccessToken.fromHash(elsewhere, hash);
    expect((await token.get(`${server.issuer}/oauth/userinfo`)).parsed).toMatchObject({ sub: 'alice' });
  });

  it('sends the token in the form body with mode "body"', async () => {
    const token = await client.password.getToken('alice', password, { scope: 'openid' }, { mode: 'body' });
    const response = await token.post('oauth/userinfo');
    expect(response.parsed).toMatchObject({ sub: 'alice' });
  });

  it('picks the mode per verb, from an object or a function', async () => {
    const hash = (await client.password.getToken('alice', password, { scope: 'openid' })).toHash();
    const byObject = AccessToken.fromHash(client, { ...hash, mode: { get: 'query', post: 'body' } });
    const byFunction = AccessToken.fromHash(client, {
      ...hash,
      mode: (verb: string) => (verb === 'get' ? 'header' : 'body'),
    });
    for (const token of [byObject, byFunction]) {
      expect((await token.get('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
      expect((await token.post('oauth/userinfo')).parsed).toMatchObject({ sub: 'alice' });
    }
  });

  it('is refused by the server when the token is sent two ways at once', async () => {
    const token = await client.password.getToken('alice', password, { scope: 'openid' }, { mode: 'query' });
    const error = await rejection(
      token.get('oauth/userinfo', { headers: { authorization: `Bearer ${token.token}` } }),
    );
    expect(error.code).toBe('invalid_request');
  });
});

describe('raiseErrors: false', () => {
  it('returns the error response of a refused token request instead of throwing', async () => {
    const lenient = new Client(CLIENT_ID, 'not-the-secret', { site: server.issuer, raiseErrors: false });
    const response = await lenient.tokenRequest(lenient.tokenUrl(), { grant_type: 'client_credentials' });
    expect(response.status).toBe(401);
    expect(response.error).toBeInstanceOf(OAuth2Error);
    expect(response.error?.code).toBe('invalid_client');
    expect(response.parsed).toMatchObject({ error: 'invalid_client' });
  });

  it('returns a 401 from a protected endpoint as a response holding the error', async () => {
    const lenient = new Client(CLIENT_ID, CLIENT_SECRET, { site: server.issuer, raiseErrors: false });
    const bogus = new AccessToken(lenient, 'not-a-real-token');
    const response = await bogus.get('oauth/userinfo');
    expect(response.status).toBe(401);
    expect(response.error?.code).toBe('invalid_token');
  });
});
