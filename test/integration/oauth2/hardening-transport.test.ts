// Issue 8 (items 1, 3, 5), against real servers: two node:http servers on 127.0.0.1 are two origins, and the
// local oidc-provider issues the tokens and is the real endpoint a careless server redirects to. What the
// other origin must not get is checked by what it actually received.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AccessToken,
  Client,
  type ClientOptions,
  ConnectionError,
  type ConnectionOptions,
  OAuth2Error,
  ResponseTooLargeError,
  TimeoutError,
} from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { freePort } from '../../../local-stack/ports.js';
import { createTestCertificates, type TestCertificates } from '../../helpers/oauth2-certs.js';

const CLIENT_ID = 'hardening-client';
const CLIENT_SECRET = 'hardening-client-secret-5e1f';
const MB = 1024 * 1024;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (request: Seen, res: ServerResponse) => void;

/** A node:http server on 127.0.0.1: one origin. It records every request it gets, body included. */
interface Origin {
  readonly url: string;
  readonly seen: Seen[];
  handle: Handler;
  close(): Promise<void>;
}

const landed: Handler = (_request, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('landed');
};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function startOrigin(): Promise<Origin> {
  const seen: Seen[] = [];
  const origin = {
    seen,
    handle: landed,
    url: '',
    close: async (): Promise<void> => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(request);
      origin.handle(request, res);
    });
  });
  // A client that stops reading a large body resets the connection: that is expected here.
  server.on('clientError', (_error, socket) => socket.destroy());
  origin.url = `http://127.0.0.1:${await listen(server)}`;
  return origin;
}

/** Answers every request with `status` and a `Location` made from the request. */
function redirect(status: number, to: (request: Seen) => string): Handler {
  return (request, res) => {
    res.writeHead(status, { location: to(request), 'content-type': 'text/plain' }).end('moved');
  };
}

/** The query of a request, `?` included ('' when none): a careless server copies it into its Location. */
function queryOf(request: Seen): string {
  const q = request.url.indexOf('?');
  return q === -1 ? '' : request.url.slice(q);
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

let server: AuthorizationServer;
let a: Origin;
let b: Origin;
let certs: TestCertificates;

beforeAll(async () => {
  [server, a, b, certs] = await Promise.all([
    startAuthorizationServer({
      devInteractions: false,
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          grant_types: ['client_credentials', 'password', 'refresh_token'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_post',
          scope: 'openid',
        },
      ],
    }),
    startOrigin(),
    startOrigin(),
    createTestCertificates(),
  ]);
});

afterAll(async () => {
  await Promise.all([server?.stop(), a?.close(), b?.close(), certs?.remove()]);
});

beforeEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
  a.handle = landed;
  b.handle = landed;
  server.resetCounters();
});

/** A client of the real authorization server (its token endpoint), whose API lives on origin A. */
function providerClient(options: ClientOptions = {}): Client {
  return new Client(CLIENT_ID, CLIENT_SECRET, {
    site: server.issuer,
    authScheme: 'request_body',
    ...options,
  });
}

/** A real access token from oidc-provider, used against origin A in `mode`. */
async function realToken(options: Record<string, unknown>): Promise<AccessToken> {
  const issued = await providerClient().clientCredentials.getToken();
  expect(issued.token.length).toBeGreaterThan(20);
  return new AccessToken(providerClient(), issued.token, options);
}

const MODES = [
  { name: 'header', options: {}, param: undefined },
  { name: 'query (access_token)', options: { mode: 'query' }, param: 'access_token' },
  { name: 'query (param_name api_key)', options: { mode: 'query', param_name: 'api_key' }, param: 'api_key' },
] as const;

