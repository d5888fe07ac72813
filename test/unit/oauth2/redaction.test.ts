import { inspect } from 'node:util';
import fc from 'fast-check';
import { exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  AccessToken,
  Client,
  config,
  type Logger,
  OAuth2Error,
  Response,
} from '../../../lib/oauth2/index.js';
import { redactBody } from '../../../lib/oauth2/redact.js';
import { parseQuery } from '../../../lib/oauth2/url.js';
import { JSON_HEADERS, mockAgent, SITE } from './helpers.js';

const lines: string[] = [];
const logger: Logger = { info: (m) => lines.push(m) };
/** Every secret and token these flows use or receive; none may reach a log line. */
const secrets = new Set<string>([
  'cs-Sup3r+Secret %:&',
  'pw-correct horse battery',
  'code-4f7a9c2e',
  'verifier-0123456789abcdefghijklmnopqrstuvwxyzABCD',
  'at-e1f2a3b4c5',
  'rt-9z8y7x6w5v',
  'idt-eyJhbGciOi.abc.def',
  'at-rotated-777',
  'rt-rotated-888',
  'at-query-mode-1',
  'at-body-mode-2',
  'at-in-error-3',
]);

const agent = mockAgent();
const pool = agent.get(SITE);
afterEach(() => agent.assertNoPendingInterceptors());
afterAll(() => {
  vi.unstubAllEnvs();
});

function client(options: ConstructorParameters<typeof Client>[2] = {}): Client {
  return new Client('client-id', 'cs-Sup3r+Secret %:&', {
    site: SITE,
    debug: true,
    logger,
    ...options,
    connection: { dispatcher: agent },
  });
}

function tokenReply(body: Record<string, unknown>, capture?: (form: Record<string, unknown>) => void): void {
  pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
    200,
    (o) => {
      capture?.(parseQuery(String(o.body)));
      return body;
    },
    JSON_HEADERS,
  );
}

describe('debug logging', () => {
  it('logs requests and responses with bodies, and no line holds a secret or token', async () => {
    // client_credentials with basic auth, a JSON response holding every kind of token
    tokenReply({
      access_token: 'at-e1f2a3b4c5',
      refresh_token: 'rt-9z8y7x6w5v',
      id_token: 'idt-eyJhbGciOi.abc.def',
    });
    const basic = client();
    const token = await basic.clientCredentials.getToken({ scope: 'read' });

    // password grant with request_body auth
    tokenReply({ access_token: 'at-e1f2a3b4c5' });
    await client({ authScheme: 'request_body' }).password.getToken('alice', 'pw-correct horse battery');

    // authorization code with PKCE, a form-encoded token response
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(200, 'access_token=at-e1f2a3b4c5&token_type=bearer', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    await basic.authCode.getToken('code-4f7a9c2e', {
      redirect_uri: 'https://app.test/cb',
      code_verifier: 'verifier-0123456789abcdefghijklmnopqrstuvwxyzABCD',
    });

    // refresh (rotated tokens), revocation, API calls in every mode
    tokenReply({ access_token: 'at-rotated-777', refresh_token: 'rt-rotated-888' });
    const rotated = await token.refresh();
    pool.intercept({ path: '/oauth/revoke', method: 'POST' }).reply(200, '');
    await rotated.revoke({ token_type_hint: 'refresh_token' });
    pool.intercept({ path: '/api/me', method: 'GET' }).reply(200, { ok: true }, JSON_HEADERS);
    await rotated.get('/api/me');
    pool.intercept({ path: '/api/me?access_token=at-query-mode-1', method: 'GET' }).reply(200, 'ok');
    await new AccessToken(basic, 'at-query-mode-1', { mode: 'query' }).get('/api/me');
    pool.intercept({ path: '/api/things', method: 'POST' }).reply(200, 'ok');
    await new AccessToken(basic, 'at-body-mode-2', { mode: 'body' }).post('/api/things', { body: { a: 1 } });

    // an error response echoing a token
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(400, { error: 'invalid_request', access_token: 'at-in-error-3' }, JSON_HEADERS);
    const error = await basic.clientCredentials.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as Error).message).not.toContain('at-in-error-3');

    // private_key_jwt and the assertion grant: the JWTs are secrets too
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportPKCS8(privateKey);
    tokenReply({ access_token: 'at-e1f2a3b4c5' }, (form) => secrets.add(String(form.client_assertion)));
    await client({
      authScheme: 'private_key_jwt',
      privateKey: pem,
      privateKeyAlg: 'ES256',
    }).clientCredentials.getToken();
    tokenReply({ access_token: 'at-e1f2a3b4c5' }, (form) => secrets.add(String(form.assertion)));
    await basic.assertion.getToken(
      { iss: 'i', sub: 's', aud: 'a', exp: 2_000_000_000 },
      { algorithm: 'ES256', key: pem },
    );

    expect(lines.some((l) => l.startsWith('request: POST https://auth.example.test/oauth/token'))).toBe(true);
    expect(lines.some((l) => l.startsWith('response body: '))).toBe(true);
    expect(lines.some((l) => l.includes('"authorization":"[FILTERED]"'))).toBe(true);
    expect(lines.some((l) => l.includes('client_secret=[FILTERED]'))).toBe(true);
    expect(lines.some((l) => l.includes('access_token=[FILTERED]'))).toBe(true);
    expect(lines.length).toBeGreaterThan(40);
    const encoded = [...secrets].flatMap((s) => [s, encodeURIComponent(s), s.replace(/ /g, '+')]);
    const leaks = lines.filter((line) => encoded.some((s) => line.includes(s)));
    expect(leaks).toEqual([]);
  });

  it('is off unless asked for', async () => {
    const quiet: string[] = [];
    tokenReply({ access_token: 'at-e1f2a3b4c5' });
    const c = new Client('id', 's', {
      site: SITE,
      debug: false,
      logger: { info: (m) => quiet.push(m) },
      connection: { dispatcher: agent },
    });
    await c.clientCredentials.getToken();
    expect(quiet).toEqual([]);
  });

  it('reads OAUTH_DEBUG once, case-insensitively', async () => {
    vi.stubEnv('OAUTH_DEBUG', 'TRUE');
    vi.resetModules();
    const on = await import('../../../lib/oauth2/debug-log.js');
    expect(on.OAUTH_DEBUG).toBe(true);
    vi.stubEnv('OAUTH_DEBUG', 'yes');
    vi.resetModules();
    const off = await import('../../../lib/oauth2/debug-log.js');
    expect(off.OAUTH_DEBUG).toBe(false);
    process.env.OAUTH_DEBUG = 'true';
    expect(off.OAUTH_DEBUG).toBe(false);
  });
});

