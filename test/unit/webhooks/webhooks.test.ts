import { inspect } from 'node:util';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  sign,
  type WebhookEventError,
  WebhookPayloadError,
  WebhookReceiveError,
  Webhooks,
  WebhooksError,
  WebhookVerificationError,
} from '../../../lib/webhooks/index.js';

const SECRET = 'webhooks-test-secret';
const payload = { action: 'opened', issue: { number: 3, title: 'Found a bug' } };
const body = JSON.stringify(payload);

describe('new Webhooks()', () => {
  it.each([
    ['no options', undefined, '"options" must be an object'],
    ['a missing secret', {}, '"secret" must be a non-empty string or a non-empty array of strings'],
    [
      'an empty secret',
      { secret: '' },
      '"secret" must be a non-empty string or a non-empty array of strings',
    ],
    ['an unknown option', { secret: 's', secrets: ['a'] }, 'unknown option "secrets"'],
    ['a path without a leading slash', { secret: 's', path: 'hooks' }, '"path" must start with "/"'],
    ['a zero timeout', { secret: 's', timeout: 0 }, '"timeout" must be a positive integer'],
    [
      'a negative maxBodyBytes',
      { secret: 's', maxBodyBytes: -1 },
      '"maxBodyBytes" must be a positive integer',
    ],
    ['a non-function transform', { secret: 's', transform: 'x' }, '"transform" must be a function'],
    ['an unknown header option', { secret: 's', headers: { name: 'x' } }, 'unknown option "headers.name"'],
  ])('throws a TypeError naming the field for %s', (_label, options, message) => {
    expect(() => new Webhooks(options as never)).toThrow(new TypeError(message));
  });

  it('keeps the secret out of its enumerable properties, its JSON and util.inspect', () => {
    const webhooks = new Webhooks({ secret: SECRET });
    expect(JSON.stringify(webhooks)).not.toContain(SECRET);
    expect(inspect(webhooks, { depth: 10, showHidden: true })).not.toContain(SECRET);
    expect(Object.keys(webhooks)).toEqual(['middleware']);
  });
});

