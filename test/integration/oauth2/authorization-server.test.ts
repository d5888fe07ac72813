// The local authorization server itself: what the other suites and the local stack rely on (counters,
// keys, option checks, clean stop).
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { Client, ConnectionError, TimeoutError } from '../../../lib/oauth2/index.js';
import {
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';

describe('startAuthorizationServer()', () => {
  it('serves the default client on an ephemeral loopback port and counts token requests by grant type', async () => {
    const server = await startAuthorizationServer({ devInteractions: false });
    try {
      expect(server.issuer).toBe(`http://127.0.0.1:${server.port}`);
      expect(server.port).toBeGreaterThan(0);
      const client = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
        site: server.issuer,
      });

      const tokens = await Promise.all(
        Array.from({ length: 20 }, () => client.clientCredentials.getToken({ resource: FORGE_API_RESOURCE })),
      );

      expect(new Set(tokens.map((token) => token.token)).size).toBe(20);
      expect(server.tokenRequests()).toBe(20);
      expect(server.tokenRequests('client_credentials')).toBe(20);
      expect(server.tokenRequests('refresh_token')).toBe(0);
      const jwks = createRemoteJWKSet(new URL(server.jwksUri));
      const { payload } = await jwtVerify(tokens[0]!.token, jwks, {
        issuer: server.issuer,
        audience: FORGE_API_RESOURCE,
      });
      expect(payload.client_id).toBe(DEFAULT_CLIENT.client_id);
      server.resetCounters();
      expect(server.tokenRequests()).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('counts refused token requests too', async () => {
    const server = await startAuthorizationServer({ devInteractions: false });
    try {
      const wrong = new Client(DEFAULT_CLIENT.client_id, 'wrong', { site: server.issuer });
      await expect(wrong.clientCredentials.getToken()).rejects.toMatchObject({ code: 'invalid_client' });
      expect(server.tokenRequests()).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it('signs with a fresh key at every start', async () => {
    const [one, two] = await Promise.all([
      startAuthorizationServer({ devInteractions: false }),
      startAuthorizationServer({ devInteractions: false }),
    ]);
    try {
      const keys = await Promise.all(
        [one, two].map(
          async (server) => ((await (await fetch(server!.jwksUri)).json()) as { keys: { n: string }[] }).keys,
        ),
      );
      expect(keys[0]![0]!.n).not.toBe(keys[1]![0]!.n);
      expect(keys[0]![0]).not.toHaveProperty('d');
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });

  it('refuses connections once stopped', async () => {
    const server = await startAuthorizationServer({ devInteractions: false });
    const client = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
      site: server.issuer,
    });
    await client.clientCredentials.getToken();
    await server.stop();
    await expect(client.clientCredentials.getToken()).rejects.toBeInstanceOf(ConnectionError);
  });

  it('delays token requests when asked, so a client timeout can be seen', async () => {
    const server = await startAuthorizationServer({ devInteractions: false, tokenEndpointDelayMs: 400 });
    try {
      const site = { site: server.issuer };
      const impatient = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, {
        ...site,
        connection: { timeout: 100 },
      });
      const error = await impatient.clientCredentials.getToken().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ code: 'timeout' });
      expect((error as Error).message).toBe(`request POST "${server.tokenEndpoint}" timed out after 100 ms`);

      const patient = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, site);
      const started = Date.now();
      expect((await patient.clientCredentials.getToken()).token).toEqual(expect.any(String));
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    } finally {
      await server.stop();
    }
  });

  it('fails fast on options it does not know or cannot use', async () => {
    await expect(startAuthorizationServer({ prot: 1 } as never)).rejects.toThrow(
      new TypeError(`'prot' is not a known authorization server option`),
    );
    await expect(startAuthorizationServer({ port: 70000 })).rejects.toThrow(
      new TypeError(`'port' must be an integer from 0 to 65535`),
    );
    await expect(startAuthorizationServer({ issuerPath: 'realms' })).rejects.toThrow(
      new TypeError(`'issuerPath' must look like "/realms/main"`),
    );
    await expect(startAuthorizationServer({ discovery: 'both', accessTokenTtl: 0 })).rejects.toThrow(
      new TypeError(`'accessTokenTtl' must be a positive integer of seconds`),
    );
  });
});