describe('inspect and toJSON', () => {
  it('never show a secret or token of Client, AccessToken, Response or OAuth2Error', async () => {
    const c = client();
    const t = new AccessToken(c, 'at-e1f2a3b4c5', {
      refresh_token: 'rt-9z8y7x6w5v',
      id_token: 'idt-eyJhbGciOi.abc.def',
      expires_in: 60,
    });
    pool
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(401, { error: 'invalid_client', refresh_token: 'rt-9z8y7x6w5v' }, JSON_HEADERS);
    const error = (await c.clientCredentials.getToken().catch((e: unknown) => e)) as OAuth2Error;
    const views = [c, t, error.response, error].flatMap((o) => [
      inspect(o, { depth: 10 }),
      JSON.stringify(o),
    ]);
    for (const view of views) {
      for (const s of secrets) expect(view).not.toContain(s);
    }
    expect(inspect(t)).toContain('[FILTERED]');
    expect(JSON.stringify(c)).toContain('"secret":"[FILTERED]"');
    expect(t.toJSON()).toMatchObject({ token: '[FILTERED]', refresh_token: '[FILTERED]' });
  });
});

describe('redaction of arbitrary bodies', () => {
  it('never throws and never lets a filtered value through, in JSON or form bodies', () => {
    const secret = fc.string({ minLength: 6 }).filter((s) => /^[A-Za-z0-9._~-]+$/.test(s));
    fc.assert(
      fc.property(
        fc.constantFrom(...config.filteredDebugKeys),
        secret,
        fc.dictionary(fc.constantFrom('scope', 'state', 'x'), fc.constantFrom('a', 'b c', '1')),
        (key, value, extra) => {
          const json = redactBody(JSON.stringify({ ...extra, [key]: value }), 'application/json');
          expect(json).not.toContain(value);
          const form = redactBody(new URLSearchParams({ ...extra, [key]: value }).toString());
          expect(form).not.toContain(value);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (body, type) => {
        expect(typeof redactBody(body, type)).toBe('string');
      }),
    );
  });

  it('redacts a token in the URL of a serialized response', () => {
    const r = new Response({ status: 200, url: `${SITE}/api?access_token=at-e1f2a3b4c5&page=1` });
    expect(JSON.stringify(r)).toContain('access_token=[FILTERED]&page=1');
    expect(JSON.stringify(r)).not.toContain('at-e1f2a3b4c5');
  });
});
