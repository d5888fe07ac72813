// The small local servers the stack adds around the real ones: the TCP proxy the tests put in front of the bus,
// and the forge API that only accepts access tokens signed by the local authorization server.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { type ForgeApi, startForgeApi } from '../../../local-stack/forge-api.js';
import { startTcpProxy } from '../../../local-stack/tcp-proxy.js';

describe('local-stack/tcp-proxy', () => {
  let upstream: Server;
  let upstreamPort: number;

  beforeAll(async () => {
    upstream = createServer((_request, response) => response.end('upstream'));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    upstreamPort = (upstream.address() as { port: number }).port;
  });

  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  it('forwards, refuses connections while stopped, and forwards again on the same port after start', async () => {
    const proxy = await startTcpProxy({ targetPort: upstreamPort });
    try {
      expect(await (await fetch(proxy.url)).text()).toBe('upstream');
      const port = proxy.port;
      await proxy.stop();
      expect(proxy.listening).toBe(false);
      await expect(fetch(proxy.url)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
      await proxy.start();
      expect(proxy.port).toBe(port);
      expect(await (await fetch(proxy.url)).text()).toBe('upstream');
    } finally {
      await proxy.stop();
    }
  });
});

describe('local-stack/forge-api', () => {
  let authorizationServer: AuthorizationServer;
  let api: ForgeApi;

  beforeAll(async () => {
    authorizationServer = await startAuthorizationServer();
    api = await startForgeApi({
      issuer: authorizationServer.issuer,
      jwksUri: authorizationServer.jwksUri,
      audience: FORGE_API_RESOURCE,
    });
  });

  afterAll(async () => {
    await api?.stop();
    await authorizationServer?.stop();
  });

  async function clientCredentialsToken(resource?: string): Promise<string> {
    const body = new URLSearchParams({ grant_type: 'client_credentials', scope: 'forge:read' });
    if (resource !== undefined) body.set('resource', resource);
    const response = await fetch(authorizationServer.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${DEFAULT_CLIENT.client_id}:${DEFAULT_CLIENT.client_secret}`).toString('base64')}`,
      },
      body,
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  it('answers an issue to a token the authorization server signed for the forge API', async () => {
    const token = await clientCredentialsToken(FORGE_API_RESOURCE);
    const response = await fetch(`${api.url}/repos/octo/hello/issues/3`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      number: 3,
      title: 'Issue 3 of octo/hello',
      repository: { full_name: 'octo/hello' },
    });
    expect(api.requests().at(-1)).toEqual({
      method: 'GET',
      path: '/repos/octo/hello/issues/3',
      status: 200,
      clientId: DEFAULT_CLIENT.client_id,
      scope: 'forge:read',
      at: expect.any(Number),
    });
  });

  it('answers 401 with a Bearer challenge to a missing, tampered or foreign token', async () => {
    const token = await clientCredentialsToken(FORGE_API_RESOURCE);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const tampered = [
      header,
      Buffer.from(JSON.stringify({ ...claims, scope: 'forge:write' })).toString('base64url'),
      signature,
    ].join('.');
    for (const authorization of [undefined, `Bearer ${tampered}`, 'Bearer not-a-jwt', `Basic ${token}`]) {
      const response = await fetch(`${api.url}/repos/octo/hello/issues/3`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });

  it('answers 404 for an unknown route with a valid token', async () => {
    const token = await clientCredentialsToken(FORGE_API_RESOURCE);
    const response = await fetch(`${api.url}/users/octo`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(404);
  });
});
