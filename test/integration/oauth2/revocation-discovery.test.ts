// RFC 7009 revocation and OpenID Connect discovery against oidc-provider. Introspection (RFC 7662) is the
// server-side witness that a revoked token is dead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessToken, Client, DiscoveryError, OAuth2Error } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

const CLIENT_ID = 'revoker';
const CLIENT_SECRET = 'revoker-secret';

let server: AuthorizationServer;
let client: Client;

async function introspect(token: string): Promise<Record<string, unknown>> {
  const response = await client.tokenRequest(`${server.issuer}/oauth/introspect`, { token });
  return response.parsed as Record<string, unknown>;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  server = await startAuthorizationServer({
    devInteractions: false,
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials', 'password', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        scope: 'openid',
      },
    ],
  });
  client = new Client(CLIENT_ID, CLIENT_SECRET, { site: server.issuer });
});

afterAll(async () => {
  await server?.stop();
});

describe('revocation', () => {
  it('revokes an access token: introspection then reports it inactive', async () => {
    const token = await client.clientCredentials.getToken();
    expect(await introspect(token.token)).toMatchObject({ active: true, client_id: CLIENT_ID });

    const response = await token.revoke();

    expect(response.status).toBe(200);
    expect(await introspect(token.token)).toEqual({ active: false });
  });

  it('revokes a refresh token: refreshing with it then fails with invalid_grant', async () => {
    const token: AccessToken = await client.password.getToken('alice', server.accounts.alice!.password, {
      scope: 'openid',
    });
    const response = await client.revokeToken(token.refreshToken!, 'refresh_token');
    expect(response.status).toBe(200);

    const error = await caught(token.refresh());
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).code).toBe('invalid_grant');
    // Revoking the refresh token revokes its grant, and with it the access token issued alongside.
    expect((await token.get('oauth/userinfo', { raiseErrors: false })).status).toBe(401);
  });

  it('sends the token in the body, authenticated, with the hint', async () => {
    const token = await client.clientCredentials.getToken();
    const seen: string[] = [];
    const spy = new Client(CLIENT_ID, CLIENT_SECRET, {
      site: server.issuer,
      connection: {
        onRequest: (request) => {
          seen.push(
            `${request.method} ${request.url}`,
            String(request.body),
            request.headers.authorization ?? '',
          );
        },
      },
    });
    await spy.revokeToken(token.token, 'access_token');
    expect(seen[0]).toBe(`POST ${server.issuer}/oauth/revoke`);
    expect(new URLSearchParams(seen[1]).get('token')).toBe(token.token);
    expect(new URLSearchParams(seen[1]).get('token_type_hint')).toBe('access_token');
    expect(seen[2]).toMatch(/^Basic /);
    expect(seen.join(' ')).not.toContain(`${server.issuer}/oauth/revoke?`);
  });
});

describe('Client.discover()', () => {
  it('configures the endpoints from the provider metadata and gets a token with them', async () => {
    const discovered = await Client.discover(server.issuer, CLIENT_ID, CLIENT_SECRET);

    expect(discovered.metadata?.issuer).toBe(server.issuer);
    expect(discovered.metadata?.token_endpoint).toBe(server.tokenEndpoint);
    expect(discovered.tokenUrl()).toBe(server.tokenEndpoint);
    expect(discovered.revokeUrl()).toBe(`${server.issuer}/oauth/revoke`);
    expect(discovered.authorizeUrl()).toBe(`${server.issuer}/oauth/authorize`);
    server.resetCounters();
    expect((await discovered.clientCredentials.getToken()).token).toEqual(expect.any(String));
    expect(server.tokenRequests('client_credentials')).toBe(1);
  });

  it('rejects a document whose issuer differs from the one asked for', async () => {
    const alias = server.issuer.replace('127.0.0.1', 'localhost');
    const error = await caught(Client.discover(alias, CLIENT_ID, CLIENT_SECRET));
    expect(error).toBeInstanceOf(DiscoveryError);
    expect(error).toMatchObject({ code: 'issuer_mismatch' });
    expect((error as Error).message).toBe(
      `discovery document issuer "${server.issuer}" does not match the requested issuer "${alias}"`,
    );
  });

  it('fails with discovery_failed when neither well-known document exists', async () => {
    const error = await caught(Client.discover(`${server.issuer}/no-such-realm`, CLIENT_ID, CLIENT_SECRET));
    expect(error).toBeInstanceOf(DiscoveryError);
    expect(error).toMatchObject({ code: 'discovery_failed' });
    expect((error as Error).message).toContain('status 404');
  });
});
