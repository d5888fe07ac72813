// Type tests, checked by vitest's typecheck (tsc) and never run: a wrong type, or a `@ts-expect-error` that no
// longer errors because a type loosened, fails the test it is in.
import { assertType, describe, expectTypeOf, it } from 'vitest';
import {
  type EmitterWebhookEventName,
  EventNames,
  type WebhookEventName,
} from '../../../lib/webhooks/event-names.js';
import type {
  EventNameOf,
  EventPayloadMap,
  EventPayloads,
  PayloadFor,
  WebhookEvent,
} from '../../../lib/webhooks/event-types.js';

/** A registry typed like the toolset's `on()`. */
declare function on<Name extends EmitterWebhookEventName>(
  name: Name | readonly Name[],
  handler: (event: WebhookEvent<Name>) => unknown,
): void;

const base = {
  repository: { id: 1 } as EventPayloads.ForgeRepository,
  sender: { id: 2, login: 'octocat' },
};

describe('WebhookEvent', () => {
  it('narrows the payload of an `event.action` name to that action', () => {
    expectTypeOf<WebhookEvent<'issues.opened'>['payload']['action']>().toEqualTypeOf<'opened'>();
    expectTypeOf<
      WebhookEvent<'issues.opened'>['payload']
    >().toEqualTypeOf<EventPayloads.WebhookPayloadIssuesOpened>();
    expectTypeOf<
      WebhookEvent<'check_run.requested_action'>['payload']['action']
    >().toEqualTypeOf<'requested_action'>();
    assertType<WebhookEvent<'issues.opened'>>({
      id: 'delivery-1',
      name: 'issues',
      payload: { ...base, action: 'opened' },
    });
    const closed = { id: 'd', name: 'issues', payload: { ...base, action: 'closed' } } as const;
    // @ts-expect-error an issues.opened event carries action 'opened' only
    assertType<WebhookEvent<'issues.opened'>>(closed);
  });

  it('types the plain event name in `name`, also for an `event.action` name', () => {
    expectTypeOf<WebhookEvent<'issues.opened'>['name']>().toEqualTypeOf<'issues'>();
    expectTypeOf<WebhookEvent<'push'>['name']>().toEqualTypeOf<'push'>();
    expectTypeOf<EventNameOf<'repository_dispatch.a.b'>>().toEqualTypeOf<'repository_dispatch'>();
    expectTypeOf<WebhookEvent<'push'>['id']>().toEqualTypeOf<string>();
    // @ts-expect-error `name` of an issues event is 'issues'
    assertType<WebhookEvent<'issues.opened'>['name']>('push');
  });

  it("gives a plain name the union of its actions' payloads", () => {
    expectTypeOf<WebhookEvent<'check_run'>['payload']['action']>().toEqualTypeOf<
      'completed' | 'created' | 'requested_action' | 'rerequested'
    >();
    expectTypeOf<WebhookEvent<'issues'>['payload']>().toEqualTypeOf<EventPayloadMap['issues']>();
    expectTypeOf<WebhookEvent<'workflow_run'>['payload']['action']>().toEqualTypeOf<
      'completed' | 'in_progress' | 'requested'
    >();
  });

  it('narrows the payload of a plain name on `payload.action`', () => {
    const describeIssue = (event: WebhookEvent<'issues'>): string => {
      if (event.payload.action === 'labeled') {
        expectTypeOf(event.payload).toEqualTypeOf<EventPayloads.WebhookPayloadIssuesLabeled>();
        return 'labeled';
      }
      expectTypeOf(event.payload.action).toEqualTypeOf<
        Exclude<EventPayloads.WebhookPayloadIssues['action'], 'labeled'>
      >();
      return event.payload.action;
    };
    expectTypeOf(describeIssue).returns.toEqualTypeOf<string>();
  });

  it('lets the second parameter override the payload', () => {
    interface Custom {
      ref: string;
    }
    expectTypeOf<WebhookEvent<'push', Custom>['payload']>().toEqualTypeOf<Custom>();
    expectTypeOf<WebhookEvent<'issues.opened', { n: number }>['payload']>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<WebhookEvent<'issues.opened', { n: number }>['name']>().toEqualTypeOf<'issues'>();
    // @ts-expect-error the overriding payload type is the payload type
    assertType<WebhookEvent<'push', Custom>>({ id: '1', name: 'push', payload: { ref: 1 } });
  });

  it('rejects an unknown name, an unknown action and the forge spelling, resolving them to never', () => {
    // @ts-expect-error not a known event
    type Unknown = WebhookEvent<'not-a-known-event'>;
    // @ts-expect-error not an action of issues
    type UnknownAction = WebhookEvent<'issues.exploded'>;
    // @ts-expect-error the forge's own spelling is not a catalogue name: the neutral one is
    type ForgeSpelling = WebhookEvent<'github_app_authorization'>;
    // What an erroring name resolves to is `never`, never a silent `any`.
    expectTypeOf<Unknown | UnknownAction | ForgeSpelling>().toBeNever();
  });

  it('makes the payload of a known action a type error for another action', () => {
    const opened: EventPayloads.WebhookPayloadIssuesOpened = { ...base, action: 'opened' };
    // @ts-expect-error an issues.opened payload is not an issues.closed payload
    assertType<PayloadFor<'issues.closed'>>(opened);
    expectTypeOf<PayloadFor<'issues.opened'>>().toEqualTypeOf<EventPayloads.WebhookPayloadIssuesOpened>();
  });

  it('types the common fields and leaves every other field open', () => {
    type Opened = WebhookEvent<'issues.opened'>['payload'];
    expectTypeOf<Opened['repository']>().toEqualTypeOf<EventPayloads.ForgeRepository>();
    expectTypeOf<Opened['sender']>().toEqualTypeOf<EventPayloads.ForgeUser>();
    expectTypeOf<Opened['installation']>().toEqualTypeOf<EventPayloads.ForgeInstallation | undefined>();
    expectTypeOf<Opened['organization']>().toEqualTypeOf<EventPayloads.ForgeOrganization | undefined>();
    expectTypeOf<Opened['issue']>().toEqualTypeOf<unknown>();
    expectTypeOf<Opened['repository']['full_name']>().toEqualTypeOf<string>();
    expectTypeOf<Opened['repository']['id']>().toEqualTypeOf<number>();
    expectTypeOf<Opened['sender']['login']>().toEqualTypeOf<string>();
    expectTypeOf<EventPayloads.ForgeInstallation['id']>().toEqualTypeOf<number>();
    expectTypeOf<EventPayloads.ForgeOrganization['login']>().toEqualTypeOf<string>();
    // Typed subsets stay open too.
    expectTypeOf<EventPayloads.ForgeRepository['topics']>().toEqualTypeOf<unknown>();
    // A field a payload never has is not typed: `forge_app_authorization` has no repository.
    expectTypeOf<
      WebhookEvent<'forge_app_authorization.revoked'>['payload']['repository']
    >().toEqualTypeOf<unknown>();
    expectTypeOf<WebhookEvent<'push'>['payload']['action']>().toEqualTypeOf<unknown>();
    // @ts-expect-error the sender is required
    assertType<Opened>({ action: 'opened', repository: base.repository });
  });

  it('accepts any `repository_dispatch.<type>` and types its action', () => {
    expectTypeOf<WebhookEvent<'repository_dispatch.deploy'>['payload']['action']>().toEqualTypeOf<'deploy'>();
    expectTypeOf<
      WebhookEvent<'repository_dispatch.on-demand-test'>['payload']['action']
    >().toEqualTypeOf<'on-demand-test'>();
    expectTypeOf<WebhookEvent<'repository_dispatch'>['payload']['action']>().toEqualTypeOf<string>();
    expectTypeOf<'repository_dispatch.x.y'>().toExtend<EmitterWebhookEventName>();
    expectTypeOf<'push.x'>().not.toExtend<EmitterWebhookEventName>();
  });

  it('gives a union of names a union of events that narrows on `name`', () => {
    on(['issues.opened', 'push'], (event) => {
      expectTypeOf(event.name).toEqualTypeOf<'issues' | 'push'>();
      if (event.name === 'push') {
        expectTypeOf(event.payload).toEqualTypeOf<EventPayloads.WebhookPayloadPush>();
      } else {
        expectTypeOf(event.payload.action).toEqualTypeOf<'opened'>();
      }
    });
  });

  it('makes registering an unknown name a type error', () => {
    // @ts-expect-error not a known event
    on('not-a-known-event', () => undefined);
    // @ts-expect-error one unknown name in a list is enough
    on(['push', 'not-a-known-event'], () => undefined);
  });

  it('defaults to any known event, as one object type whose payload is the union of every payload', () => {
    expectTypeOf<WebhookEvent>().toEqualTypeOf<{
      id: string;
      name: WebhookEventName;
      payload: PayloadFor<EmitterWebhookEventName>;
    }>();
    expectTypeOf<EventPayloads.WebhookPayloadIssuesOpened>().toExtend<WebhookEvent['payload']>();
    expectTypeOf<EventPayloads.WebhookPayloadPush>().toExtend<WebhookEvent['payload']>();
  });

  it('stays small when any event is spread and intersected, as a transform and a `*` handler do', () => {
    const transform = (event: WebhookEvent) => ({ ...event, extra: `x-${event.id}` });
    type Transformed = ReturnType<typeof transform>;
    expectTypeOf<Transformed['extra']>().toEqualTypeOf<string>();
    expectTypeOf<(WebhookEvent & Transformed)['name']>().toEqualTypeOf<WebhookEventName>();
  });
});

describe('EventNames types', () => {
  it('types each constant as the union of its values', () => {
    expectTypeOf(EventNames.CheckRunEvent.Completed).toEqualTypeOf<'check_run.completed'>();
    expectTypeOf<EventNames.CheckRunEvent>().toEqualTypeOf<
      'check_run.completed' | 'check_run.created' | 'check_run.requested_action' | 'check_run.rerequested'
    >();
    expectTypeOf<EventNames.StringNames>().toEqualTypeOf<WebhookEventName>();
    expectTypeOf<'issues.opened'>().toExtend<EventNames.All>();
    expectTypeOf<'push'>().toExtend<EventNames.All>();
    expectTypeOf<'issues.opened'>().not.toExtend<EventNames.StringNames>();
    expectTypeOf<EventNames.All>().toExtend<EmitterWebhookEventName>();
  });

  it('rejects a name that is not a value of the constant', () => {
    // @ts-expect-error 'check_run' (plain) is not one of the check_run.<action> names
    assertType<EventNames.CheckRunEvent>('check_run');
    // @ts-expect-error no such constant
    assertType(EventNames.NotAnEvent);
  });
});
