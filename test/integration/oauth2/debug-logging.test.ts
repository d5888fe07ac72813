// Debug logging against a real server: every grant, every client authentication method, refresh,
// revocation and API calls run with debug on; the captured lines must show the traffic and never a secret,
// a password, a code, a verifier, an assertion or a token (in any encoding). The secrets are collected from
// the wire itself (onRequest/onResponse hooks), so whatever the library generated is checked too.
import { execFile } from 'node:child_process';
import { inspect, promisify } from 'node:util';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  type ClientOptions,
  config,
  generateCodeVerifier,
  type HttpRequest,
  type Response,
} from '../../../lib/oauth2/index.js';
import {
  type AuthorizationServer,
  JWT_BEARER_GRANT,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { authorizeWithDevInteractions } from '../../helpers/oauth2-flows.js';

const SECRET = 'dbg+se cret%:&-value';
const REDIRECT_URI = 'https://app.forge.test/callback';
const SENSITIVE_KEYS = [
  'client_secret',
  'password',
  'assertion',
  'client_assertion',
  'code',
  'code_verifier',
  'refresh_token',
  'access_token',
  'id_token',
  'token',
];

let server: AuthorizationServer;
let privateJwk: JWK;
let assertionJwk: JWK;
const lines: string[] = [];
const sensitive = new Set<string>();

function collectForm(text: string): void {
  try {
    for (const [key, value] of new URLSearchParams(text))
      if (SENSITIVE_KEYS.includes(key)) sensitive.add(value);
  } catch {
    // not a form
  }
}

function collectJson(text: string): void {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    for (const key of SENSITIVE_KEYS)
      if (typeof parsed[key] === 'string') sensitive.add(parsed[key] as string);
  } catch {
    // not JSON
  }
}

function options(extra: ClientOptions = {}): ClientOptions {
  return {
    site: server.issuer,
    debug: true,
    logger: { info: (message: string) => void lines.push(message) },
    ...extra,
    connection: {
      onRequest: (request: HttpRequest) => {
        const authorization = request.headers.authorization;
        if (authorization !== undefined) sensitive.add(authorization.replace(/^\w+ /, ''));
        if (typeof request.body === 'string') collectForm(request.body);
        const query = new URL(request.url).search;
        if (query !== '') collectForm(query.slice(1));
      },
      onResponse: (response: Response) => {
        collectJson(response.body);
        const location = response.headers.get('location');
        if (location !== null) collectForm(new URL(location, server.issuer).search.slice(1));
      },
    },
  };
}

/** The raw value and the ways it can be written on the wire. */
const encodings = (value: string): string[] => [
  value,
  encodeURIComponent(value),
  new URLSearchParams({ v: value }).toString().slice(2),
  Buffer.from(value).toString('base64'),
];

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'dbg-1', alg: 'ES256' };
  const assertionPair = await generateKeyPair('ES256', { extractable: true });
  assertionJwk = await exportJWK(assertionPair.privateKey);
  const common = {
    grant_types: ['client_credentials', 'password', 'refresh_token', 'authorization_code', JWT_BEARER_GRANT],
    response_types: ['code'],
    redirect_uris: [REDIRECT_URI],
    scope: 'openid profile',
  };
  server = await startAuthorizationServer({
    clients: [
      { ...common, client_id: 'dbg-basic', client_secret: SECRET },
      {
        ...common,
        client_id: 'dbg-post',
        client_secret: SECRET,
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        ...common,
        client_id: 'dbg-jwt',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'dbg-1', alg: 'ES256', use: 'sig' }] },
      },
    ],
    assertionIssuers: [{ issuer: 'dbg-issuer', key: assertionPair.publicKey }],
  });
  sensitive.add(SECRET);
  sensitive.add(server.accounts.alice!.password);
});

afterAll(async () => {
  await server?.stop();
});

