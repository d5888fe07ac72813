// Type tests of the public API's handler typing, checked by vitest's typecheck (tsc) and never run.
import { assertType, describe, expectTypeOf, it } from 'vitest';
import {
  createEventHandler,
  type EventPayloads,
  type WebhookEvent,
  type WebhookEventError,
  Webhooks,
} from '../../../lib/webhooks/index.js';

describe('Webhooks#on()', () => {
  const webhooks = new Webhooks({ secret: 's' });

  it('types the event of a handler by the name it is registered for', () => {
    webhooks.on('issues.opened', (event) => {
      expectTypeOf(event).toEqualTypeOf<WebhookEvent<'issues.opened'>>();
      expectTypeOf(event.payload.action).toEqualTypeOf<'opened'>();
    });
    webhooks.on('repository_dispatch.deploy', (event) => {
      expectTypeOf(event.name).toEqualTypeOf<'repository_dispatch'>();
      expectTypeOf(event.payload.action).toEqualTypeOf<'deploy'>();
    });
    webhooks.on('*', (event) => {
      expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    });
  });

  it('hands `error` handlers a WebhookEventError', () => {
    webhooks.on('error', (error) => {
      expectTypeOf(error).toEqualTypeOf<WebhookEventError>();
      expectTypeOf(error.code).toEqualTypeOf<string>();
    });
  });

  it('refuses unknown names and handlers typed for another event', () => {
    // @ts-expect-error not a known event name
    webhooks.on('not-a-known-event', () => {});
    // @ts-expect-error not a known action of a known event
    webhooks.on('issues.exploded', () => {});
    // @ts-expect-error a push handler cannot take an issues.opened event
    webhooks.on('issues.opened', (event: WebhookEvent<'push'>) => event.payload);
    // @ts-expect-error removeListener checks names the same way
    webhooks.removeListener('not-a-known-event', () => {});
  });

  it('hands handlers what the transform returned', () => {
    const transformed = new Webhooks({
      secret: 's',
      transform: async (event) => ({ delivery: event.id, name: event.name }),
    });
    transformed.on('push', (event) => {
      expectTypeOf(event).toEqualTypeOf<{ delivery: string; name: WebhookEvent['name'] }>();
    });
  });
});

describe('createEventHandler()', () => {
  it('types the destructured functions like Webhooks', () => {
    const { on, receive } = createEventHandler();
    on('pull_request.closed', (event) => {
      expectTypeOf(event.payload).toEqualTypeOf<EventPayloads.WebhookPayloadPullRequestClosed>();
    });
    // @ts-expect-error not a known event name
    on('not-a-known-event', () => {});
    expectTypeOf(receive).returns.toEqualTypeOf<Promise<void>>();
    // @ts-expect-error an event needs a name
    assertType(receive({ id: '1', payload: {} }));
  });
});
