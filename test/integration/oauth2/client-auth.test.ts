// Client authentication at the token endpoint (RFC 6749 §2.3, RFC 7523 §2.2) against oidc-provider, each
// client registered with exactly one method, so a success proves the method the library used.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type HttpRequest, OAuth2Error } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

// RFC 6749 §2.3.1: id and secret are form-encoded before base64; these characters prove it.
const SPECIAL_SECRET = 'se+cr et%:&=/?#~';
const cc = { grant_types: ['client_credentials'], response_types: [], redirect_uris: [] };

let server: AuthorizationServer;
let privateJwk: JWK;
let strangerJwk: JWK;

async function failure(promise: Promise<unknown>): Promise<OAuth2Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuth2Error);
  return error as OAuth2Error;
}

const rsa = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'pkjwt-1', alg: 'ES256' };
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'pkjwt-1', alg: 'ES256', use: 'sig' };
  const stranger = await generateKeyPair('ES256', { extractable: true });
  strangerJwk = { ...(await exportJWK(stranger.privateKey)), kid: 'pkjwt-1', alg: 'ES256' };
  server = await startAuthorizationServer({
    devInteractions: false,
    clients: [
      {
        ...cc,
        client_id: 'basic-client',
        client_secret: SPECIAL_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        ...cc,
        client_id: 'id with:colon',
        client_secret: 'plain',
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        ...cc,
        client_id: 'post-client',
        client_secret: SPECIAL_SECRET,
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        ...cc,
        client_id: 'jwt-client',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [publicJwk] },
      },
      {
        ...cc,
        client_id: 'pem-client',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: {
          keys: [{ ...createPublicKey(rsa.publicKey).export({ format: 'jwk' }), use: 'sig', alg: 'RS256' }],
        },
      },
    ],
  });
});

afterAll(async () => {
  await server?.stop();
});

describe('basic_auth', () => {
  it('authenticates with a secret containing "+ %:&"', async () => {
    const client = new Client('basic-client', SPECIAL_SECRET, { site: server.issuer });
    const token = await client.clientCredentials.getToken();
    expect(token.token).toEqual(expect.any(String));
  });

  it('authenticates a client id containing a colon and a space', async () => {
    const client = new Client('id with:colon', 'plain', { site: server.issuer, authScheme: 'basic_auth' });
    expect((await client.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });

  it("is refused in the gem's unencoded form for such a secret (why form encoding is the default)", async () => {
    const client = new Client('basic-client', SPECIAL_SECRET, {
      site: server.issuer,
      basicAuthEncoding: 'none',
    });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_request');
    expect(error.description).toBe(
      'client_id and client_secret in the authorization header are not properly encoded',
    );
  });

  it('is refused with invalid_client for a wrong secret', async () => {
    const client = new Client('basic-client', `${SPECIAL_SECRET}x`, { site: server.issuer });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
    expect(error.response.status).toBe(401);
  });
});

describe('request_body', () => {
  it('authenticates with client_id and client_secret in the form body and no Authorization header', async () => {
    const sent: HttpRequest[] = [];
    const client = new Client('post-client', SPECIAL_SECRET, {
      site: server.issuer,
      authScheme: 'request_body',
      connection: { onRequest: (request) => void sent.push(structuredClone(request)) },
    });
    expect((await client.clientCredentials.getToken()).token).toEqual(expect.any(String));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers).not.toHaveProperty('authorization');
    const form = new URLSearchParams(String(sent[0]!.body));
    expect(form.get('client_id')).toBe('post-client');
    expect(form.get('client_secret')).toBe(SPECIAL_SECRET);
    expect(form.get('grant_type')).toBe('client_credentials');
  });

  it('is refused with invalid_client for a wrong secret in the body', async () => {
    const client = new Client('post-client', 'wrong', { site: server.issuer, authScheme: 'request_body' });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
  });
});

describe('private_key_jwt', () => {
  it('authenticates with a signed client assertion, a fresh one for every request', async () => {
    const client = new Client('jwt-client', undefined, {
      site: server.issuer,
      authScheme: 'private_key_jwt',
      privateKey: privateJwk,
      privateKeyAlg: 'ES256',
      keyId: 'pkjwt-1',
    });
    // The server remembers each assertion's jti: a reused assertion would fail the second request.
    const first = await client.clientCredentials.getToken();
    const second = await client.clientCredentials.getToken();
    expect(second.token).not.toBe(first.token);
  });

  it('signs with a PEM private key and the default RS256', async () => {
    const client = new Client('pem-client', undefined, {
      site: server.issuer,
      authScheme: 'private_key_jwt',
      privateKey: rsa.privateKey,
    });
    expect((await client.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });

  it('is refused with invalid_client when signed with a key the client did not register', async () => {
    const client = new Client('jwt-client', undefined, {
      site: server.issuer,
      authScheme: 'private_key_jwt',
      privateKey: strangerJwk,
      privateKeyAlg: 'ES256',
      keyId: 'pkjwt-1',
    });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
  });
});