describe('an API call redirected to another origin never takes the token there', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    for (const mode of MODES) {
      it(`${status}, ${mode.name}: B gets the request without the token; other params kept`, async () => {
        const token = await realToken(mode.options);
        a.handle = redirect(status, (request) => `${b.url}/landing${queryOf(request)}`);

        const response = await token.get(`${a.url}/things`, { params: { page: '2' } });

        expect(response.status).toBe(200);
        expect(response.body).toBe('landed');
        expect(a.seen).toHaveLength(1);
        // Origin A got the token, the way the mode sends it.
        if (mode.param === undefined) expect(a.seen[0]?.headers.authorization).toBe(`Bearer ${token.token}`);
        else expect(new URL(a.seen[0]?.url ?? '', a.url).searchParams.get(mode.param)).toBe(token.token);
        expect(b.seen).toHaveLength(1);
        expect(b.seen[0]?.headers.authorization).toBeUndefined();
        expect(new URL(b.seen[0]?.url ?? '', b.url).searchParams.get('page')).toBe('2');
        expect(JSON.stringify(b.seen)).not.toContain(token.token);
      });
    }
  }

  for (const status of [307, 308]) {
    it(`${status}, body mode: the POST is not re-sent to B (OAuth2Error with the ${status})`, async () => {
      const token = await realToken({ mode: 'body' });
      a.handle = redirect(status, () => `${b.url}/landing`);

      const error = await caught(token.post(`${a.url}/things`, { body: { name: 'x' } }));

      expect(error).toBeInstanceOf(OAuth2Error);
      expect((error as OAuth2Error).response.status).toBe(status);
      expect((error as OAuth2Error).message).toContain(`redirect ${status} to "${b.url}" not followed`);
      expect((error as OAuth2Error).message).not.toContain(token.token);
      expect(new URLSearchParams(a.seen[0]?.body).get('access_token')).toBe(token.token);
      expect(b.seen).toEqual([]);
    });
  }

  it('302 after a POST in body mode: B gets a GET without a body', async () => {
    const token = await realToken({ mode: 'body' });
    a.handle = redirect(302, () => `${b.url}/landing`);
    const response = await token.post(`${a.url}/things`, { body: { name: 'x' } });
    expect(response.body).toBe('landed');
    expect(b.seen.map(({ method, body }) => ({ method, body }))).toEqual([{ method: 'GET', body: '' }]);
    expect(JSON.stringify(b.seen)).not.toContain(token.token);
  });

  it('302 after a PUT in body mode (the body stays a body): refused, B gets nothing', async () => {
    const token = await realToken({ mode: 'body' });
    a.handle = redirect(302, () => `${b.url}/landing`);
    const error = await caught(token.put(`${a.url}/things/1`, { body: { name: 'x' } }));
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(b.seen).toEqual([]);
  });

  it('a redirect loop between the two origins ends after maxRedirects, never with the token on B', async () => {
    const issued = await providerClient().clientCredentials.getToken();
    const client = providerClient({ connection: { maxRedirects: 4 } });
    const token = new AccessToken(client, issued.token, { mode: 'query', param_name: 'api_key' });
    a.handle = redirect(302, (request) => `${b.url}/loop${queryOf(request)}`);
    b.handle = redirect(302, (request) => `${a.url}/loop${queryOf(request)}`);

    const response = await token.get(`${a.url}/loop`);

    expect(response.status).toBe(302);
    expect(a.seen.length + b.seen.length).toBe(5);
    expect(JSON.stringify(b.seen)).not.toContain(issued.token);
    // Once dropped, the token never comes back: A's later hops do not have it either.
    expect(a.seen.slice(1).every((request) => !request.url.includes('api_key'))).toBe(true);
  });
});

