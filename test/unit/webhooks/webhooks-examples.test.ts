// Every example payload of @octokit/webhooks-examples goes through verifyAndReceive and reaches its
// `event`, `event.action` and `*` handlers. (The middleware half is in test/integration/webhooks.)
import { describe, expect, it, vi } from 'vitest';
import {
  type EmitterWebhookEventName,
  isKnownEventName,
  sign,
  Webhooks,
} from '../../../lib/webhooks/index.js';
import { loadWebhookExamples } from '../../helpers/webhook-examples.js';

const SECRET = 'examples-secret';
const examples = loadWebhookExamples();

describe('every @octokit/webhooks-examples payload through verifyAndReceive()', () => {
  it('covers hundreds of examples, with and without actions', () => {
    expect(examples.length).toBeGreaterThan(500);
    expect(examples.some((example) => example.action === undefined)).toBe(true);
  });

  it.each(examples.map((example) => [example.label, example] as const))('%s', async (_label, example) => {
    const log = { warn: vi.fn(), error: vi.fn() };
    const webhooks = new Webhooks({ secret: SECRET, log });
    const reached: string[] = [];
    const names = [
      '*',
      example.name,
      ...(example.action === undefined ? [] : [`${example.name}.${example.action}`]),
    ];
    for (const name of names) {
      webhooks.on(name as EmitterWebhookEventName, (event) => {
        expect(event.id).toBe(`delivery-${example.index}`);
        expect(event.name).toBe(example.name);
        expect(event.payload).toEqual(example.payload);
        reached.push(name);
      });
    }
    const signature = sign(SECRET, example.json);
    // The forge's own name goes in: github_app_authorization is reported as forge_app_authorization.
    const event = { id: `delivery-${example.index}`, name: example.forgeName, signature };
    await webhooks.verifyAndReceive({ ...event, payload: example.json });
    await webhooks.verifyAndReceive({ ...event, payload: Buffer.from(example.json) });
    await webhooks.verifyAndReceive({ ...event, payload: example.payload });
    const expected = names.slice(1).reverse().concat('*');
    expect(reached).toEqual([...expected, ...expected, ...expected]);
    // Names outside the catalogue (GHES-only events such as cache_sync) only warn, and still reach handlers.
    const unknown = names.filter((name) => name !== '*' && !isKnownEventName(name));
    expect(log.warn.mock.calls).toEqual(
      unknown.map((name) => [`"${name}" is not a known event name; check for typos`]),
    );
  });
});
