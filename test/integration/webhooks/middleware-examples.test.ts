// Every example payload of @octokit/webhooks-examples, posted to the middleware on a real node:http server,
// reaches its `event`, `event.action` and `*` handlers.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmitterWebhookEventName, sign, Webhooks } from '../../../lib/webhooks/index.js';
import { loadWebhookExamples } from '../../helpers/webhook-examples.js';

const SECRET = 'middleware-examples-secret';
const examples = loadWebhookExamples();
const reached = new Map<string, string[]>();
const webhooks = new Webhooks({ secret: SECRET, log: { warn() {}, error() {} } });
const server = createServer(webhooks.middleware);
let url = '';

function record(label: string) {
  return (event: { id: string }) => {
    const list = reached.get(event.id) ?? [];
    list.push(label);
    reached.set(event.id, list);
  };
}

beforeAll(async () => {
  const names = new Set<string>();
  for (const example of examples) {
    names.add(example.name);
    if (example.action !== undefined) names.add(`${example.name}.${example.action}`);
  }
  for (const name of names) webhooks.on(name as EmitterWebhookEventName, record(name));
  webhooks.on('*', record('*'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('every @octokit/webhooks-examples payload through the middleware', () => {
  it.each(examples.map((example, index) => [example.label, example, index] as const))(
    '%s',
    async (_label, example, index) => {
      const id = `example-${index}`;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forge-event': example.forgeName,
          'x-forge-delivery': id,
          'x-hub-signature-256': sign(SECRET, example.json),
        },
        body: example.json,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ok: true });
      const expected = [
        ...(example.action === undefined ? [] : [`${example.name}.${example.action}`]),
        example.name,
        '*',
      ];
      expect(reached.get(id)).toEqual(expected);
    },
  );
});
