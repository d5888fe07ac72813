import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { finishLogin, makeClient, startLogin } from '../../../examples/oauth2/authorization-code-pkce.js';
import { clientCredentials } from '../../../examples/oauth2/client-credentials.js';
import { discover } from '../../../examples/oauth2/discovery.js';
import { tryBadSecret, withoutThrowing } from '../../../examples/oauth2/errors.js';
import { assertionGrant } from '../../../examples/oauth2/jwt-bearer-assertion.js';
import { privateKeyJwt } from '../../../examples/oauth2/private-key-jwt.js';
import { callApiWithStoredToken } from '../../../examples/oauth2/refresh-and-store.js';
import { codeChallenge } from '../../../lib/oauth2/index.js';

const SITE = 'https://id.example.test';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const agent = new MockAgent();
agent.disableNetConnect();
const pool = agent.get(SITE);
const connection = { dispatcher: agent };
afterEach(() => agent.assertNoPendingInterceptors());

function form(body: unknown): URLSearchParams {
  return new URLSearchParams(String(body));
}

describe('examples/oauth2', () => {
  it('client-credentials: gets a token for a resource and reloads it from its stored hash', async () => {
    let sent: URLSearchParams | undefined;
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
      200,
      (o) => {
        sent = form(o.body);
        return { access_token: 'at', token_type: 'Bearer', expires_in: 300 };
      },
      JSON_HEADERS,
    );
    const result = await clientCredentials({ site: SITE, clientId: 'c', clientSecret: 's' }, connection);
    expect(sent?.get('resource')).toBe('urn:forgebridge:forge-api');
    expect(result).toMatchObject({ expired: false, tokenType: 'Bearer' });
  });

  it('authorization-code-pkce: sends the challenge, then the verifier with the code', async () => {
    const client = makeClient(SITE, connection);
    const { url, verifier, state } = startLogin(client, 'https://app.test/cb');
    expect(new URL(url).searchParams.get('code_challenge')).toBe(codeChallenge(verifier));
    let sent: URLSearchParams | undefined;
    pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
      200,
      (o) => {
        sent = form(o.body);
        return { access_token: 'user-token' };
      },
      JSON_HEADERS,
    );
    const token = await finishLogin(client, `https://app.test/cb?code=c0de&state=${state}`, {
      verifier,
      state,
      redirectUri: 'https://app.test/cb',
    });
    expect(token).toBe('user-token');
    expect(sent?.get('code_verifier')).toBe(verifier);
    await expect(
      finishLogin(client, 'https://app.test/cb?code=c&state=forged', { verifier, state, redirectUri: 'x' }),
    ).rejects.toThrow('state mismatch');
  });

  it('refresh-and-store: refreshes the expired stored token once and writes the new one back', async () => {
    const stored: Array<Record<string, unknown>> = [];
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, { access_token: 'new', expires_in: 3600 }, JSON_HEADERS);
    pool
      .intercept({ path: '/api/repos', method: 'GET', headers: { authorization: 'Bearer new' } })
      .reply(200, [{ name: 'forgebridge' }], JSON_HEADERS);
    const store = {
      get: async () => ({ access_token: 'old', refresh_token: 'rt', expires_at: 1_000 }),
      put: async (hash: Record<string, unknown>) => {
        stored.push(hash);
      },
    };
    expect(await callApiWithStoredToken(SITE, store, connection)).toEqual([{ name: 'forgebridge' }]);
    expect(stored[0]).toMatchObject({ access_token: 'new', refresh_token: 'rt' });
  });

  it('discovery: reads the endpoints from the OpenID configuration', async () => {
    pool
      .intercept({ path: '/.well-known/openid-configuration', method: 'GET' })
      .reply(
        200,
        { issuer: SITE, token_endpoint: `${SITE}/token`, grant_types_supported: ['client_credentials'] },
        JSON_HEADERS,
      );
    expect(await discover({ site: SITE, clientId: 'c', clientSecret: 's' }, connection)).toEqual({
      tokenUrl: `${SITE}/token`,
      grants: ['client_credentials'],
    });
  });

  it('private-key-jwt and jwt-bearer-assertion: send JWTs signed with the given key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportPKCS8(privateKey);
    const bodies: URLSearchParams[] = [];
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(
        200,
        (o) => {
          bodies.push(form(o.body));
          return { access_token: 'at' };
        },
        JSON_HEADERS,
      )
      .times(2);
    expect(await privateKeyJwt(SITE, 'pkjwt-client', pem, connection)).toBe('at');
    expect(await assertionGrant(SITE, pem, connection)).toBe('at');
    const clientAssertion = await jwtVerify(bodies[0]?.get('client_assertion') ?? '', publicKey);
    expect(clientAssertion.payload.iss).toBe('pkjwt-client');
    const grant = await jwtVerify(bodies[1]?.get('assertion') ?? '', publicKey);
    expect(grant.payload.sub).toBe('alice');
  });

  it('errors: reports the provider error code, or returns the response holding it', async () => {
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(
        401,
        { error: 'invalid_client', error_description: 'client authentication failed' },
        JSON_HEADERS,
      )
      .times(2);
    expect(await tryBadSecret(SITE, connection)).toBe('invalid_client (401)');
    expect(await withoutThrowing(SITE, connection)).toBe(401);
  });
});