describe('an API call redirected within its origin keeps the token', () => {
  it('header mode: the next hop carries Authorization', async () => {
    const token = await realToken({});
    a.handle = (request, res) => {
      if (request.url.startsWith('/old')) redirect(301, () => '/new')(request, res);
      else landed(request, res);
    };
    await token.get(`${a.url}/old`);
    expect(a.seen.map((request) => [request.url, request.headers.authorization])).toEqual([
      ['/old', `Bearer ${token.token}`],
      ['/new', `Bearer ${token.token}`],
    ]);
  });

  it('query mode with a custom param_name: a Location that keeps the query keeps the token', async () => {
    const token = await realToken({ mode: 'query', param_name: 'api_key' });
    a.handle = (request, res) => {
      if (request.url.startsWith('/old')) redirect(302, (r) => `/new${queryOf(r)}`)(request, res);
      else landed(request, res);
    };
    await token.get(`${a.url}/old`);
    expect(new URL(a.seen[1]?.url ?? '', a.url).searchParams.get('api_key')).toBe(token.token);
  });

  it('body mode, 307: the body with the token is sent again', async () => {
    const token = await realToken({ mode: 'body' });
    a.handle = (request, res) => {
      if (request.url.startsWith('/old')) redirect(307, () => '/new')(request, res);
      else landed(request, res);
    };
    await token.post(`${a.url}/old`, { body: { name: 'x' } });
    expect(a.seen.map((request) => request.method)).toEqual(['POST', 'POST']);
    expect(new URLSearchParams(a.seen[1]?.body).get('access_token')).toBe(token.token);
  });
});

describe('token and revocation requests never follow a redirect', () => {
  /** A client whose token and revocation endpoints are on origin A. */
  function redirectedClient(options: ClientOptions = {}): Client {
    return providerClient({
      tokenUrl: `${a.url}/oauth/token`,
      revokeUrl: `${a.url}/oauth/revoke`,
      ...options,
    });
  }

  const grants: Array<{ name: string; secret: string; run: (client: Client) => Promise<unknown> }> = [
    {
      name: 'client credentials (client_secret in the body)',
      secret: CLIENT_SECRET,
      run: (client) => client.clientCredentials.getToken(),
    },
    {
      name: 'password',
      secret: 'alice-password-in-flight',
      run: (client) => client.password.getToken('alice', 'alice-password-in-flight'),
    },
    {
      name: 'assertion',
      secret: '',
      run: (client) =>
        client.assertion.getToken(
          { iss: 'issuer', sub: 'alice', aud: server.tokenEndpoint, exp: Math.floor(Date.now() / 1000) + 60 },
          { algorithm: 'HS256', key: 'assertion-signing-key-0123456789abcdef' },
        ),
    },
    {
      name: 'authorization code with PKCE',
      secret: 'code-verifier-7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d',
      run: (client) =>
        client.authCode.getToken('the-code-4f3e', {
          code_verifier: 'code-verifier-7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d',
        }),
    },
    {
      name: 'refresh',
      secret: 'refresh-token-9c8b7a6f5e4d',
      run: (client) =>
        new AccessToken(client, 'at-1', {
          refresh_token: 'refresh-token-9c8b7a6f5e4d',
          expires_in: 60,
        }).refresh(),
    },
  ];

  for (const status of [302, 307]) {
    for (const grant of grants) {
      it(`${status} to another origin, ${grant.name}: B receives nothing`, async () => {
        a.handle = redirect(status, () => `${b.url}/oauth/token`);

        const error = await caught(grant.run(redirectedClient({ connection: { maxRedirects: 10 } })));

        expect(error).toBeInstanceOf(OAuth2Error);
        expect((error as OAuth2Error).response.status).toBe(status);
        expect((error as OAuth2Error).response.headers.get('location')).toBe(`${b.url}/oauth/token`);
        expect((error as OAuth2Error).message).toContain(`redirect ${status} to "${b.url}" not followed`);
        expect(a.seen).toHaveLength(1);
        if (grant.secret !== '') expect(a.seen[0]?.body).toContain(grant.secret);
        expect(b.seen).toEqual([]);
        expect((error as Error).message).not.toContain(CLIENT_SECRET);
        if (grant.secret !== '') expect((error as Error).message).not.toContain(grant.secret);
      });
    }
  }

  it('307 to the real token endpoint: the authorization server gets no request', async () => {
    a.handle = redirect(307, () => server.tokenEndpoint);
    const error = await caught(redirectedClient().clientCredentials.getToken());
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(server.tokenRequests()).toBe(0);
    // The same request straight to it works: the refusal is the redirect's, not the request's.
    await providerClient().clientCredentials.getToken();
    expect(server.tokenRequests()).toBe(1);
  });

  it('with raiseErrors: false, getToken still rejects with the 3xx OAuth2Error', async () => {
    a.handle = redirect(302, () => `${b.url}/oauth/token`);
    const error = await caught(redirectedClient({ raiseErrors: false }).clientCredentials.getToken());
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).response.status).toBe(302);
    expect(b.seen).toEqual([]);
  });

  it('revocation answered 307 to the real revocation endpoint: not sent, the token stays active', async () => {
    const client = providerClient();
    const token = await client.clientCredentials.getToken();
    a.handle = redirect(307, () => `${server.issuer}/oauth/revoke`);

    const refused = redirectedClient({ raiseErrors: false });
    const response = await refused.revokeToken(token.token, 'access_token');
    const error = await caught(redirectedClient().revokeToken(token.token, 'access_token'));

    expect(response.status).toBe(307);
    expect(response.error).toBeInstanceOf(OAuth2Error);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as Error).message).not.toContain(token.token);
    expect(a.seen).toHaveLength(2);
    const introspection = await client.tokenRequest(`${server.issuer}/oauth/introspect`, {
      token: token.token,
    });
    expect(introspection.parsed).toMatchObject({ active: true });
  });

  it('revocation answered 302 to another origin: B receives nothing', async () => {
    a.handle = redirect(302, () => `${b.url}/oauth/revoke`);
    const error = await caught(redirectedClient().revokeToken('token-to-revoke-1a2b3c', 'refresh_token'));
    expect(error).toBeInstanceOf(OAuth2Error);
    expect(b.seen).toEqual([]);
  });
});

