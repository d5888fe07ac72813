import { describe, expect, it, type Mock, vi } from 'vitest';
import {
  createEventHandler,
  type Logger,
  type WebhookEventError,
  WebhookReceiveError,
  WebhooksError,
} from '../../../lib/webhooks/index.js';

type LogFn = (message: string, ...details: unknown[]) => void;

function quietLog(): Logger & { warn: Mock<LogFn>; error: Mock<LogFn> } {
  return { warn: vi.fn<LogFn>(), error: vi.fn<LogFn>() };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const opened = { id: 'd-1', name: 'issues', payload: { action: 'opened', issue: { number: 1 } } };

describe('createEventHandler()', () => {
  it('works standalone, with no secret, and its functions can be destructured', async () => {
    const { on, receive } = createEventHandler();
    const seen: string[] = [];
    on('issues', (event) => {
      seen.push(`${event.id} ${event.name}`);
    });
    await receive(opened);
    expect(seen).toEqual(['d-1 issues']);
  });

  it('runs name.action, then name, then * handlers, all started before any finishes', async () => {
    const { on, receive } = createEventHandler();
    const started: string[] = [];
    const finished: string[] = [];
    const gate = deferred();
    const make = (label: string) => async () => {
      started.push(label);
      await gate.promise;
      finished.push(label);
    };
    on('*', make('*'));
    on('issues', make('issues'));
    on('issues.opened', make('issues.opened'));
    on('issues.closed', make('issues.closed'));
    const receiving = receive(opened);
    await Promise.resolve();
    expect(started).toEqual(['issues.opened', 'issues', '*']);
    expect(finished).toEqual([]);
    gate.resolve();
    await receiving;
    expect(finished).toEqual(['issues.opened', 'issues', '*']);
  });

  it('runs name.action handlers only when payload.action is a string', async () => {
    const { on, receive } = createEventHandler({ log: quietLog() });
    const calls: string[] = [];
    on('push', () => {
      calls.push('push');
    });
    // A push payload never has an action; a numeric one must not form a 'push.1' name.
    on('issues.opened', () => {
      calls.push('issues.opened');
    });
    await receive({ id: '1', name: 'push', payload: { action: 1 } });
    await receive({ id: '2', name: 'issues', payload: { action: { opened: true } } });
    expect(calls).toEqual(['push']);
  });

  it('waits for every handler before it resolves', async () => {
    const { on, receive } = createEventHandler();
    let done = false;
    on('issues', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = true;
    });
    await receive(opened);
    expect(done).toBe(true);
  });

  it('resolves with no value when no handler fails', async () => {
    const { on, receive } = createEventHandler();
    on('issues', () => 'ignored');
    await expect(receive(opened)).resolves.toBeUndefined();
  });

  it('resolves when no handler is registered', async () => {
    const { receive } = createEventHandler();
    await expect(receive(opened)).resolves.toBeUndefined();
  });

  it('registers one handler for several names at once', async () => {
    const { on, receive } = createEventHandler();
    const names: string[] = [];
    on(['issues.opened', 'push'], (event) => {
      names.push(event.name);
    });
    await receive(opened);
    await receive({ id: '2', name: 'push', payload: { ref: 'refs/heads/main' } });
    expect(names).toEqual(['issues', 'push']);
  });

  it('rejects after all handlers finish, with .errors holding every handler error and .event', async () => {
    const log = quietLog();
    const { on, receive } = createEventHandler({ log });
    let slowFinished = false;
    on('issues.opened', () => {
      throw new Error('sync failure');
    });
    on('issues', async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      slowFinished = true;
      throw new Error('async failure');
    });
    on('*', () => undefined);
    const error = await receive(opened).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(slowFinished).toBe(true);
    expect(error).toBeInstanceOf(WebhookReceiveError);
    expect(error).toBeInstanceOf(AggregateError);
    expect(error).toBeInstanceOf(WebhooksError);
    const failure = error as WebhookReceiveError;
    expect(failure.errors.map((e: Error) => e.message)).toEqual(['sync failure', 'async failure']);
    expect(failure.event).toEqual(opened);
    expect(failure.code).toBe('handler_failed');
    expect(failure.status).toBe(500);
    expect(failure.name).toBe('WebhookReceiveError');
    expect(failure.message).toBe('2 handlers of event "issues" failed: sync failure');
  });

  it('collects non-Error rejections too', async () => {
    const { on, receive } = createEventHandler();
    on('issues', () => Promise.reject('plain string'));
    await expect(receive(opened)).rejects.toMatchObject({ errors: ['plain string'] });
  });

  it('emits one error event per failed receive, to every error handler, with .event set', async () => {
    const { on, receive } = createEventHandler();
    const seen: WebhookEventError[] = [];
    on('issues', () => {
      throw new Error('first');
    });
    on('*', () => {
      throw new Error('second');
    });
    on('error', (error) => {
      seen.push(error);
    });
    on('error', (error) => {
      seen.push(error);
    });
    const rejection = await receive(opened).catch((reason: unknown) => reason);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(rejection);
    expect(seen[1]).toBe(rejection);
    expect(seen[0]?.event).toEqual(opened);
    expect(seen[0]?.errors).toHaveLength(2);
  });

  it('does not wait for async error handlers', async () => {
    const { on, receive } = createEventHandler();
    const gate = deferred();
    let errorHandlerDone = false;
    on('issues', () => {
      throw new Error('boom');
    });
    on('error', async () => {
      await gate.promise;
      errorHandlerDone = true;
    });
    await expect(receive(opened)).rejects.toBeInstanceOf(WebhookReceiveError);
    expect(errorHandlerDone).toBe(false);
    gate.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errorHandlerDone).toBe(true);
  });

  it('only logs an error handler that throws or rejects, and still rejects with the handler errors', async () => {
    const log = quietLog();
    const { on, receive } = createEventHandler({ log });
    on('issues', () => {
      throw new Error('handler failure');
    });
    on('error', () => {
      throw new Error('error handler failure');
    });
    on('error', () => Promise.reject(new Error('async error handler failure')));
    const rejection = await receive(opened).then(
      () => expect.unreachable('receive() resolved'),
      (reason: unknown) => reason as WebhookReceiveError,
    );
    expect(rejection.errors.map((e: Error) => e.message)).toEqual(['handler failure']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.error).toHaveBeenCalledTimes(2);
    expect(log.error.mock.calls.map((call) => call[0])).toEqual([
      'an "error" handler failed',
      'an "error" handler failed',
    ]);
    expect(log.error.mock.calls.map((call) => (call[1] as Error).message).sort()).toEqual([
      'async error handler failure',
      'error handler failure',
    ]);
  });

  it('runs an async transform once per handler and hands its result to the handler', async () => {
    const transform = vi.fn(async (event: { id: string; name: string }) => ({
      ...event,
      extra: `x-${event.id}`,
    }));
    const { on, receive } = createEventHandler({ transform });
    const extras: string[] = [];
    on('issues.opened', (event) => {
      extras.push(event.extra);
    });
    on('issues', (event) => {
      extras.push(event.extra);
    });
    on('*', (event) => {
      extras.push(event.extra);
    });
    await receive(opened);
    expect(transform).toHaveBeenCalledTimes(3);
    expect(extras).toEqual(['x-d-1', 'x-d-1', 'x-d-1']);
  });

  it('runs a sync transform and collects a transform failure as a handler error', async () => {
    let calls = 0;
    const { on, receive } = createEventHandler({
      transform: (event) => {
        calls++;
        if (calls === 2) throw new Error('transform failed');
        return { ...event, calls };
      },
    });
    const seen: number[] = [];
    on('issues', (event) => {
      seen.push(event.calls);
    });
    on('*', (event) => {
      seen.push(event.calls);
    });
    await expect(receive(opened)).rejects.toMatchObject({ errors: [new Error('transform failed')] });
    expect(seen).toEqual([1]);
  });

  describe('removeListener()', () => {
    it('removes only the most recent identical registration', async () => {
      const { on, removeListener, receive } = createEventHandler();
      let calls = 0;
      const handler = () => {
        calls++;
      };
      on('issues', handler);
      on('issues', handler);
      removeListener('issues', handler);
      await receive(opened);
      expect(calls).toBe(1);
      removeListener('issues', handler);
      await receive(opened);
      expect(calls).toBe(1);
    });

    it('keeps other handlers and their order', async () => {
      const { on, removeListener, receive } = createEventHandler();
      const order: string[] = [];
      const a = () => {
        order.push('a');
      };
      const b = () => {
        order.push('b');
      };
      on('issues', a);
      on('issues', b);
      on('issues', a);
      removeListener('issues', a);
      await receive(opened);
      expect(order).toEqual(['a', 'b']);
    });

    it('removes from several names at once, and ignores a handler that was never registered', async () => {
      const { on, removeListener, receive } = createEventHandler();
      let calls = 0;
      const handler = () => {
        calls++;
      };
      on(['issues', '*'], handler);
      removeListener(['issues', '*'], handler);
      removeListener('push', handler);
      await receive(opened);
      expect(calls).toBe(0);
    });

    it('removes error handlers', async () => {
      const { on, removeListener, receive } = createEventHandler();
      const onError = vi.fn();
      on('issues', () => {
        throw new Error('x');
      });
      on('error', onError);
      removeListener('error', onError);
      await expect(receive(opened)).rejects.toBeInstanceOf(WebhookReceiveError);
      expect(onError).not.toHaveBeenCalled();
    });

    it('does not affect a receive that is already running', async () => {
      const { on, removeListener, receive } = createEventHandler();
      const calls: string[] = [];
      const second = () => {
        calls.push('second');
      };
      on('issues', () => {
        calls.push('first');
        removeListener('*', second);
      });
      on('*', second);
      await receive(opened);
      await receive(opened);
      expect(calls).toEqual(['first', 'second', 'first']);
    });
  });

  it('only warns for an unknown event name', async () => {
    const log = quietLog();
    const { on, receive } = createEventHandler({ log });
    const handler = vi.fn();
    // @ts-expect-error -- not a known event name: a type error, and at run time only a warning
    on('not-a-known-event', handler);
    expect(log.warn).toHaveBeenCalledWith('"not-a-known-event" is not a known event name; check for typos');
    await receive({ id: '1', name: 'not-a-known-event', payload: {} });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('does not warn for known names, *, error or repository_dispatch.<anything>', () => {
    const log = quietLog();
    const { on } = createEventHandler({ log });
    on(
      ['issues', 'issues.opened', 'workflow_run.in_progress', 'repository_dispatch.deploy.prod', '*'],
      () => {},
    );
    on('error', () => {});
    expect(log.warn).not.toHaveBeenCalled();
  });

  it("reports the forge's github_app_authorization as forge_app_authorization", async () => {
    const log = quietLog();
    const { on, receive } = createEventHandler({ log });
    const names: string[] = [];
    on(['forge_app_authorization', 'forge_app_authorization.revoked'], (event) => {
      names.push(event.name);
    });
    await receive({ id: '1', name: 'github_app_authorization', payload: { action: 'revoked' } });
    expect(names).toEqual(['forge_app_authorization', 'forge_app_authorization']);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it.each([
    ['a missing event', undefined, '"event" must be an object'],
    ['a missing name', { id: '1', payload: {} }, '"event.name" must be a non-empty string'],
    ['an empty name', { id: '1', name: '', payload: {} }, '"event.name" must be a non-empty string'],
    ['a missing payload', { id: '1', name: 'push' }, '"event.payload" must be an object'],
  ])('rejects receive() with a TypeError for %s', async (_label, event, message) => {
    const { receive } = createEventHandler();
    await expect(receive(event as never)).rejects.toThrow(new TypeError(message));
  });

  it('fills in an empty id when the event has none', async () => {
    const { on, receive } = createEventHandler();
    const ids: string[] = [];
    on('push', (event) => {
      ids.push(event.id);
    });
    await receive({ name: 'push', payload: {} });
    expect(ids).toEqual(['']);
  });

  it.each([
    [
      'a non-function handler',
      () => createEventHandler().on('push', 'nope' as never),
      '"handler" must be a function',
    ],
    [
      'an empty name',
      () => createEventHandler().on('' as never, () => {}),
      '"name" must be a non-empty string or an array of them',
    ],
    [
      'a non-string name in a list',
      () => createEventHandler().on([1] as never, () => {}),
      '"name" must be a non-empty string or an array of them',
    ],
    ['an unknown option', () => createEventHandler({ secret: 'x' } as never), 'unknown option "secret"'],
    [
      'a non-function transform',
      () => createEventHandler({ transform: 1 } as never),
      '"transform" must be a function',
    ],
    [
      'a log without error()',
      () => createEventHandler({ log: { warn() {} } } as never),
      '"log" must have "warn" and "error" functions',
    ],
  ])('throws a TypeError for %s', (_label, act, message) => {
    expect(act).toThrow(new TypeError(message));
  });
});
