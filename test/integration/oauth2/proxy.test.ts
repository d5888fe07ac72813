// The `connection.proxy` option against a real HTTP proxy server (the npm package `proxy`, which also
// answers CONNECT): token requests reach oidc-provider only through it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ConnectionError } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

let server: AuthorizationServer;
let proxy: Server;
let proxyUrl: string;
/** Every target the proxy was asked for: `host:port` for CONNECT, the absolute URL for a plain request. */
const targets: string[] = [];

function listen(http: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(http.address() as AddressInfo).port}`));
  });
}

function close(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.closeAllConnections();
    http.close(() => resolve());
  });
}

beforeAll(async () => {
  server = await startAuthorizationServer({ devInteractions: false });
  proxy = createProxy(createServer());
  proxy.prependListener('connect', (request) => targets.push(String(request.url)));
  proxy.prependListener('request', (request) => targets.push(String(request.url)));
  proxyUrl = await listen(proxy);
});

afterAll(async () => {
  await close(proxy);
  await server?.stop();
});

function client(proxyOption: string): Client {
  return new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
    site: server.issuer,
    connection: { proxy: proxyOption, timeout: 5_000 },
  });
}

describe('connection.proxy', () => {
  it('sends the token request through the proxy and gets a token', async () => {
    const before = server.tokenRequests();
    const token = await client(proxyUrl).clientCredentials.getToken({ resource: FORGE_API_RESOURCE });
    expect(token.token.split('.')).toHaveLength(3); // a JWT access token for the resource
    expect(server.tokenRequests()).toBe(before + 1);
    const { host } = new URL(server.issuer);
    expect(targets.some((target) => target === host || target.startsWith(`${server.issuer}/`))).toBe(true);
  });

  it('fails with a connection error, naming no secret, when the proxy is unreachable', async () => {
    const dead = createServer();
    const deadUrl = await listen(dead);
    await close(dead);
    const before = server.tokenRequests();
    const error = await client(deadUrl)
      .clientCredentials.getToken()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).code).toBe('connection_failed');
    expect((error as Error).message).not.toContain(DEFAULT_CLIENT.client_secret);
    expect(server.tokenRequests()).toBe(before);
  });
});
