import { exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AccessToken,
  Client,
  codeChallenge,
  GrantTypes,
  generateCodeVerifier,
} from '../../../lib/oauth2/index.js';
import { parseQuery } from '../../../lib/oauth2/url.js';
import { type Captured, mockAgent, mockClient, SITE, tokenEndpoint } from './helpers.js';

const agent = mockAgent();
const pool = agent.get(SITE);
afterEach(() => agent.assertNoPendingInterceptors());

describe('PKCE helpers', () => {
  it('computes the RFC 7636 S256 vector', () => {
    expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('generates distinct 43-character base64url verifiers', () => {
    const a = generateCodeVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateCodeVerifier()).not.toBe(a);
  });

  it('rejects a verifier outside RFC 7636 §4.1', () => {
    expect(() => codeChallenge('short')).toThrow(
      new TypeError(`"code_verifier" must be 43 to 128 characters of [A-Za-z0-9-._~]`),
    );
  });
});

describe('authCode', () => {
  const client = new Client('client-id', 'secret', { site: `${SITE}/realm` });

  it('builds the authorize URL with client_id, a percent-encoded redirect_uri, response_type=code and extras', () => {
    const url = new URL(
      client.authCode.authorizeUrl({ redirect_uri: 'https://app.test/cb?x=1 2', scope: 'openid' }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(`${SITE}/realm/oauth/authorize`);
    expect(url.search).toBe(
      '?client_id=client-id&redirect_uri=https%3A%2F%2Fapp.test%2Fcb%3Fx%3D1%202&response_type=code&scope=openid',
    );
  });

  it('adds the S256 challenge for a code_verifier and never sends the verifier', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const q = parseQuery(new URL(client.authCode.authorizeUrl({ code_verifier: verifier })).search);
    expect(q).toEqual({
      client_id: 'client-id',
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  });

  it('invents no challenge without a verifier', () => {
    expect(client.authCode.authorizeUrl()).not.toContain('code_challenge');
  });

  it('refuses a client_secret in the authorize URL', () => {
    expect(() => client.authCode.authorizeUrl({ client_secret: 'x' })).toThrow(
      new TypeError(`"client_secret" is not allowed in the authorize URL`),
    );
  });

  it('exchanges the code with redirect_uri, code_verifier and extra headers', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    const token = await mockClient(agent).authCode.getToken('code-1', {
      redirect_uri: 'https://app.test/cb',
      code_verifier: 'v'.repeat(43),
      headers: { 'X-Trace': 't1' },
    });
    expect(token.token).toBe('at');
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      grant_type: 'authorization_code',
      code: 'code-1',
      redirect_uri: 'https://app.test/cb',
      code_verifier: 'v'.repeat(43),
    });
    expect(seen[0]?.headers['x-trace']).toBe('t1');
  });

  it('uses the client redirectUri when configured', () => {
    const c = new Client('id', 's', { site: SITE, redirectUri: 'https://app.test/cb' });
    expect(c.authCode.authorizeUrl()).toContain('redirect_uri=https%3A%2F%2Fapp.test%2Fcb');
  });
});

describe('implicit', () => {
  it('builds the authorize URL with response_type=token, and the callback is read with fromKvform', () => {
    const client = new Client('client-id', 'secret', { site: SITE });
    const url = client.implicit.authorizeUrl({ redirect_uri: 'https://app.test/cb' });
    expect(url).toBe(
      `${SITE}/oauth/authorize?client_id=client-id&redirect_uri=https%3A%2F%2Fapp.test%2Fcb&response_type=token`,
    );
    const token = AccessToken.fromKvform(client, 'access_token=frag-token&token_type=bearer&expires_in=60');
    expect(token.token).toBe('frag-token');
    expect(() => client.implicit.getToken()).toThrow(TypeError);
  });
});

describe('password', () => {
  it('posts grant_type=password with username, password and extras', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent).password.getToken('alice', 'p@ss word', { scope: 'read' });
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      grant_type: 'password',
      username: 'alice',
      password: 'p@ss word',
      scope: 'read',
    });
  });
});

describe('clientCredentials', () => {
  it('posts grant_type=client_credentials with repeated resource params', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent).clientCredentials.getToken({ resource: ['https://a.test', 'https://b.test'] });
    expect(seen[0]?.body).toBe(
      'grant_type=client_credentials&resource=https%3A%2F%2Fa.test&resource=https%3A%2F%2Fb.test',
    );
  });
});

describe('assertion (RFC 7523)', () => {
  it('signs the claims with jose and posts them as the jwt-bearer assertion', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const pem = await exportPKCS8(privateKey);
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    const exp = Math.floor(Date.now() / 1000) + 300;
    const claims = { iss: 'issuer-app', sub: 'user-1', aud: `${SITE}/oauth/token`, exp };
    await mockClient(agent).assertion.getToken(
      claims,
      { algorithm: 'RS256', key: pem, kid: 'a1' },
      { scope: 'read' },
    );
    const body = parseQuery(seen[0]?.body ?? '') as Record<string, string>;
    expect(body.grant_type).toBe(GrantTypes.JwtBearer);
    expect(body.scope).toBe('read');
    const { payload, protectedHeader } = await jwtVerify(body.assertion ?? '', publicKey);
    expect(payload).toEqual(claims);
    // The gem's header: alg and kid, no typ.
    expect(protectedHeader).toEqual({ alg: 'RS256', kid: 'a1' });
  });

  it("accepts the spec's [claimset, algorithm, key] form with an HMAC key", async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    const secret = 'a-shared-secret-of-enough-length-32b';
    const claims = { iss: 'i', sub: 's', aud: 'a', exp: Math.floor(Date.now() / 1000) + 60 };
    await mockClient(agent).assertion.getToken([claims, 'HS256', secret]);
    const body = parseQuery(seen[0]?.body ?? '') as Record<string, string>;
    const { payload, protectedHeader } = await jwtVerify(
      body.assertion ?? '',
      new TextEncoder().encode(secret),
    );
    expect(payload).toEqual(claims);
    expect(protectedHeader).toEqual({ alg: 'HS256' });
  });

  it('requires the encoding', async () => {
    await expect(mockClient(agent).assertion.getToken({ iss: 'x' }, undefined as never)).rejects.toThrow(
      new TypeError(`"encoding" with "algorithm" and "key" is required`),
    );
  });
});
