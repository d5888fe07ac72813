// Every example payload of @octokit/webhooks-examples (api.github.com and every ghes-* folder) goes through
// `verifyAndReceive` and through the middleware (a real node:http server on 127.0.0.1, driven with fetch),
// and must reach exactly its `event.action` handler (when the payload has an action), its `event` handler and
// the `*` handler, each called once with the delivery's id, the neutral event name and the payload.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmitterWebhookEventName, sign, Webhooks } from '../../../lib/webhooks/index.js';
import { loadWebhookExamples, type WebhookExample } from '../../helpers/webhook-examples.js';

const SECRET = 'examples-test-secret';
const CONCURRENCY = 16;
const examples = loadWebhookExamples();

interface Call {
  handler: string;
  id: string;
  name: string;
  payload: unknown;
}

/** Handler calls by delivery id. */
const calls = new Map<string, Call[]>();
const warnings: string[] = [];
const webhooks = new Webhooks({
  secret: SECRET,
  log: { warn: (message: string) => warnings.push(message), error: () => {} },
});

// One handler for every plain name and every name.action the examples hold, plus `*`: an event must reach
// its own three and no other (an `issues.opened` delivery never reaches `issues.closed`).
const handlerNames = new Set<string>(['*']);
for (const example of examples) {
  handlerNames.add(example.name);
  if (example.action !== undefined) handlerNames.add(`${example.name}.${example.action}`);
}
for (const handler of handlerNames) {
  webhooks.on(handler as EmitterWebhookEventName, (event) => {
    const list = calls.get(event.id) ?? [];
    list.push({ handler, id: event.id, name: event.name, payload: event.payload });
    calls.set(event.id, list);
  });
}

/** Runs `task` over `items` with at most CONCURRENCY at once. */
async function eachLimited<T>(items: readonly T[], task: (item: T, index: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

/** Checks that the delivery `id` of `example` reached exactly its handlers, once each, with the right event. */
function expectDispatched(example: WebhookExample, id: string): void {
  const expected = [
    ...(example.action === undefined ? [] : [`${example.name}.${example.action}`]),
    example.name,
    '*',
  ].sort();
  const got = calls.get(id) ?? [];
  expect(got.map((call) => call.handler).sort(), example.label).toEqual(expected);
  for (const call of got) {
    expect(call.id, example.label).toBe(id);
    expect(call.name, example.label).toBe(example.name);
    // The payload's JSON text is the delivery's: a cheap, exact deep comparison.
    expect(JSON.stringify(call.payload), example.label).toBe(example.json);
  }
}

describe('@octokit/webhooks-examples', () => {
  it('holds the api.github.com payloads and those of every ghes-* folder', () => {
    const sources = new Set(examples.map((example) => example.source));
    expect(sources).toContain('api.github.com');
    expect([...sources].filter((source) => source.startsWith('ghes-')).length).toBeGreaterThan(0);
    expect(examples.filter((example) => example.source === 'api.github.com').length).toBeGreaterThan(300);
    expect(examples.some((example) => example.forgeName === 'github_app_authorization')).toBe(true);
  });

  it('knows every event and event.action of the api.github.com examples (only GHES-only names warn)', () => {
    // The catalogue is the forge's public one; a ghes-* folder also holds GHES-only events. A warning for a
    // name that an api.github.com example uses means the catalogue misses it.
    const publicNames = new Set<string>();
    for (const example of examples.filter((candidate) => candidate.source === 'api.github.com')) {
      publicNames.add(example.name);
      if (example.action !== undefined) publicNames.add(`${example.name}.${example.action}`);
    }
    const warned = warnings.map((warning) => /^"(.+)" is not a known event name/.exec(warning)?.[1]);
    expect(warned).not.toContain(undefined);
    expect(warned.filter((name) => publicNames.has(name!))).toEqual([]);
  });

  it(`reaches the event, event.action and * handlers through verifyAndReceive for all ${examples.length} examples`, async () => {
    await eachLimited(examples, async (example, index) => {
      const id = `verify-and-receive-${index}`;
      await webhooks.verifyAndReceive({
        id,
        name: example.forgeName,
        payload: example.json,
        signature: sign(SECRET, example.json),
      });
    });
    examples.forEach((example, index) => {
      expectDispatched(example, `verify-and-receive-${index}`);
    });
  });

  describe('through the middleware on a real node:http server', () => {
    let server: Server;
    let url: string;

    beforeAll(async () => {
      server = createServer(webhooks.middleware);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });

    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it(`answers 200 and reaches the event, event.action and * handlers for all ${examples.length} examples`, async () => {
      const failures: string[] = [];
      await eachLimited(examples, async (example, index) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-forge-event': example.forgeName,
            'x-forge-delivery': `middleware-${index}`,
            'x-hub-signature-256': sign(SECRET, example.json),
          },
          body: example.json,
        });
        const text = await response.text();
        if (response.status !== 200) failures.push(`${example.label}: ${response.status} ${text}`);
      });
      expect(failures).toEqual([]);
      examples.forEach((example, index) => {
        expectDispatched(example, `middleware-${index}`);
      });
    });

    it('reports the forge’s github_app_authorization under the neutral forge_app_authorization', async () => {
      const example = examples.find((candidate) => candidate.forgeName === 'github_app_authorization')!;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forge-event': 'forge_app_authorization',
          'x-forge-delivery': 'neutral-name-1',
          'x-hub-signature-256': sign(SECRET, example.json),
        },
        body: example.json,
      });
      expect(response.status).toBe(200);
      await response.text();
      expect(example.name).toBe('forge_app_authorization');
      expectDispatched(example, 'neutral-name-1');
    });
  });
});
