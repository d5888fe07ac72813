// Standard Webhooks deliveries signed by the real `standardwebhooks` and `svix` packages, posted to
// `new Webhooks({ secret, forge: 'standard' | 'svix' })`'s middleware on a real node:http server on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Webhooks } from '../../../lib/webhooks/index.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER = `whsec_${randomBytes(32).toString('base64')}`;
const BODY = JSON.stringify({
  type: 'contact.created',
  timestamp: '2026-11-26T10:00:00Z',
  data: { id: 'c_1', name: 'Zoë Ångström 漢字 🚀' },
});

interface Seen {
  handler: string;
  id: unknown;
  name: unknown;
  action: unknown;
}

const seen: Seen[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  const instances = new Map<string, Webhooks>();
  for (const forge of ['standard', 'svix'] as const) {
    const webhooks = new Webhooks({
      secret: SECRET,
      forge,
      path: `/${forge}`,
      log: { warn: vi.fn(), error: vi.fn() },
    });
    for (const handler of ['contact.created', 'contact']) {
      webhooks.on(handler as never, (event) => {
        const { id, name, action } = event as unknown as Record<string, unknown>;
        seen.push({ handler, id, name, action });
      });
    }
    instances.set(`/${forge}`, webhooks);
  }
  // A source that tolerates 10 s only.
  instances.set(
    '/strict',
    new Webhooks({ secret: SECRET, forge: 'standard', path: '/strict', toleranceSeconds: 10 }),
  );
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    void instances.get(path)?.middleware(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

function post(path: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; json: { error?: { code: string; message: string } } }>(
    (resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      });
      req.on('error', reject);
      req.end(body);
    },
  );
}

type Signer = (secret: string, id: string, at: Date, body: string) => string;
const signers: Record<'standard' | 'svix', { prefix: string; sign: Signer }> = {
  standard: {
    prefix: 'webhook',
    sign: (secret, id, at, body) => new StandardWebhook(secret).sign(id, at, body),
  },
  svix: { prefix: 'svix', sign: (secret, id, at, body) => new SvixWebhook(secret).sign(id, at, body) },
};

function signed(
  forge: 'standard' | 'svix',
  options: { id: string; offset?: number; secret?: string; body?: string },
) {
  const { prefix, sign } = signers[forge];
  const timestamp = Math.floor(Date.now() / 1000) + (options.offset ?? 0);
  return {
    'content-type': 'application/json',
    [`${prefix}-id`]: options.id,
    [`${prefix}-timestamp`]: String(timestamp),
    [`${prefix}-signature`]: sign(
      options.secret ?? SECRET,
      options.id,
      new Date(timestamp * 1000),
      options.body ?? BODY,
    ),
  };
}

describe.each(['standard', 'svix'] as const)('the %s preset over node:http', (forge) => {
  it('answers 200 to a delivery the package signed and dispatches contact.created', async () => {
    const id = `msg_${forge}_good`;
    const answer = await post(`/${forge}`, signed(forge, { id }), BODY);
    expect(answer.status).toBe(200);
    const mine = seen.filter((entry) => entry.id === id);
    expect(mine.map((entry) => entry.handler).sort()).toEqual(['contact', 'contact.created']);
    expect(mine[0]).toMatchObject({ name: 'contact', action: 'created' });
  });

  it.each([
    [
      'stale',
      { offset: -600 },
      'stale_timestamp',
      /is 60\d s \(10 min \d+ s\) old, beyond the tolerance of 300 s/,
    ],
    [
      'future',
      { offset: 600 },
      'future_timestamp',
      /is (599 s \(9 min 59 s\)|60\d s \(10 min \d+ s\)) in the future/,
    ],
    ['wrong-secret', { secret: OTHER }, 'invalid_signature', /does not match/],
  ] as const)('answers 401 to a %s delivery with its reason', async (label, options, code, message) => {
    const answer = await post(`/${forge}`, signed(forge, { id: `msg_${forge}_${label}`, ...options }), BODY);
    expect(answer.status).toBe(401);
    expect(answer.json.error?.code).toBe(code);
    expect(answer.json.error?.message).toMatch(message);
    expect(seen.some((entry) => entry.id === `msg_${forge}_${label}`)).toBe(false);
  });

  it('answers 401 to a tampered body', async () => {
    const headers = signed(forge, { id: `msg_${forge}_tampered` });
    const answer = await post(`/${forge}`, headers, BODY.replace('c_1', 'c_2'));
    expect(answer.status).toBe(401);
    expect(answer.json.error?.code).toBe('invalid_signature');
  });
});

describe('a per-source tolerance', () => {
  it('refuses a delivery 60 s old where the source tolerates 10 s, saying by how much', async () => {
    const answer = await post('/strict', signed('standard', { id: 'msg_strict', offset: -60 }), BODY);
    expect(answer.status).toBe(401);
    expect(answer.json.error?.message).toMatch(/is 6\d s \(1 min \d+ s\) old, beyond the tolerance of 10 s/);
    const fresh = await post('/strict', signed('standard', { id: 'msg_strict_fresh' }), BODY);
    expect(fresh.status).toBe(200);
  });
});
