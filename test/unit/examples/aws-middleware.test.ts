// examples/aws/middleware.ts (shown in the README) run as a user would deploy it: signed events in, JSON out.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { invoke, SECRET, v1Event, v2Event } from '../aws/ingest/events.js';

async function load() {
  vi.resetModules();
  return (await import('../../../examples/aws/middleware.js')).handler;
}

beforeEach(() => vi.stubEnv('WEBHOOK_SECRET', SECRET));
afterEach(() => vi.unstubAllEnvs());

describe('examples/aws/middleware.ts', () => {
  it('answers a signed delivery 202 with its id and event name, from a 2.0 or a 1.0 event', async () => {
    const handler = await load();
    expect(JSON.parse((await invoke(handler, v2Event({ id: 'ex-1' }))).body)).toEqual({
      delivery: 'ex-1',
      event: 'issues',
    });
    expect((await invoke(handler, v1Event({ base64: true }))).statusCode).toBe(202);
  });

  it('answers a bad signature 401 and a non-object body 400, as JSON errors', async () => {
    const handler = await load();
    const forged = await invoke(handler, v2Event({ secret: 'not-the-secret' }));
    expect(forged.statusCode).toBe(401);
    expect(JSON.parse(forged.body).error.code).toBe('invalid_signature');
    expect((await invoke(handler, v2Event({ body: '[]' }))).statusCode).toBe(400);
  });

  it('fails at load without a secret', async () => {
    vi.stubEnv('WEBHOOK_SECRET', '');
    await expect(load()).rejects.toThrow(TypeError);
  });
});
