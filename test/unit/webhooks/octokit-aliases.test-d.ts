// Type tests of the @octokit/webhooks names: checked by vitest's typecheck (tsc) and never run.
import { describe, expectTypeOf, it } from 'vitest';
import {
  createEventHandler,
  sign,
  type WebhookEvent,
  type WebhookEventError,
  type WebhookReceiveError,
  Webhooks,
} from '../../../lib/webhooks/index.js';

describe('onAny() and onError()', () => {
  const webhooks = new Webhooks({ secret: 's' });
  const handler = createEventHandler();

  it("type their handlers as on('*') and on('error') do", () => {
    webhooks.onAny((event) => {
      expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    });
    webhooks.onError((error) => {
      expectTypeOf(error).toEqualTypeOf<WebhookEventError>();
    });
    handler.onAny((event) => {
      expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    });
    handler.onError((error) => {
      expectTypeOf(error.code).toEqualTypeOf<string>();
    });
  });

  it('hand onAny handlers the transform result when there is a transform', () => {
    const transformed = new Webhooks({
      secret: 's',
      transform: (event) => ({ ...event, extra: 1 as const }),
    });
    transformed.onAny((event) => {
      expectTypeOf(event.extra).toEqualTypeOf<1>();
    });
  });

  it('refuse a handler that is not a function', () => {
    // @ts-expect-error a handler is a function
    webhooks.onAny('*');
    // @ts-expect-error a handler is a function
    webhooks.onError(undefined);
  });
});

describe('the receive() rejection', () => {
  it('is iterable', () => {
    const check = (error: WebhookReceiveError) => {
      expectTypeOf(Array.from(error)).toEqualTypeOf<unknown[]>();
      expectTypeOf(error).toMatchTypeOf<Iterable<unknown>>();
    };
    expectTypeOf(check).toBeFunction();
  });
});

describe('sign()', () => {
  it('takes the object form and the positional form', () => {
    expectTypeOf(sign({ secret: 's', algorithm: 'sha1' }, 'x')).toEqualTypeOf<string>();
    expectTypeOf(sign({ secret: ['a', 'b'] }, { a: 1 })).toEqualTypeOf<string>();
    expectTypeOf(sign('s', 'x', { algorithm: 'sha1' })).toEqualTypeOf<string>();
  });

  it('refuses options after the options object, and an unknown algorithm', () => {
    // @ts-expect-error the object form takes no third argument
    sign({ secret: 's' }, 'x', { algorithm: 'sha1' });
    // @ts-expect-error md5 is no signature algorithm
    sign({ secret: 's', algorithm: 'md5' }, 'x');
  });
});