describe('debug logging', () => {
  it('logs every exchange and no secret, password, code, verifier, assertion or token', async () => {
    const password = server.accounts.alice!.password;
    const basic = new Client('dbg-basic', SECRET, options());
    const post = new Client('dbg-post', SECRET, options({ authScheme: 'request_body' }));
    const jwt = new Client(
      'dbg-jwt',
      undefined,
      options({ authScheme: 'private_key_jwt', privateKey: privateJwk, privateKeyAlg: 'ES256' }),
    );

    await basic.clientCredentials.getToken();
    await post.clientCredentials.getToken();
    await jwt.clientCredentials.getToken();
    const owner = await basic.password.getToken('alice', password, { scope: 'openid profile' });
    const refreshed = await owner.refresh();
    await refreshed.get('oauth/userinfo');
    await refreshed.revoke();
    await refreshed.revoke({ token_type_hint: 'refresh_token' });
    const now = Math.floor(Date.now() / 1000);
    await post.assertion.getToken(
      { iss: 'dbg-issuer', sub: 'alice', aud: server.tokenEndpoint, exp: now + 60 },
      { algorithm: 'ES256', key: assertionJwk },
    );
    await basic.password.getToken('alice', 'wrong-password-value').catch(() => undefined);
    const verifier = generateCodeVerifier();
    sensitive.add(verifier);
    const url = jwt.authCode.authorizeUrl({
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      code_verifier: verifier,
    });
    const { code } = await authorizeWithDevInteractions(url, {
      redirectUri: REDIRECT_URI,
      login: 'alice',
      password,
    });
    sensitive.add(code!);
    const coded = await jwt.authCode.getToken(code!, { redirect_uri: REDIRECT_URI, code_verifier: verifier });
    sensitive.add(coded.token);
    sensitive.add('wrong-password-value');

    expect(lines.filter((line) => line.startsWith('request: POST'))).toHaveLength(10);
    expect(lines.some((line) => line.startsWith('request: GET') && line.includes('/oauth/userinfo'))).toBe(
      true,
    );
    expect(lines.some((line) => line.includes(config.filteredLabel))).toBe(true);
    expect(sensitive.size).toBeGreaterThan(20);
    const leaks = [...sensitive]
      .filter((value) => value.length >= 8)
      .flatMap((value) => encodings(value).map((form) => ({ value, form })))
      .filter(({ form }) => lines.some((line) => line.includes(form)))
      .map(({ value }) => `${value.slice(0, 6)}...`);
    expect(leaks).toEqual([]);
  });

  it('keeps secrets and tokens out of inspect and JSON of the client and token', async () => {
    const client = new Client('dbg-basic', SECRET, { site: server.issuer });
    const token = await client.password.getToken('alice', server.accounts.alice!.password, {
      scope: 'openid',
    });
    const shown = [inspect(client), JSON.stringify(client), inspect(token), JSON.stringify(token)].join('\n');
    for (const value of [SECRET, token.token, token.refreshToken!]) expect(shown).not.toContain(value);
    expect(shown).toContain(config.filteredLabel);
  });

  it('logs to standard output with OAUTH_DEBUG=true, without secrets', async () => {
    const script = `
      import { Client } from ${JSON.stringify(new URL('../../../lib/oauth2/index.ts', import.meta.url).href)};
      const client = new Client('dbg-basic', process.env.DBG_SECRET, { site: process.env.DBG_ISSUER });
      const token = await client.password.getToken('alice', process.env.DBG_PASSWORD, { scope: 'openid' });
      process.stderr.write(JSON.stringify([token.token, token.refreshToken]));
    `;
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', script],
      {
        cwd: new URL('../../..', import.meta.url).pathname,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          OAUTH_DEBUG: 'TRUE',
          DBG_SECRET: SECRET,
          DBG_ISSUER: server.issuer,
          DBG_PASSWORD: server.accounts.alice!.password,
        },
      },
    );
    const tokens = JSON.parse(stderr.slice(stderr.indexOf('['))) as string[];
    expect(stdout).toContain(`request: POST ${server.tokenEndpoint}`);
    expect(stdout).toContain('response: 200');
    for (const value of [SECRET, server.accounts.alice!.password, ...tokens]) {
      for (const form of encodings(value)) expect(stdout).not.toContain(form);
    }
  });
});
