// The default transport (Node's http on a keep-alive agent) against oidc-provider: the headers the server
// receives on the first token request of a client are the headers of every later one.
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

let server: AuthorizationServer;
const received: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = await startAuthorizationServer({ devInteractions: false });
  server.provider.on('grant.success', (ctx) => {
    received.push({ ...(ctx as { request: { headers: IncomingHttpHeaders } }).request.headers });
  });
});

afterAll(async () => {
  await server?.stop();
});

describe('Transport (default path)', () => {
  it('sends the first and every later token request with the same headers', async () => {
    received.length = 0;
    const client = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
      site: server.issuer,
    });
    await client.clientCredentials.getToken({});
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.clientCredentials.getToken({});
    await client.clientCredentials.getToken({});

    expect(received).toHaveLength(3);
    const [first, ...later] = received;
    expect(first).toMatchObject({
      accept: '*/*',
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'forgebridge-oauth2',
      connection: 'keep-alive',
    });
    expect(first?.authorization).toMatch(/^Basic /);
    for (const headers of later) expect(headers).toEqual(first);
  });

  it('sends the same headers from two clients of one process', async () => {
    received.length = 0;
    for (const timeout of [5_000, 6_000]) {
      const client = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
        site: server.issuer,
        connection: { timeout },
      });
      await client.clientCredentials.getToken({});
    }
    expect(received).toHaveLength(2);
    expect(received[1]).toEqual(received[0]);
  });
});
