// Forge presets through the Node middleware on a real node:http server on 127.0.0.1 (port 0): deliveries built
// from each forge's documented headers and payload fields reach the same catalogue handler names.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Forge, resolvePreset, Webhooks } from '../../../lib/webhooks/index.js';
import { forgeDeliveries, routedPerForge } from '../../fixtures/forges/deliveries.js';
import { documentedHeaders } from '../../fixtures/forges/headers.js';

const SECRET = 'forge-middleware-secret';
const FORGES: readonly Forge[] = ['github', 'gitea', 'forgejo', 'gitlab', 'bitbucket'];

interface Received {
  handler: string;
  forge: unknown;
  nativeName: unknown;
  id: unknown;
}

const received: Received[] = [];
let base = '';
let close: () => Promise<void> = async () => undefined;

beforeAll(async () => {
  // One server, one Webhooks instance per forge under /<forge>, the same handler names on each.
  const instances = new Map<string, Webhooks>();
  for (const forge of FORGES) {
    const webhooks = new Webhooks({
      secret: SECRET,
      forge,
      path: `/${forge}`,
      log: { warn: vi.fn(), error: vi.fn() },
    });
    for (const name of ['pull_request.opened', 'push', 'pull_request', '*'] as const) {
      webhooks.on(name, (event) => {
        const seen = event as unknown as Record<string, unknown>;
        received.push({ handler: name, forge: seen.forge, nativeName: seen.nativeName, id: seen.id });
      });
    }
    instances.set(`/${forge}`, webhooks);
  }
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const webhooks = instances.get(path) ?? instances.get('/github');
    void webhooks?.middleware(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
});

afterAll(() => close());

/** POSTs with node:http so the header names go on the wire exactly as spelled. */
function post(
  path: string,
  headers: Record<string, string>,
  body: string,
  method = 'POST',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('forge presets over node:http', () => {
  it.each(routedPerForge.map((delivery) => [delivery.label, delivery] as const))(
    '%s reaches the shared handler names with 200',
    async (_label, delivery) => {
      received.length = 0;
      const body = JSON.stringify(delivery.payload);
      const headers = documentedHeaders(
        delivery.forge,
        SECRET,
        body,
        delivery.nativeName,
        `id-${delivery.label}`,
      );
      const response = await post(`/${delivery.forge}`, headers, body);
      expect(response).toEqual({ status: 200, text: '{"ok":true}' });
      const handlers = received.map((one) => one.handler).sort();
      const expected =
        delivery.name === 'push' ? ['*', 'push'] : ['*', 'pull_request', 'pull_request.opened'];
      expect(handlers).toEqual(expected);
      for (const one of received) {
        expect(one).toMatchObject({
          forge: delivery.forge,
          nativeName: delivery.nativeName,
          id: `id-${delivery.label}`,
        });
      }
    },
  );

  it.each(forgeDeliveries.map((delivery) => [delivery.label, delivery] as const))(
    '%s: header names in upper case on the wire verify too',
    async (_label, delivery) => {
      const body = JSON.stringify(delivery.payload);
      const headers = Object.fromEntries(
        Object.entries(documentedHeaders(delivery.forge, SECRET, body, delivery.nativeName, 'up')).map(
          ([key, value]) => [key.toUpperCase(), value],
        ),
      );
      expect((await post(`/${delivery.forge}`, headers, body)).status).toBe(200);
    },
  );

  describe.each(FORGES)('%s', (forge) => {
    const delivery = routedPerForge.find((one) => one.forge === forge && one.name === 'pull_request');
    const body = JSON.stringify(delivery?.payload);
    const nativeName = delivery?.nativeName as string;
    const headers = () => documentedHeaders(forge, SECRET, body, nativeName, 'd-1');
    const preset = resolvePreset(forge);
    const dropping = (names: readonly string[]) =>
      Object.fromEntries(Object.entries(headers()).filter(([key]) => !names.includes(key.toLowerCase())));

    it('a wrong token or HMAC is 401 and reaches no handler', async () => {
      received.length = 0;
      const wrong = documentedHeaders(forge, 'wrong-secret', body, nativeName, 'd-1');
      const response = await post(`/${forge}`, wrong, body);
      expect(response.status).toBe(401);
      expect(JSON.parse(response.text)).toMatchObject({ error: { code: 'invalid_signature' } });
      expect(response.text).not.toContain(SECRET);
      expect(response.text).not.toContain('wrong-secret');
      expect(received).toEqual([]);
    });

    it('malformed deliveries get only 4xx', async () => {
      received.length = 0;
      const cases: [string, Record<string, string>, string, string?][] = [
        ['no event header', dropping(preset.eventHeaders), body],
        ['no delivery id', dropping(preset.deliveryHeaders), body],
        ['no signature', dropping(preset.signatures.map((source) => source.header)), body],
        ['bad JSON', documentedHeaders(forge, SECRET, '{"a":', nativeName, 'd-1'), '{"a":'],
        ['a JSON array', documentedHeaders(forge, SECRET, '[]', nativeName, 'd-1'), '[]'],
        ['form encoded', { ...headers(), 'Content-Type': 'application/x-www-form-urlencoded' }, body],
        ['no content type', dropping(['content-type']), body],
        ['a PUT', headers(), body, 'PUT'],
        ['a GET', headers(), '', 'GET'],
      ];
      for (const [label, sent, raw, method] of cases) {
        const response = await post(`/${forge}`, sent, raw, method);
        expect(response.status, label).toBeGreaterThanOrEqual(400);
        expect(response.status, label).toBeLessThan(500);
      }
      expect(received).toEqual([]);
    });
  });

  it('gitea: both signatures verify, either one alone too, and a wrong sha256 is not rescued by sha1', async () => {
    const delivery = routedPerForge.find((one) => one.forge === 'gitea' && one.name === 'pull_request');
    const body = JSON.stringify(delivery?.payload);
    const all = documentedHeaders('gitea', SECRET, body, 'pull_request', 'd-2');
    const drop = (...names: string[]) =>
      Object.fromEntries(Object.entries(all).filter(([key]) => !names.includes(key)));
    expect((await post('/gitea', all, body)).status).toBe(200);
    expect((await post('/gitea', drop('X-Hub-Signature-256', 'X-Hub-Signature'), body)).status).toBe(200);
    expect((await post('/gitea', drop('X-Gitea-Signature'), body)).status).toBe(200);
    const wrongSha256 = { ...drop('X-Hub-Signature-256'), 'X-Gitea-Signature': 'f'.repeat(64) };
    expect((await post('/gitea', wrongSha256, body)).status).toBe(401);
  });
});