describe('Webhooks endpoints (spec)', () => {
  describe('webhooks.sign(eventPayload)', () => {
    it('returns the signature string, standalone-compatible', () => {
      const webhooks = new Webhooks({ secret: SECRET });
      expect(webhooks.sign(body)).toBe(sign(SECRET, body));
      expect(webhooks.sign(payload)).toBe(sign(SECRET, body));
      expect(webhooks.sign(body, { algorithm: 'sha1' })).toBe(sign(SECRET, body, { algorithm: 'sha1' }));
    });

    it('signs with the first of several secrets', () => {
      const webhooks = new Webhooks({ secret: ['new', 'old'] });
      expect(webhooks.sign(body)).toBe(sign('new', body));
    });

    it('throws when the payload is missing', () => {
      const webhooks = new Webhooks({ secret: SECRET });
      expect(() => webhooks.sign(undefined as never)).toThrow(
        new TypeError('"payload" must be a non-empty string, Uint8Array or object'),
      );
    });
  });

  describe('webhooks.verify(eventPayload, signature)', () => {
    const webhooks = new Webhooks({ secret: SECRET });

    it('returns true for a matching signature and false for any other', () => {
      expect(webhooks.verify(body, sign(SECRET, body))).toBe(true);
      expect(webhooks.verify(payload, sign(SECRET, body))).toBe(true);
      expect(webhooks.verify(body, sign('other', body))).toBe(false);
      expect(webhooks.verify(body, 'sha256=garbage')).toBe(false);
    });

    it('throws when the payload or the signature is missing', () => {
      expect(() => webhooks.verify(undefined as never, 'sha256=00')).toThrow(TypeError);
      expect(() => webhooks.verify(body, undefined as never)).toThrow(
        new TypeError('"signature" must be a non-empty string'),
      );
    });

    it('accepts a signature from any configured secret', () => {
      const rotating = new Webhooks({ secret: ['new', 'old'] });
      expect(rotating.verify(body, sign('old', body))).toBe(true);
      expect(rotating.verify(body, sign('new', body))).toBe(true);
    });

    it('keeps its own copy of a secret list', () => {
      const secrets = ['first'];
      const copied = new Webhooks({ secret: secrets });
      secrets.push('added-later');
      expect(copied.verify(body, sign('added-later', body))).toBe(false);
      expect(copied.verify(body, sign('first', body))).toBe(true);
    });

    it('refuses sha1 signatures when allowSha1 is off', () => {
      const strict = new Webhooks({ secret: SECRET, allowSha1: false });
      const sha1 = sign(SECRET, body, { algorithm: 'sha1' });
      expect(strict.verify(body, sha1)).toBe(false);
      expect(webhooks.verify(body, sha1)).toBe(true);
    });
  });

  describe('webhooks.on(eventName | eventNames, handler)', () => {
    it('calls the handler every time a matching event is received', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const handler = vi.fn();
      webhooks.on('issues', handler);
      webhooks.on(['push', 'issues.opened'], handler);
      await webhooks.receive({ id: '1', name: 'issues', payload });
      await webhooks.receive({ id: '2', name: 'push', payload: {} });
      expect(handler.mock.calls.map(([event]) => `${event.id}:${event.name}`)).toEqual([
        '1:issues',
        '1:issues',
        '2:push',
      ]);
    });
  });

  describe('webhooks.removeListener(eventName | eventNames, handler)', () => {
    it('removes the most recent registration only', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const handler = vi.fn();
      webhooks.on('issues', handler);
      webhooks.on('issues', handler);
      webhooks.removeListener('issues', handler);
      await webhooks.receive({ id: '1', name: 'issues', payload });
      expect(handler).toHaveBeenCalledTimes(1);
      webhooks.removeListener(['issues'], handler);
      await webhooks.receive({ id: '2', name: 'issues', payload });
      expect(handler).toHaveBeenCalledTimes(1);
    });
  });

  describe('webhooks.receive({ id, name, payload })', () => {
    it('runs all matching handlers and resolves with no value when none fail', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const order: string[] = [];
      webhooks.on('*', () => {
        order.push('*');
      });
      webhooks.on('issues', async () => {
        order.push('issues');
      });
      webhooks.on('issues.opened', () => {
        order.push('issues.opened');
      });
      await expect(webhooks.receive({ id: '1', name: 'issues', payload })).resolves.toBeUndefined();
      expect(order).toEqual(['issues.opened', 'issues', '*']);
    });

    it('applies an async transform before each handler', async () => {
      const webhooks = new Webhooks({
        secret: SECRET,
        transform: async (event) => ({ delivery: event.id, event: event.name }),
      });
      const seen: string[] = [];
      webhooks.on('issues', (event) => {
        expectTypeOf(event.delivery).toEqualTypeOf<string>();
        seen.push(`${event.delivery}/${event.event}`);
      });
      await webhooks.receive({ id: '9', name: 'issues', payload });
      expect(seen).toEqual(['9/issues']);
    });
  });

  describe('webhooks.verifyAndReceive({ id, name, payload, signature })', () => {
    it('verifies the raw body, parses it and receives the event', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const handler = vi.fn();
      webhooks.on('issues.opened', handler);
      await webhooks.verifyAndReceive({
        id: 'd-1',
        name: 'issues',
        payload: body,
        signature: sign(SECRET, body),
      });
      await webhooks.verifyAndReceive({
        id: 'd-2',
        name: 'issues',
        payload: Buffer.from(body),
        signature: sign(SECRET, body),
      });
      expect(handler.mock.calls.map(([event]) => [event.id, event.payload])).toEqual([
        ['d-1', payload],
        ['d-2', payload],
      ]);
    });

    it('accepts a parsed object, re-serialized the way the forge serializes', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const handler = vi.fn();
      webhooks.on('issues', handler);
      const withEscape = { action: 'edited', issue: { title: 'color \u001b[31m' } };
      const wire = JSON.stringify(withEscape).replace('\\u001b', '\\u001B');
      await webhooks.verifyAndReceive({
        id: 'd',
        name: 'issues',
        payload: withEscape,
        signature: sign(SECRET, wire),
      });
      expect(handler).toHaveBeenCalledTimes(1);
      expect(handler.mock.calls[0]?.[0].payload).toBe(withEscape);
    });

    it('rejects a failed verification with a 401 error and emits it to error handlers', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const handler = vi.fn();
      const onError = vi.fn();
      webhooks.on('issues', handler);
      webhooks.on('error', onError);
      const signature = sign('wrong-secret', body);
      const rejection = webhooks.verifyAndReceive({ id: 'd-3', name: 'issues', payload: body, signature });
      await expect(rejection).rejects.toBeInstanceOf(WebhookVerificationError);
      const error = await rejection.then(
        () => expect.unreachable('verifyAndReceive() resolved'),
        (reason: unknown) => reason as WebhookVerificationError,
      );
      expect(error).toBeInstanceOf(WebhooksError);
      expect(error).toMatchObject({
        name: 'WebhookVerificationError',
        code: 'invalid_signature',
        status: 401,
        message: 'signature does not match the payload',
        event: { id: 'd-3', name: 'issues', payload: body },
      });
      expect(error.message).not.toContain(SECRET);
      expect(error.message).not.toContain(signature);
      expect(onError).toHaveBeenCalledTimes(1);
      expect(onError).toHaveBeenCalledWith(error);
      expect(handler).not.toHaveBeenCalled();
    });

    it('rejects a missing signature with missing_signature (400) and emits it', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const onError = vi.fn();
      webhooks.on('error', onError);
      await expect(
        webhooks.verifyAndReceive({ id: 'd', name: 'issues', payload: body, signature: '' }),
      ).rejects.toMatchObject({ code: 'missing_signature', status: 400, message: '"signature" is missing' });
      expect(onError).toHaveBeenCalledTimes(1);
    });

    it('rejects a sha1 signature when allowSha1 is off', async () => {
      const webhooks = new Webhooks({ secret: SECRET, allowSha1: false });
      await expect(
        webhooks.verifyAndReceive({
          id: 'd',
          name: 'issues',
          payload: body,
          signature: sign(SECRET, body, { algorithm: 'sha1' }),
        }),
      ).rejects.toMatchObject({ code: 'invalid_signature' });
    });

    it('rejects a verified raw body that is not a JSON object', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      const onError = vi.fn();
      webhooks.on('error', onError);
      for (const [raw, message] of [
        ['{"broken":', 'payload is not valid JSON'],
        ['[1,2,3]', 'payload must be a JSON object'],
      ] as const) {
        const rejection = webhooks.verifyAndReceive({
          id: 'd',
          name: 'push',
          payload: raw,
          signature: sign(SECRET, raw),
        });
        await expect(rejection).rejects.toBeInstanceOf(WebhookPayloadError);
        await expect(rejection).rejects.toMatchObject({ code: 'invalid_json', status: 400, message });
      }
      expect(onError).toHaveBeenCalledTimes(2);
    });

    it('rejects with the handler errors when verification passes and a handler fails', async () => {
      const webhooks = new Webhooks({ secret: SECRET });
      webhooks.on('issues', () => {
        throw new Error('handler broke');
      });
      await expect(
        webhooks.verifyAndReceive({ id: 'd', name: 'issues', payload: body, signature: sign(SECRET, body) }),
      ).rejects.toBeInstanceOf(WebhookReceiveError);
    });

    it.each([
      ['a missing event', undefined, '"event" must be an object'],
      [
        'a missing name',
        { payload: '{}', signature: 'sha256=00' },
        '"event.name" must be a non-empty string',
      ],
      [
        'a missing payload',
        { name: 'push', signature: 'sha256=00' },
        '"payload" must be a non-empty string, Uint8Array or object',
      ],
    ])('rejects with a TypeError for %s', async (_label, event, message) => {
      const webhooks = new Webhooks({ secret: SECRET });
      await expect(webhooks.verifyAndReceive(event as never)).rejects.toThrow(new TypeError(message));
    });
  });
});

