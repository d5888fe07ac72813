import { exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { basicAuthHeader, CLIENT_ASSERTION_TYPE, Client } from '../../../lib/oauth2/index.js';
import { parseQuery } from '../../../lib/oauth2/url.js';
import { type Captured, mockAgent, mockClient, SITE, tokenEndpoint } from './helpers.js';

const agent = mockAgent();
const pool = agent.get(SITE);
afterEach(() => agent.assertNoPendingInterceptors());

describe('basic_auth', () => {
  it('form-encodes id and secret before base64 (RFC 6749 §2.3.1), with no client_id in the body', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent, {}, 'my client', 'a+b %:&c').clientCredentials.getToken();
    const header = seen[0]?.headers.authorization ?? '';
    expect(header.startsWith('Basic ')).toBe(true);
    expect(Buffer.from(header.slice(6), 'base64').toString()).toBe('my+client:a%2Bb+%25%3A%26c');
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({ grant_type: 'client_credentials' });
  });

  it("sends the gem's unencoded form with basicAuthEncoding: 'none'", async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent, { basicAuthEncoding: 'none' }, 'id', 'a+b %:&c').clientCredentials.getToken();
    expect(seen[0]?.headers.authorization).toBe(`Basic ${Buffer.from('id:a+b %:&c').toString('base64')}`);
  });

  it('sends client_id in the body for a public client without a secret', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await new Client('public', undefined, {
      site: SITE,
      connection: { dispatcher: agent },
    }).authCode.getToken('the-code', { code_verifier: 'v'.repeat(43) });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(parseQuery(seen[0]?.body ?? '')).toMatchObject({ client_id: 'public', code: 'the-code' });
  });

  it('builds the header value with basicAuthHeader()', () => {
    expect(basicAuthHeader('id', 'a+b')).toBe(`Basic ${Buffer.from('id:a%2Bb').toString('base64')}`);
  });
});

describe('request_body', () => {
  it('sends client_id and client_secret as form fields and no Authorization', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent, { authScheme: 'request_body' }).clientCredentials.getToken({ scope: 'read' });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      grant_type: 'client_credentials',
      scope: 'read',
      client_id: 'client-id',
      client_secret: 'client-secret',
    });
  });
});

describe('tls_client_auth', () => {
  it('sends client_id in the body, no secret and no Authorization', async () => {
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    await mockClient(agent, { authScheme: 'tls_client_auth' }).clientCredentials.getToken();
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(parseQuery(seen[0]?.body ?? '')).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-id',
    });
  });
});

describe('private_key_jwt', () => {
  it('sends a client_assertion signed with the key: iss = sub = client_id, aud = token endpoint, jti, iat, exp', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportPKCS8(privateKey);
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    tokenEndpoint(pool, seen);
    const client = mockClient(agent, {
      authScheme: 'private_key_jwt',
      privateKey: pem,
      privateKeyAlg: 'ES256',
      keyId: 'k1',
    });
    await client.clientCredentials.getToken();
    await client.clientCredentials.getToken();
    const body = parseQuery(seen[0]?.body ?? '') as Record<string, string>;
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(body.client_id).toBe('client-id');
    expect(body.client_assertion_type).toBe(CLIENT_ASSERTION_TYPE);
    const { payload, protectedHeader } = await jwtVerify(body.client_assertion ?? '', publicKey, {
      issuer: 'client-id',
      subject: 'client-id',
      audience: `${SITE}/oauth/token`,
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: 'k1' });
    expect(typeof payload.jti).toBe('string');
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    const second = parseQuery(seen[1]?.body ?? '') as Record<string, string>;
    const again = await jwtVerify(second.client_assertion ?? '', publicKey);
    expect(again.payload.jti).not.toBe(payload.jti);
  });

  it('takes a JWK with its alg and kid, and a configured audience', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'jwk-kid' };
    const seen: Captured[] = [];
    tokenEndpoint(pool, seen);
    const client = mockClient(agent, {
      authScheme: 'private_key_jwt',
      privateKey: jwk,
      assertionAudience: SITE,
    });
    await client.clientCredentials.getToken();
    const body = parseQuery(seen[0]?.body ?? '') as Record<string, string>;
    const { protectedHeader } = await jwtVerify(body.client_assertion ?? '', publicKey, { audience: SITE });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: 'jwk-kid' });
  });

  it('rejects a key that cannot sign with SigningError', async () => {
    const client = mockClient(agent, {
      authScheme: 'private_key_jwt',
      privateKey: '-----BEGIN PRIVATE KEY-----\nbm9wZQ==\n-----END PRIVATE KEY-----',
    });
    const error = await client.clientCredentials.getToken().catch((e: unknown) => e);
    expect((error as Error).name).toBe('SigningError');
    expect((error as { code: string }).code).toBe('signing_failed');
    expect((error as Error).message).toBe('could not sign the JWT with algorithm "RS256"');
  });
});
