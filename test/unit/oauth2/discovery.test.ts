import { afterEach, describe, expect, it } from 'vitest';
import { Client, DiscoveryError, discoveryUrls } from '../../../lib/oauth2/index.js';
import { JSON_HEADERS, mockAgent } from './helpers.js';

const ISSUER = 'https://id.example.test/realms/main';
const agent = mockAgent();
const pool = agent.get('https://id.example.test');
afterEach(() => agent.assertNoPendingInterceptors());

function metadata(issuer = ISSUER): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/protocol/auth`,
    token_endpoint: `${issuer}/protocol/token`,
    revocation_endpoint: `${issuer}/protocol/revoke`,
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
  };
}

describe('discoveryUrls()', () => {
  it('appends the OIDC path to the issuer and inserts the RFC 8414 one before its path', () => {
    expect(discoveryUrls(ISSUER)).toEqual([
      'https://id.example.test/realms/main/.well-known/openid-configuration',
      'https://id.example.test/.well-known/oauth-authorization-server/realms/main',
    ]);
    expect(discoveryUrls('https://id.example.test/')).toEqual([
      'https://id.example.test/.well-known/openid-configuration',
      'https://id.example.test/.well-known/oauth-authorization-server',
    ]);
  });
});

describe('Client.discover()', () => {
  it('configures the endpoints from the OpenID configuration and keeps the metadata', async () => {
    pool
      .intercept({ path: '/realms/main/.well-known/openid-configuration', method: 'GET' })
      .reply(200, metadata(), JSON_HEADERS);
    const client = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } });
    expect(client.tokenUrl()).toBe(`${ISSUER}/protocol/token`);
    expect(client.authCode.authorizeUrl()).toBe(`${ISSUER}/protocol/auth?client_id=id&response_type=code`);
    expect(client.revokeUrl()).toBe(`${ISSUER}/protocol/revoke`);
    expect(client.metadata?.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic']);
  });

  it('falls back to RFC 8414 when the OpenID document is missing', async () => {
    pool.intercept({ path: '/realms/main/.well-known/openid-configuration', method: 'GET' }).reply(404, 'no');
    pool
      .intercept({ path: '/.well-known/oauth-authorization-server/realms/main', method: 'GET' })
      .reply(200, metadata(), JSON_HEADERS);
    const client = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } });
    expect(client.tokenUrl()).toBe(`${ISSUER}/protocol/token`);
  });

  it('rejects a document whose issuer differs from the requested one', async () => {
    pool
      .intercept({ path: '/realms/main/.well-known/openid-configuration', method: 'GET' })
      .reply(200, metadata('https://evil.example.test'), JSON_HEADERS);
    const error = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DiscoveryError);
    expect((error as DiscoveryError).code).toBe('issuer_mismatch');
    expect((error as DiscoveryError).message).toBe(
      `discovery document issuer "https://evil.example.test" does not match the requested issuer "${ISSUER}"`,
    );
  });

  it('fails clearly when neither document exists', async () => {
    pool.intercept({ path: '/realms/main/.well-known/openid-configuration', method: 'GET' }).reply(404, '');
    pool
      .intercept({ path: '/.well-known/oauth-authorization-server/realms/main', method: 'GET' })
      .reply(500, '');
    const error = await Client.discover(ISSUER, 'id', 'secret', { connection: { dispatcher: agent } }).catch(
      (e: unknown) => e,
    );
    expect((error as DiscoveryError).code).toBe('discovery_failed');
    expect((error as DiscoveryError).message).toContain(`no discovery document found for issuer "${ISSUER}"`);
  });

  it('lets explicit options win over the document', async () => {
    pool
      .intercept({ path: '/realms/main/.well-known/openid-configuration', method: 'GET' })
      .reply(200, metadata(), JSON_HEADERS);
    const client = await Client.discover(ISSUER, 'id', 'secret', {
      tokenUrl: 'https://override.test/token',
      connection: { dispatcher: agent },
    });
    expect(client.tokenUrl()).toBe('https://override.test/token');
  });

  it('rejects a non-URL issuer', async () => {
    await expect(Client.discover('not a url', 'id', 'secret')).rejects.toThrow(
      new TypeError(`"issuer" must be an absolute URL`),
    );
  });
});