describe('Webhooks errors (spec table)', () => {
  const webhooks = new Webhooks({ secret: SECRET });

  it('sign called without a payload: an error is thrown', () => {
    expect(() => webhooks.sign(undefined as never)).toThrow(TypeError);
  });

  it('verify called without payload or without signature: an error is thrown', () => {
    expect(() => webhooks.verify(undefined as never, sign(SECRET, body))).toThrow(TypeError);
    expect(() => webhooks.verify(body, undefined as never)).toThrow(TypeError);
  });

  it('verify with a signature that does not match: returns false', () => {
    expect(webhooks.verify(body, sign('nope', body))).toBe(false);
  });

  it('verifyAndReceive with a failed verification: the promise rejects and an error event is emitted', async () => {
    const local = new Webhooks({ secret: SECRET });
    const errors: WebhookEventError[] = [];
    local.on('error', (error) => {
      errors.push(error);
    });
    await expect(
      local.verifyAndReceive({ id: 'x', name: 'push', payload: body, signature: sign('nope', body) }),
    ).rejects.toThrow('signature does not match the payload');
    expect(errors.map((error) => error.code)).toEqual(['invalid_signature']);
  });

  it('a handler throws or rejects: receive rejects after all finish with .errors, and error gets .event', async () => {
    const local = new Webhooks({ secret: SECRET });
    const errors: WebhookEventError[] = [];
    let last = false;
    local.on('issues', () => {
      throw new Error('one');
    });
    local.on('issues.opened', () => Promise.reject(new Error('two')));
    local.on('*', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      last = true;
    });
    local.on('error', (error) => {
      errors.push(error);
    });
    const event = { id: 'x', name: 'issues', payload };
    await expect(local.receive(event)).rejects.toMatchObject({
      errors: [new Error('one'), new Error('two')],
    });
    expect(last).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.event).toEqual(event);
  });

  it('no handler fails: receive resolves with no value', async () => {
    const local = new Webhooks({ secret: SECRET });
    local.on('issues', () => 42);
    await expect(local.receive({ id: 'x', name: 'issues', payload })).resolves.toBeUndefined();
  });
});