/** The three transport paths, each on a real connection. */
const PATHS: Array<{ name: string; connection: () => ConnectionOptions }> = [
  { name: 'node http (default)', connection: () => ({}) },
  {
    name: 'custom fetch (global fetch)',
    connection: () => ({
      fetch: (url, { method, headers, body, redirect, signal }) =>
        fetch(url, { method, headers, body: body ?? null, redirect, signal }),
    }),
  },
  { name: 'undici dispatcher', connection: () => ({ dispatcher: new Agent() }) },
];

describe('a 30 MB response stops at maxResponseBytes', () => {
  /** Streams `total` bytes of HTML in 64 KiB chunks, with or without a content-length; counts what it wrote. */
  function huge(total: number, declared: boolean, sent: { bytes: number; closed: boolean }): Handler {
    return (_request, res) => {
      res.writeHead(200, {
        'content-type': 'text/html',
        ...(declared ? { 'content-length': String(total) } : {}),
      });
      const chunk = Buffer.from('<p>secret-in-body-0xdead</p>'.repeat(2341).padEnd(64 * 1024, '.'));
      res.on('close', () => {
        sent.closed = true;
      });
      const pump = (): void => {
        while (sent.bytes < total && !res.destroyed) {
          sent.bytes += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    };
  }

  for (const path of PATHS) {
    for (const declared of [false, true]) {
      it(`${path.name}, ${declared ? 'with a content-length' : 'streamed'}: ResponseTooLargeError, fast and short`, async () => {
        const sent = { bytes: 0, closed: false };
        a.handle = huge(30 * MB, declared, sent);
        const token = new AccessToken(
          providerClient({ connection: path.connection() }),
          'query-token-5d4c3b2a1f0e',
          { mode: 'query', param_name: 'api_key' },
        );
        const started = performance.now();

        const error = await caught(token.get(`${a.url}/big`));
        const elapsed = performance.now() - started;

        expect(error).toBeInstanceOf(ResponseTooLargeError);
        expect(error).toBeInstanceOf(OAuth2Error);
        const tooLarge = error as ResponseTooLargeError;
        expect(tooLarge.code).toBe('response_too_large');
        expect(tooLarge.limit).toBe(MB);
        expect(tooLarge.response.status).toBe(200);
        expect(tooLarge.response.body).toBe('');
        expect(tooLarge.message.length).toBeLessThan(300);
        expect(tooLarge.message).toContain('"maxResponseBytes" (1048576 bytes)');
        expect(tooLarge.message).not.toContain('secret-in-body');
        expect(tooLarge.message).not.toContain('query-token-5d4c3b2a1f0e');
        expect(elapsed).toBeLessThan(3_000);
        // The client closed the connection: the server stops long before 30 MB.
        await expect.poll(() => sent.closed).toBe(true);
        expect(sent.bytes).toBeLessThan(16 * MB);
      });
    }
  }

  it('a per-request maxResponseBytes reads a larger answer; the connection limit applies otherwise', async () => {
    const body = 'x'.repeat(2 * MB);
    a.handle = (_request, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    const client = providerClient({ connection: { maxResponseBytes: MB } });
    expect(await caught(client.request('GET', `${a.url}/two`))).toBeInstanceOf(ResponseTooLargeError);
    const response = await client.request('GET', `${a.url}/two`, { maxResponseBytes: 3 * MB });
    expect(response.body.length).toBe(2 * MB);
  });
});

describe('transport failures name their cause and never the token', () => {
  const TOKEN = 'query-token-in-failures-8e7d6c';

  for (const path of PATHS) {
    it(`${path.name}: a refused port is a ConnectionError saying "connection refused"`, async () => {
      const port = await freePort();
      const client = providerClient({ connection: path.connection() });
      const token = new AccessToken(client, TOKEN, { mode: 'query', param_name: 'api_key' });

      const error = await caught(token.get(`http://127.0.0.1:${port}/things`));

      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toContain('connection refused');
      expect((error as Error).message).toContain('api_key=[FILTERED]');
      expect((error as Error).message).not.toContain(TOKEN);
      expect(inspect(error)).not.toContain(TOKEN);
      expect(JSON.stringify(error)).not.toContain(TOKEN);
    });

    it(`${path.name}: an untrusted certificate is a ConnectionError naming TLS`, async () => {
      const tls = createHttpsServer({ key: certs.server.key, cert: certs.server.cert }, (_req, res) =>
        res.end('never'),
      );
      const port = await listen(tls);
      try {
        const token = new AccessToken(providerClient({ connection: path.connection() }), TOKEN, {
          mode: 'query',
          param_name: 'api_key',
        });
        const error = await caught(token.get(`https://127.0.0.1:${port}/things`));
        expect(error).toBeInstanceOf(ConnectionError);
        expect((error as Error).message).toMatch(/failed: TLS error \([A-Z_]+\)$/);
        expect((error as Error).message).not.toContain(TOKEN);
        expect(inspect(error)).not.toContain(TOKEN);
      } finally {
        tls.closeAllConnections();
        await new Promise<void>((resolve) => tls.close(() => resolve()));
      }
    });

    it(`${path.name}: a server that never answers is a TimeoutError without the token`, async () => {
      a.handle = () => undefined;
      const client = providerClient({ connection: { ...path.connection(), timeout: 300 } });
      const token = new AccessToken(client, TOKEN, { mode: 'query', param_name: 'api_key' });

      const error = await caught(token.get(`${a.url}/slow`, { params: { page: '1' } }));

      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toBe(
        `request GET "${a.url}/slow?api_key=[FILTERED]&page=1" timed out after 300 ms`,
      );
      expect(inspect(error)).not.toContain(TOKEN);
      expect(new URL(a.seen[0]?.url ?? '', a.url).searchParams.get('api_key')).toBe(TOKEN);
    });
  }
});
