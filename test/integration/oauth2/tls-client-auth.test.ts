// tls_client_auth (RFC 8705 §2.1): the authorization server runs over HTTPS and asks for a client
// certificate; the library presents a real one, generated for this run and signed by a test CA.
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ConnectionError, OAuth2Error } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { createTestCertificates, type TestCertificates } from '../../helpers/oauth2-certs.js';

const cc = { grant_types: ['client_credentials'], response_types: [], redirect_uris: [] };

let certs: TestCertificates;
let server: AuthorizationServer;
// The server's own reason for refusing (oidc-provider keeps it out of the response, in error_detail).
const refusals: string[] = [];

function mtlsClient(clientId: string, tls: { cert?: string; key?: string; ca: string }): Client {
  return new Client(clientId, undefined, {
    site: server.issuer,
    authScheme: 'tls_client_auth',
    connection: { tls },
  });
}

async function failure(promise: Promise<unknown>): Promise<OAuth2Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuth2Error);
  return error as OAuth2Error;
}

beforeAll(async () => {
  certs = await createTestCertificates();
  server = await startAuthorizationServer({
    devInteractions: false,
    tls: { key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert },
    clients: [
      {
        ...cc,
        client_id: 'mtls-dn',
        token_endpoint_auth_method: 'tls_client_auth',
        tls_client_auth_subject_dn: certs.clientSubjectDn,
      },
      {
        ...cc,
        client_id: 'mtls-san',
        token_endpoint_auth_method: 'tls_client_auth',
        tls_client_auth_san_dns: certs.clientSanDns,
      },
      {
        ...cc,
        client_id: 'mtls-other',
        token_endpoint_auth_method: 'tls_client_auth',
        tls_client_auth_subject_dn: 'CN=someone-else',
      },
    ],
  });
  server.provider.on('grant.error', (_ctx, error) => {
    refusals.push(String((error as { error_detail?: string }).error_detail));
  });
});

afterAll(async () => {
  await server?.stop();
  await certs?.remove();
});

describe('tls_client_auth', () => {
  it('runs the server on https with the test CA', () => {
    expect(server.issuer).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('authenticates with the client certificate registered by subject DN', async () => {
    const client = mtlsClient('mtls-dn', {
      cert: certs.client.cert,
      key: certs.client.key,
      ca: certs.ca.cert,
    });
    const token = await client.clientCredentials.getToken();
    expect(token.token).toEqual(expect.any(String));
    expect(token.params.token_type).toBe('Bearer');
  });

  it('discovers the HTTPS server with the test CA and authenticates through the discovered endpoint', async () => {
    const tls = { cert: certs.client.cert, key: certs.client.key, ca: certs.ca.cert };
    const client = await Client.discover(server.issuer, 'mtls-dn', undefined, {
      authScheme: 'tls_client_auth',
      connection: { tls },
    });
    expect(client.metadata?.token_endpoint_auth_methods_supported).toContain('tls_client_auth');
    expect((await client.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });

  it('authenticates with the client certificate registered by DNS subject alternative name', async () => {
    const client = mtlsClient('mtls-san', {
      cert: certs.client.cert,
      key: certs.client.key,
      ca: certs.ca.cert,
    });
    expect((await client.clientCredentials.getToken()).token).toEqual(expect.any(String));
  });

  it('verifies the server certificate by default: without the test CA the connection fails', async () => {
    const untrusting = new Client('mtls-dn', undefined, {
      site: server.issuer,
      authScheme: 'tls_client_auth',
      connection: { tls: { cert: certs.client.cert, key: certs.client.key } },
    });
    const error = await untrusting.clientCredentials.getToken().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'connection_failed' });
    expect((error as Error).message).toBe(
      `request POST "${server.tokenEndpoint}" failed: TLS error (SELF_SIGNED_CERT_IN_CHAIN)`,
    );
  });

  it('is refused with invalid_client without a client certificate', async () => {
    const error = await failure(mtlsClient('mtls-dn', { ca: certs.ca.cert }).clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
    expect(error.response.status).toBe(401);
    expect(refusals.at(-1)).toBe('client certificate was not provided');
  });

  it('is refused with invalid_client for a certificate the server does not trust', async () => {
    const rogue = await generate([{ name: 'commonName', value: 'forgebridge-mtls-client' }], {
      keyType: 'ec',
      algorithm: 'sha256',
    });
    const client = mtlsClient('mtls-dn', { cert: rogue.cert, key: rogue.private, ca: certs.ca.cert });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
    expect(refusals.at(-1)).toBe('client certificate was not verified');
  });

  it('is refused with invalid_client when the certificate subject is not the registered one', async () => {
    const client = mtlsClient('mtls-other', {
      cert: certs.client.cert,
      key: certs.client.key,
      ca: certs.ca.cert,
    });
    const error = await failure(client.clientCredentials.getToken());
    expect(error.code).toBe('invalid_client');
  });
});
