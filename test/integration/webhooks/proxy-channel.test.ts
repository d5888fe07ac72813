// The proxy channel client against a local server that speaks the proxy service's (smee.io) wire format:
// deliveries are POSTed to the channel as the forge would, relayed as server-sent events, read by our
// client with the real `eventsource` package, and handed to a real `Webhooks` instance.
import { createHmac } from 'node:crypto';
import { EventSource } from 'eventsource';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProxyChannelError, ProxyChannelErrorCodes } from '../../../lib/webhooks/errors.js';
import {
  ErrorCodes,
  serializePayload,
  sign,
  WebhookReceiveError,
  Webhooks,
  WebhookVerificationError,
} from '../../../lib/webhooks/index.js';
import {
  createProxyChannel,
  ProxyChannel,
  type ProxyChannelOptions,
} from '../../../lib/webhooks/proxy-channel.js';
import { type SseServer, type SseServerOptions, startSseServer } from '../../helpers/sse-server.js';
import { loadWebhookExamples } from '../../helpers/webhook-examples.js';

const SECRET = 'proxy-channel-test-secret';

interface Received {
  id: string;
  name: string;
  payload: unknown;
}

let server: SseServer;
let channels: ProxyChannel[] = [];
let webhooks: Webhooks;
let received: Received[];
let errors: ProxyChannelError[];

async function startServer(options: SseServerOptions = {}): Promise<SseServer> {
  server = await startSseServer(options);
  return server;
}

/** Opens a channel on the current server, relaying to `webhooks`, collecting errors; waits until open. */
async function openChannel(options: Partial<ProxyChannelOptions> = {}): Promise<ProxyChannel> {
  const channel = createProxyChannel({
    url: server.url,
    webhooks,
    onError: (error) => errors.push(error),
    ...options,
  });
  channels.push(channel);
  await channel.ready;
  await server.waitForClients(1);
  return channel;
}

interface Delivery {
  name: string;
  body: string;
  id?: string;
  signature256?: string | undefined;
  signature1?: string | undefined;
  headers?: Record<string, string>;
}

/** POSTs a delivery to the channel the way the forge does. */
async function post(delivery: Delivery): Promise<void> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-forge-event': delivery.name,
    'x-forge-delivery': delivery.id ?? crypto.randomUUID(),
    ...delivery.headers,
  };
  if (delivery.signature256 !== undefined) headers['x-hub-signature-256'] = delivery.signature256;
  if (delivery.signature1 !== undefined) headers['x-hub-signature'] = delivery.signature1;
  const response = await fetch(server.url, { method: 'POST', headers, body: delivery.body });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

function signed(name: string, body: string, id?: string): Delivery {
  return { name, body, signature256: sign(SECRET, body), ...(id === undefined ? {} : { id }) };
}

/**
 * Resolves with the next `delivery` or `error` of the channel, whichever comes first. (`events.once` would
 * reject on `error` while waiting for another event, hence plain listeners.)
 */
function nextOutcome(
  channel: ProxyChannel,
): Promise<{ kind: 'delivery'; delivery: unknown } | { kind: 'error'; error: ProxyChannelError }> {
  return new Promise((resolve) => {
    const onDelivery = (delivery: unknown) => {
      channel.off('error', onError);
      resolve({ kind: 'delivery', delivery });
    };
    const onError = (error: ProxyChannelError) => {
      channel.off('delivery', onDelivery);
      resolve({ kind: 'error', error });
    };
    channel.once('delivery', onDelivery);
    channel.once('error', onError);
  });
}

/** Resolves with the next emission of one channel event. */
function next<Name extends 'delivery' | 'error' | 'open'>(
  channel: ProxyChannel,
  name: Name,
): Promise<unknown> {
  return new Promise((resolve) => {
    channel.once(name, ((value: unknown) => resolve(value)) as never);
  });
}

/** The next error of the channel; fails the test when a delivery comes first. */
async function nextError(channel: ProxyChannel): Promise<ProxyChannelError> {
  const outcome = await nextOutcome(channel);
  if (outcome.kind !== 'error') throw new Error(`expected an error, got delivery ${JSON.stringify(outcome)}`);
  return outcome.error;
}

