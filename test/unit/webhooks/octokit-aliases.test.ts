// The names an @octokit/webhooks app already writes: `onAny`, `onError`, `sign({ secret, algorithm }, payload)`
// and an iterable `receive` rejection. Where octokit 14 (a dev dependency) has the same name, the same calls
// are made on it and must give the same result.
import { Webhooks as OctokitWebhooks } from '@octokit/webhooks';
import { describe, expect, it, vi } from 'vitest';
import {
  createEventHandler,
  sign,
  WebhookReceiveError,
  Webhooks,
  WebhooksError,
} from '../../../lib/webhooks/index.js';

const SECRET = 'octokit-aliases-secret';
const payload = { action: 'opened', issue: { number: 7 } };

function quiet() {
  return { warn: vi.fn(), error: vi.fn(), info: vi.fn(), debug: vi.fn() };
}

describe('Webhooks#onAny()', () => {
  it('calls the handler for every event, as octokit 14 does', async () => {
    const ours = new Webhooks({ secret: SECRET, log: quiet() });
    const theirs = new OctokitWebhooks({ secret: SECRET, log: quiet() });
    const seen: string[] = [];
    const seenByOctokit: string[] = [];
    ours.onAny((event) => void seen.push(`${event.name}/${event.id}`));
    theirs.onAny((event) => void seenByOctokit.push(`${event.name}/${event.id}`));
    for (const [id, name] of [
      ['d-1', 'issues'],
      ['d-2', 'push'],
      ['d-3', 'ping'],
    ] as const) {
      await ours.receive({ id, name, payload });
      await theirs.receive({ id, name, payload } as never);
    }
    expect(seen).toEqual(['issues/d-1', 'push/d-2', 'ping/d-3']);
    expect(seen).toEqual(seenByOctokit);
  });

  it("is on('*'): removeListener('*', handler) removes it", async () => {
    const webhooks = new Webhooks({ secret: SECRET });
    const handler = vi.fn();
    webhooks.onAny(handler);
    await webhooks.receive({ id: 'd-1', name: 'issues', payload });
    webhooks.removeListener('*', handler);
    await webhooks.receive({ id: 'd-2', name: 'issues', payload });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('throws a TypeError for a handler that is not a function', () => {
    const webhooks = new Webhooks({ secret: SECRET });
    expect(() => webhooks.onAny('nope' as never)).toThrow(new TypeError('"handler" must be a function'));
  });
});

describe('Webhooks#onError()', () => {
  it('gets the failed receive with .event and .errors, as octokit 14 does', async () => {
    const ours = new Webhooks({ secret: SECRET, log: quiet() });
    const theirs = new OctokitWebhooks({ secret: SECRET, log: quiet() });
    const failure = new Error('handler broke');
    const errors: unknown[] = [];
    const octokitErrors: unknown[] = [];
    ours.on('issues', () => Promise.reject(failure));
    theirs.on('issues', () => Promise.reject(failure));
    ours.onError((error) => void errors.push(error));
    theirs.onError((error) => void octokitErrors.push(error));
    const event = { id: 'd-1', name: 'issues', payload } as const;
    await expect(ours.receive(event)).rejects.toBeInstanceOf(WebhookReceiveError);
    await expect(theirs.receive(event as never)).rejects.toBeInstanceOf(AggregateError);
    expect(errors).toHaveLength(1);
    expect(octokitErrors).toHaveLength(1);
    const [error] = errors as WebhookReceiveError[];
    const [octokitError] = octokitErrors as (AggregateError & { event: unknown })[];
    expect(error?.errors).toEqual(octokitError?.errors);
    expect(error?.event).toEqual(octokitError?.event);
  });

  it("is on('error'): removeListener('error', handler) removes it", async () => {
    const webhooks = new Webhooks({ secret: SECRET });
    const handler = vi.fn();
    webhooks.on('issues', () => {
      throw new Error('x');
    });
    webhooks.onError(handler);
    await expect(webhooks.receive({ id: 'd-1', name: 'issues', payload })).rejects.toThrow();
    webhooks.removeListener('error', handler);
    await expect(webhooks.receive({ id: 'd-2', name: 'issues', payload })).rejects.toThrow();
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('gets a failed verification too', async () => {
    const webhooks = new Webhooks({ secret: SECRET });
    const handler = vi.fn();
    webhooks.onError(handler);
    const body = JSON.stringify(payload);
    await expect(
      webhooks.verifyAndReceive({ id: 'd-1', name: 'issues', payload: body, signature: sign('other', body) }),
    ).rejects.toThrow();
    expect(handler).toHaveBeenCalledWith(expect.objectContaining({ code: 'invalid_signature' }));
  });
});

describe('createEventHandler(): onAny and onError', () => {
  it('are bound and can be destructured', async () => {
    const { onAny, onError, on, receive } = createEventHandler();
    const any = vi.fn();
    const failed = vi.fn();
    onAny(any);
    onError(failed);
    on('push', () => {
      throw new Error('push failed');
    });
    await receive({ id: 'd-1', name: 'issues', payload });
    await expect(receive({ id: 'd-2', name: 'push', payload: {} })).rejects.toThrow();
    expect(any.mock.calls.map(([event]) => event.id)).toEqual(['d-1', 'd-2']);
    expect(failed).toHaveBeenCalledTimes(1);
  });
});

describe('the error rejected by receive()', () => {
  async function failedReceive() {
    const webhooks = new Webhooks({ secret: SECRET });
    const first = new Error('first');
    const second = new Error('second');
    webhooks.on('issues.opened', () => {
      throw first;
    });
    webhooks.on('issues', () => Promise.reject(second));
    const error = await webhooks.receive({ id: 'd-1', name: 'issues', payload }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    return { error: error as WebhookReceiveError, first, second };
  }

  it('is iterable over the handler errors: Array.from(error), spread and for..of', async () => {
    const { error, first, second } = await failedReceive();
    expect(Array.from(error)).toEqual([first, second]);
    expect([...error]).toEqual(error.errors);
    const seen: unknown[] = [];
    for (const one of error) seen.push(one);
    expect(seen).toEqual([first, second]);
  });

  it('keeps .errors, .event, AggregateError and WebhooksError', async () => {
    const { error, first } = await failedReceive();
    expect(error.errors[0]).toBe(first);
    expect(error.event.id).toBe('d-1');
    expect(error).toBeInstanceOf(AggregateError);
    expect(error).toBeInstanceOf(WebhooksError);
    expect(Array.from(error)[0]).toBe(first); // octokit v7's middleware read the status this way
  });
});

describe('sign({ secret, algorithm }, payload)', () => {
  const body = '{"foo":"bar"}';

  it('is sign(secret, payload, { algorithm })', () => {
    expect(sign({ secret: 'mysecret', algorithm: 'sha1' }, body)).toBe(
      'sha1=d03207e4b030cf234e3447bac4d93add4c6643d8',
    );
    expect(sign({ secret: 'mysecret', algorithm: 'sha256' }, body)).toBe(
      sign('mysecret', body, { algorithm: 'sha256' }),
    );
  });

  it('defaults to sha256, as the positional form does', () => {
    expect(sign({ secret: 'mysecret' }, body)).toBe(sign('mysecret', body));
    expect(sign({ secret: 'mysecret' }, body)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('signs with the first of several secrets', () => {
    expect(sign({ secret: ['new', 'old'] }, body)).toBe(sign('new', body));
  });

  it('still takes a list of secrets in the positional form', () => {
    expect(sign(['new', 'old'], body)).toBe(sign('new', body));
  });

  it.each([
    [
      'a missing secret',
      () => sign({} as never, body),
      '"secret" must be a non-empty string or a non-empty array of strings',
    ],
    ['an unknown option', () => sign({ secret: 's', algo: 'sha1' } as never, body), 'unknown option "algo"'],
    [
      'an unknown algorithm',
      () => sign({ secret: 's', algorithm: 'md5' } as never, body),
      '"algorithm" must be "sha256" or "sha1"',
    ],
    [
      'options after the options object',
      () => (sign as (...args: unknown[]) => string)({ secret: 's' }, body, { algorithm: 'sha1' }),
      '"options" cannot follow an options object',
    ],
  ])('throws a TypeError for %s', (_label, call, message) => {
    expect(call).toThrow(new TypeError(message));
  });
});