/** The next delivery of the channel; fails the test when an error comes first. */
async function nextDelivery(channel: ProxyChannel): Promise<unknown> {
  const outcome = await nextOutcome(channel);
  if (outcome.kind !== 'delivery') throw new Error(`expected a delivery, got ${outcome.error.code}`);
  return outcome.delivery;
}

beforeEach(() => {
  received = [];
  errors = [];
  webhooks = new Webhooks({ secret: SECRET });
  webhooks.on('*', ({ id, name, payload }) => {
    received.push({ id, name, payload });
  });
});

afterEach(async () => {
  await Promise.all(channels.map((channel) => channel.close()));
  channels = [];
  await server?.close();
});

describe('ProxyChannel', () => {
  describe('string bodies (a relay that keeps the raw text)', () => {
    it('verifies exactly the relayed bytes, even where re-serializing would change them', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      // Pretty-printed, escaped non-ASCII, escaped slash, a float written as 1.0: JSON.stringify of the
      // parsed object would differ from every one of these, so only the exact text verifies.
      const body = '{\n  "action": "opened",\n  "title": "caf\\u00e9 \\/ 1",\n  "score": 1.0\n}';
      const delivery = next(channel, 'delivery');
      await post(signed('issues', body, 'delivery-string-1'));
      const relayed = await delivery;

      expect(relayed).toEqual({ id: 'delivery-string-1', name: 'issues' });
      expect(received).toEqual([
        {
          id: 'delivery-string-1',
          name: 'issues',
          payload: { action: 'opened', title: 'café / 1', score: 1 },
        },
      ]);
      expect(errors).toEqual([]);
    });

    it('relays example payloads from @octokit/webhooks-examples with their id, name and payload', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      const examples = loadWebhookExamples().filter((example) => example.source === 'api.github.com');
      const sample = examples.filter((_, index) => index % 10 === 0);
      expect(sample.length).toBeGreaterThan(20);

      let relayed = 0;
      const all = new Promise<void>((resolve) => {
        channel.on('delivery', () => {
          if (++relayed === sample.length) resolve();
        });
      });
      for (const [index, example] of sample.entries()) {
        await post(signed(example.forgeName, example.json, `string-${index}`));
      }
      await all;

      expect(errors).toEqual([]);
      expect(received).toHaveLength(sample.length);
      for (const [index, example] of sample.entries()) {
        expect(
          received.find((event) => event.id === `string-${index}`),
          example.label,
        ).toEqual({
          id: `string-${index}`,
          name: example.name,
          payload: example.payload,
        });
      }
    });
  });

  describe('object bodies (smee.io relays the parsed JSON)', () => {
    it('verifies every api.github.com example signed over the forge serialization', async () => {
      await startServer();
      const channel = await openChannel();
      const examples = loadWebhookExamples().filter((example) => example.source === 'api.github.com');

      let relayed = 0;
      const all = new Promise<void>((resolve) => {
        channel.on('delivery', () => {
          if (++relayed === examples.length) resolve();
        });
      });
      await Promise.all(
        examples.map((example, index) =>
          post(signed(example.forgeName, serializePayload(example.payload), `object-${index}`)),
        ),
      );
      await all;

      expect(errors).toEqual([]);
      expect(received).toHaveLength(examples.length);
      const byId = new Map(received.map((event) => [event.id, event]));
      for (const [index, example] of examples.entries()) {
        expect(byId.get(`object-${index}`), example.label).toEqual({
          id: `object-${index}`,
          name: example.name,
          payload: example.payload,
        });
      }
    });

    it('verifies a body with a control character that the forge escapes with uppercase hex', async () => {
      await startServer();
      const channel = await openChannel();
      const body = '{"action":"created","text":"\\u001B[1mbold\\u001B[0m","emoji":"🚀"}';
      const delivery = next(channel, 'delivery');
      await post(signed('issue_comment', body, 'escape-1'));
      await delivery;

      expect(received).toEqual([
        {
          id: 'escape-1',
          name: 'issue_comment',
          payload: { action: 'created', text: '\u001b[1mbold\u001b[0m', emoji: '🚀' },
        },
      ]);
    });

    it.each([
      ['escaped non-ASCII', '{"title":"caf\\u00e9"}'],
      ['an escaped slash', '{"url":"a\\/b"}'],
      ['a float written as 1.0', '{"score":1.0}'],
      ['an integer-like key after another key (JSON.parse moves it first)', '{"b":1,"1":2}'],
      ['whitespace', '{ "zen": "Keep it logically awesome." }'],
    ])('rejects a delivery whose signed text differs from the re-serialization: %s', async (_, body) => {
      await startServer();
      const channel = await openChannel();
      const outcome = nextError(channel);
      await post(signed('ping', body, 'differs-1'));
      const error = await outcome;

      expect(error).toBeInstanceOf(ProxyChannelError);
      expect(error.code).toBe(ProxyChannelErrorCodes.deliveryRejected);
      expect(error.message).toBe(
        'delivery "differs-1" of event "ping" was rejected: invalid_signature; the proxy relayed a parsed body, ' +
          'whose re-serialization can differ from the signed bytes',
      );
      expect(error.cause).toBeInstanceOf(WebhookVerificationError);
      expect((error.cause as WebhookVerificationError).code).toBe(ErrorCodes.invalidSignature);
      expect(received).toEqual([]);
    });
  });

  describe('signatures', () => {
    it('emits error and never reaches a handler for a bad signature', async () => {
      await startServer({ bodyAs: 'string' });
      const webhooksErrors: unknown[] = [];
      webhooks.on('error', (error) => {
        webhooksErrors.push(error);
      });
      const channel = await openChannel();
      const body = '{"action":"opened"}';
      const outcome = nextError(channel);
      await post({ name: 'issues', id: 'bad-1', body, signature256: sign('another secret', body) });
      const error = await outcome;

      expect(error.code).toBe('delivery_rejected');
      expect(error.status).toBe(401);
      expect(error.message).toBe('delivery "bad-1" of event "issues" was rejected: invalid_signature');
      expect((error.cause as WebhookVerificationError).code).toBe('invalid_signature');
      expect(error.event).toEqual({ id: 'bad-1', name: 'issues', payload: body });
      expect(webhooksErrors).toHaveLength(1);
      expect(received).toEqual([]);
      expect(errors).toEqual([error]);
      expect(JSON.stringify({ message: error.message, code: error.code })).not.toContain(SECRET);
    });

    it('prefers x-hub-signature-256 and never falls back to a valid sha1 signature', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      const body = '{"zen":"Design for failure."}';
      const sha1 = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
      const wrong256 = sign('another secret', body);

      const rejected = nextError(channel);
      await post({ name: 'ping', id: 'prefer-1', body, signature256: wrong256, signature1: sha1 });
      expect((await rejected).code).toBe('delivery_rejected');

      const delivered = nextDelivery(channel);
      await post({
        name: 'ping',
        id: 'prefer-2',
        body,
        signature256: sign(SECRET, body),
        signature1: 'sha1=00',
      });
      expect(await delivered).toEqual({ id: 'prefer-2', name: 'ping' });
      expect(received.map((event) => event.id)).toEqual(['prefer-2']);
    });

    it('accepts a sole sha1 signature, unless allowSha1 is false', async () => {
      await startServer({ bodyAs: 'string' });
      const body = '{"zen":"Half measures are as bad as nothing at all."}';
      const sha1 = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
      const channel = await openChannel();
      const delivered = nextDelivery(channel);
      await post({ name: 'ping', id: 'sha1-1', body, signature1: sha1 });
      expect(await delivered).toEqual({ id: 'sha1-1', name: 'ping' });

      await channel.close();
      const strict = await openChannel({ allowSha1: false });
      await server.waitForClients(1);
      const refused = nextError(strict);
      await post({ name: 'ping', id: 'sha1-2', body, signature1: sha1 });
      const error = await refused;
      expect(error.code).toBe('missing_field');
      expect(error.message).toBe('message has no "x-hub-signature-256" key');
      expect(received.map((event) => event.id)).toEqual(['sha1-1']);
    });
  });

  describe('messages it cannot use', () => {
    it('reports each malformed message with its code and keeps relaying afterwards', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      const body = '{"zen":"Approachable is better than simple."}';
      const signature = sign(SECRET, body);
      const base = { 'x-forge-event': 'ping', 'x-request-id': 'm-1', 'x-hub-signature-256': signature, body };
      const cases: [string, () => void, string, string][] = [
        [
          'invalid json',
          () => server.sendRaw('data: {"x-forge-event":\n\n'),
          'invalid_message',
          'message data is not valid JSON',
        ],
        [
          'a json array',
          () => server.publish([1, 2]),
          'invalid_message',
          'message data is not a JSON object',
        ],
        [
          'json null',
          () => server.sendRaw('data: null\n\n'),
          'invalid_message',
          'message data is not a JSON object',
        ],
        [
          'no event name',
          () => server.publish({ ...base, 'x-forge-event': undefined }),
          'missing_field',
          'message has no "x-forge-event" key',
        ],
        [
          'no delivery id',
          () => server.publish({ ...base, 'x-request-id': undefined }),
          'missing_field',
          'message has no "x-request-id" key',
        ],
        [
          'no signature',
          () => server.publish({ ...base, 'x-hub-signature-256': undefined }),
          'missing_field',
          'message has no "x-hub-signature-256" or "x-hub-signature" key',
        ],
        [
          'no body',
          () => server.publish({ ...base, body: undefined }),
          'missing_field',
          'message has no "body" key holding a string or an object',
        ],
        [
          'a numeric body',
          () => server.publish({ ...base, body: 42 }),
          'missing_field',
          'message has no "body" key holding a string or an object',
        ],
        [
          'a form-encoded delivery',
          () => server.publish({ ...base, 'content-type': 'application/x-www-form-urlencoded' }),
          'unsupported_media_type',
          'relayed "content-type" must be "application/json"',
        ],
      ];
      for (const [label, send, code, message] of cases) {
        const outcome = nextError(channel);
        send();
        const error = await outcome;
        expect(error, label).toBeInstanceOf(ProxyChannelError);
        expect(error.code, label).toBe(code);
        expect(error.message, label).toBe(message);
      }
      expect(errors).toHaveLength(cases.length);

      const delivered = next(channel, 'delivery');
      server.publish({ ...base, 'content-type': 'application/json; charset=utf-8' });
      await delivered;
      expect(received).toEqual([{ id: 'm-1', name: 'ping', payload: JSON.parse(body) }]);
    });

    it('reads a verified body that is not a json object as a rejected delivery', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      const outcome = nextError(channel);
      await post(signed('ping', 'not json at all', 'text-1'));
      const error = await outcome;
      expect(error.code).toBe('delivery_rejected');
      expect(error.message).toBe('delivery "text-1" of event "ping" was rejected: invalid_json');
      expect(error.status).toBe(400);
    });

    it('ignores the service’s ready and ping events', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      server.ping();
      server.publish({}, 'ready');
      server.ping();
      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"Speak like a human."}', 'after-ping'));
      await delivery;
      expect(errors).toEqual([]);
      expect(received.map((event) => event.id)).toEqual(['after-ping']);
    });

    it('logs an error when nobody listens, instead of throwing', async () => {
      await startServer({ bodyAs: 'string' });
      const log = { error: vi.fn() };
      const channel = createProxyChannel({ url: server.url, webhooks, log });
      channels.push(channel);
      await channel.ready;
      server.sendRaw('data: not json\n\n');
      await vi.waitFor(() => expect(log.error).toHaveBeenCalledTimes(1));
      expect(log.error).toHaveBeenCalledWith(
        'proxy channel: invalid_message: message data is not valid JSON',
      );

      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"Non-blocking is better than blocking."}', 'still-alive'));
      await delivery;
      expect(received.map((event) => event.id)).toEqual(['still-alive']);
    });
  });

  describe('listeners', () => {
    it('logs a throwing delivery listener and keeps relaying', async () => {
      await startServer({ bodyAs: 'string' });
      const log = { error: vi.fn() };
      const channel = await openChannel({ log });
      channel.once('delivery', () => {
        throw new Error('listener broke');
      });
      await post(signed('ping', '{"zen":"x"}', 'throwing-listener'));
      await vi.waitFor(() => expect(log.error).toHaveBeenCalledTimes(1));
      expect(log.error).toHaveBeenCalledWith(
        'proxy channel "delivery" listener threw',
        new Error('listener broke'),
      );

      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"y"}', 'next-one'));
      expect(await delivery).toEqual({ id: 'next-one', name: 'ping' });
      await vi.waitFor(() => expect(channel.pending).toBe(0));
    });

    it('logs a throwing onError and keeps relaying', async () => {
      await startServer({ bodyAs: 'string' });
      const log = { error: vi.fn() };
      const channel = await openChannel({
        log,
        onError: () => {
          throw new Error('onError broke');
        },
      });
      server.sendRaw('data: nope\n\n');
      await vi.waitFor(() => expect(log.error).toHaveBeenCalledTimes(1));
      expect(log.error).toHaveBeenCalledWith(
        'proxy channel "onError" handler threw',
        new Error('onError broke'),
      );

      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"z"}', 'after-throwing-onerror'));
      expect(await delivery).toEqual({ id: 'after-throwing-onerror', name: 'ping' });
    });
  });

  describe('handlers', () => {
    it('reports failing handlers as a rejected delivery with the handler errors', async () => {
      await startServer({ bodyAs: 'string' });
      webhooks.on('issues.opened', () => {
        throw new Error('handler broke');
      });
      webhooks.on('error', () => {});
      const channel = await openChannel();
      const outcome = nextError(channel);
      await post(signed('issues', '{"action":"opened"}', 'fail-1'));
      const error = await outcome;
      expect(error.code).toBe('delivery_rejected');
      expect(error.status).toBe(500);
      expect(error.message).toBe('delivery "fail-1" of event "issues" was rejected: handler_failed');
      expect(error.cause).toBeInstanceOf(WebhookReceiveError);
      expect((error.cause as WebhookReceiveError).errors.map((e) => (e as Error).message)).toEqual([
        'handler broke',
      ]);
    });

    it('reads a real forge’s header names through the keys option', async () => {
      await startServer();
      const channel = await openChannel({ keys: { id: 'x-github-delivery', event: 'x-github-event' } });
      const body = '{"action":"revoked","sender":{"login":"octocat"}}';
      const delivery = next(channel, 'delivery');
      await post({
        name: 'ignored',
        body,
        signature256: sign(SECRET, body),
        headers: { 'x-github-event': 'github_app_authorization', 'x-github-delivery': 'gh-1' },
      });
      await delivery;
      expect(received).toEqual([{ id: 'gh-1', name: 'forge_app_authorization', payload: JSON.parse(body) }]);
    });

    it('takes x-request-id over the forge delivery header when both are relayed', async () => {
      await startServer({ bodyAs: 'string' });
      const channel = await openChannel();
      const delivery = next(channel, 'delivery');
      await post({ ...signed('ping', '{"zen":"x"}', 'forge-id'), headers: { 'x-request-id': 'request-id' } });
      await delivery;
      expect(received.map((event) => event.id)).toEqual(['request-id']);
    });
  });

  describe('connection', () => {
    it('stops delivering after close() and waits for deliveries in flight', async () => {
      await startServer({ bodyAs: 'string' });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let finished = false;
      webhooks.on('issues', async () => {
        await gate;
        finished = true;
      });
      const channel = await openChannel();
      await post(signed('issues', '{"action":"opened"}', 'slow-1'));
      await vi.waitFor(() => expect(channel.pending).toBe(1));

      const closing = channel.close();
      expect(channel.closed).toBe(true);
      await vi.waitFor(() => expect(server.clients()).toBe(0));
      await post(signed('issues', '{"action":"closed"}', 'after-close'));
      let closed = false;
      void closing.then(() => {
        closed = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(closed).toBe(false);
      release();
      await closing;
      expect(finished).toBe(true);
      expect(received.map((event) => event.id)).toEqual(['slow-1']);
      expect(server.deliveries()).toBe(2);
    });

    it('reconnects after the server drops the stream and reports the drop', async () => {
      await startServer({ bodyAs: 'string', retryMs: 20 });
      const channel = await openChannel();
      const lost = next(channel, 'error');
      const reopened = next(channel, 'open');
      server.dropClients();
      const error = (await lost) as ProxyChannelError;
      expect(error.code).toBe('connection_error');
      expect(error.message).toBe('proxy channel connection lost, reconnecting');
      await reopened;
      await server.waitForClients(1);

      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"Mind your words, they are important."}', 'after-reconnect'));
      await delivery;
      expect(received.map((event) => event.id)).toEqual(['after-reconnect']);
    });

    it('rejects ready and reports connection_closed when the channel answers with an HTTP error', async () => {
      await startServer();
      const channel = createProxyChannel({
        url: `${server.origin}/not-the-channel`,
        webhooks,
        onError: (error) => errors.push(error),
      });
      channels.push(channel);
      await expect(channel.ready).rejects.toMatchObject({ code: 'connection_closed', status: 502 });
      expect(errors.map((error) => [error.code, error.message])).toEqual([
        ['connection_closed', 'proxy channel connection failed for good (status 404)'],
      ]);
      expect(errors[0]?.message).not.toContain(server.origin);
    });

    it('rejects ready when closed before the stream opens', async () => {
      await startServer();
      const channel = createProxyChannel({ url: server.url, webhooks });
      const ready = channel.ready;
      await channel.close();
      await expect(ready).rejects.toThrow('the proxy channel was closed before it opened');
    });

    it('uses the EventSource class it is given', async () => {
      await startServer({ bodyAs: 'string' });
      const urls: string[] = [];
      class CountingEventSource extends EventSource {
        constructor(url: string) {
          super(url);
          urls.push(url);
        }
      }
      const channel = await openChannel({ EventSource: CountingEventSource });
      expect(urls).toEqual([server.url]);
      const delivery = next(channel, 'delivery');
      await post(signed('ping', '{"zen":"x"}', 'custom-es'));
      await delivery;
      expect(received.map((event) => event.id)).toEqual(['custom-es']);
    });
  });

  describe('options', () => {
    const target = { verifyAndReceive: async () => {} };

    it.each([
      ['no url', { webhooks: target }, '"url" must be an absolute URL'],
      ['a relative url', { url: '/channel', webhooks: target }, '"url" must be an absolute URL'],
      [
        'a non-http url',
        { url: 'ftp://127.0.0.1/channel', webhooks: target },
        '"url" must be an http or https URL',
      ],
      ['no webhooks', { url: 'http://127.0.0.1/c' }, '"webhooks" must have a "verifyAndReceive" method'],
      [
        'an unknown option',
        { url: 'http://127.0.0.1/c', webhooks: target, secret: 'x' },
        'unknown option "secret"',
      ],
      [
        'a non-function onError',
        { url: 'http://127.0.0.1/c', webhooks: target, onError: 'log' },
        '"onError" must be a function',
      ],
    ])('throws a TypeError for %s', (_, options, message) => {
      expect(() => new ProxyChannel(options as unknown as ProxyChannelOptions)).toThrow(
        new TypeError(message),
      );
    });

    it('accepts a URL object and any verifyAndReceive target', async () => {
      await startServer({ bodyAs: 'string' });
      const events: unknown[] = [];
      const channel = createProxyChannel({
        url: new URL(server.url),
        webhooks: {
          verifyAndReceive: async (event) => {
            events.push(event);
          },
        },
      });
      channels.push(channel);
      await channel.ready;
      await server.waitForClients(1);
      const delivery = next(channel, 'delivery');
      const body = '{"zen":"x"}';
      await post(signed('ping', body, 'target-1'));
      await delivery;
      expect(events).toEqual([
        { id: 'target-1', name: 'ping', payload: body, signature: sign(SECRET, body) },
      ]);
    });
  });
});
