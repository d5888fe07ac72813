import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  EventNames,
  isKnownEventName,
  knownEventNames,
  neutralEventName,
} from '../../../lib/webhooks/event-names.js';
import {
  catalogueSource,
  eventActions,
  forgeEventNameAliases,
  freeFormActionEvents,
  specOnlyEntries,
} from '../../../lib/webhooks/generated/catalogue.js';
import {
  commonFieldTypes,
  commonObjectShapes,
  payloadShapes,
} from '../../../lib/webhooks/generated/payload-shapes.js';

const require = createRequire(import.meta.url);

/**
 * The Events table of the webhook toolset interface ("Events and their actions", docs/webhooks-catalogue.md),
 * copied row by row. `workflow_run` is listed there with "actions: not shown".
 */
const SPEC_TABLE: Record<string, readonly string[]> = {
  check_run: ['completed', 'created', 'requested_action', 'rerequested'],
  check_suite: ['completed', 'requested', 'rerequested'],
  commit_comment: ['created'],
  content_reference: ['created'],
  create: [],
  delete: [],
  deploy_key: ['created', 'deleted'],
  deployment: ['created'],
  deployment_status: ['created'],
  fork: [],
  forge_app_authorization: ['revoked'],
  gollum: [],
  installation: ['created', 'deleted', 'new_permissions_accepted', 'suspend', 'unsuspend'],
  installation_repositories: ['added', 'removed'],
  issue_comment: ['created', 'deleted', 'edited'],
  issues: [
    'assigned',
    'closed',
    'deleted',
    'demilestoned',
    'edited',
    'labeled',
    'locked',
    'milestoned',
    'opened',
    'pinned',
    'reopened',
    'transferred',
    'unassigned',
    'unlabeled',
    'unlocked',
    'unpinned',
  ],
  label: ['created', 'deleted', 'edited'],
  marketplace_purchase: ['cancelled', 'changed', 'pending_change', 'pending_change_cancelled', 'purchased'],
  member: ['added', 'edited', 'removed'],
  membership: ['added', 'removed'],
  meta: ['deleted'],
  milestone: ['closed', 'created', 'deleted', 'edited', 'opened'],
  organization: ['deleted', 'member_added', 'member_invited', 'member_removed', 'renamed'],
  org_block: ['blocked', 'unblocked'],
  package: ['published', 'updated'],
  page_build: [],
  ping: [],
  project_card: ['converted', 'created', 'deleted', 'edited', 'moved'],
  project_column: ['created', 'deleted', 'edited', 'moved'],
  project: ['closed', 'created', 'deleted', 'edited', 'reopened'],
  public: [],
  pull_request: [
    'assigned',
    'closed',
    'edited',
    'labeled',
    'locked',
    'merged',
    'opened',
    'ready_for_review',
    'reopened',
    'review_request_removed',
    'review_requested',
    'synchronize',
    'unassigned',
    'unlabeled',
    'unlocked',
  ],
  pull_request_review: ['dismissed', 'edited', 'submitted'],
  pull_request_review_comment: ['created', 'deleted', 'edited'],
  push: [],
  release: ['created', 'deleted', 'edited', 'prereleased', 'published', 'released', 'unpublished'],
  repository_dispatch: ['on-demand-test'],
  repository: [
    'archived',
    'created',
    'deleted',
    'edited',
    'privatized',
    'publicized',
    'renamed',
    'transferred',
    'unarchived',
  ],
  repository_import: [],
  repository_vulnerability_alert: ['create', 'dismiss', 'resolve'],
  security_advisory: ['performed', 'published', 'updated'],
  sponsorship: [
    'cancelled',
    'created',
    'edited',
    'pending_cancellation',
    'pending_tier_change',
    'tier_changed',
  ],
  star: ['created', 'deleted'],
  status: [],
  team: ['added_to_repository', 'created', 'deleted', 'edited', 'removed_from_repository'],
  team_add: [],
  watch: ['started'],
  workflow_dispatch: [],
  workflow_run: [],
};

/** Events and actions the forge added after the spec (issue 2), each of which must be catalogued. */
const ADDED_SINCE_SPEC: Record<string, readonly string[]> = {
  workflow_run: ['requested', 'in_progress', 'completed'],
  workflow_job: ['queued', 'in_progress', 'completed', 'waiting'],
  discussion: ['created', 'answered', 'edited', 'deleted'],
  discussion_comment: ['created', 'edited', 'deleted'],
  merge_group: ['checks_requested', 'destroyed'],
  deployment_review: ['approved', 'rejected', 'requested'],
  dependabot_alert: ['created', 'dismissed', 'fixed', 'reopened'],
  code_scanning_alert: ['created', 'fixed', 'reopened', 'closed_by_user'],
  secret_scanning_alert: ['created', 'resolved', 'reopened'],
  projects_v2_item: ['created', 'edited', 'archived', 'deleted'],
  sub_issues: ['sub_issue_added', 'sub_issue_removed', 'parent_issue_added', 'parent_issue_removed'],
  branch_protection_rule: ['created', 'deleted', 'edited'],
  repository_ruleset: ['created', 'deleted', 'edited'],
  security_and_analysis: [],
};

const catalogue: Record<string, readonly string[]> = eventActions;
const allNames: readonly string[] = EventNames.All;
const perEventObjects = EventNames as unknown as Record<string, unknown>;

describe('event catalogue', () => {
  describe('coverage of the interface spec', () => {
    it.each(Object.entries(SPEC_TABLE))(
      'catalogues `%s` with every action the spec lists',
      (event, actions) => {
        expect(catalogue[event], `event '${event}'`).toBeDefined();
        expect(catalogue[event]).toEqual(expect.arrayContaining([...actions]));
        expect(allNames).toContain(event);
        for (const action of actions) expect(allNames).toContain(`${event}.${action}`);
      },
    );

    it('keeps the neutral `forge_app_authorization` and has no name spelled with the platform name', () => {
      expect(allNames).toContain('forge_app_authorization.revoked');
      expect(allNames.filter((name) => name.includes('github'))).toEqual([]);
      expect(forgeEventNameAliases).toEqual({ github_app_authorization: 'forge_app_authorization' });
    });

    it('keeps the entries the forge retired, each with the reason, and only those the spec lists', () => {
      const kept = specOnlyEntries.flatMap((entry) =>
        entry.actions.map((action) => `${entry.event}.${action}`),
      );
      expect(kept).toEqual([
        'content_reference.created',
        'pull_request.merged',
        'repository_dispatch.on-demand-test',
        'security_advisory.performed',
      ]);
      for (const entry of specOnlyEntries) {
        expect(entry.reason.length, entry.event).toBeGreaterThan(20);
        for (const action of entry.actions) expect(SPEC_TABLE[entry.event]).toContain(action);
      }
    });
  });

  describe('events added by the forge since the spec', () => {
    it.each(Object.entries(ADDED_SINCE_SPEC))('catalogues `%s` and its actions', (event, actions) => {
      expect(catalogue[event], `event '${event}'`).toBeDefined();
      expect(catalogue[event]).toEqual(expect.arrayContaining([...actions]));
    });

    it('gives `workflow_run` exactly the actions requested, in_progress and completed', () => {
      expect(EventNames.WorkflowRunEvent).toEqual({
        Completed: 'workflow_run.completed',
        InProgress: 'workflow_run.in_progress',
        Requested: 'workflow_run.requested',
      });
    });

    it('has more events than the spec table, all of them from the forge description or the spec', () => {
      const events = Object.keys(catalogue);
      expect(events.length).toBeGreaterThan(Object.keys(SPEC_TABLE).length + 25);
      const specOnly = new Set<string>(specOnlyEntries.map((entry) => entry.event));
      const description = JSON.parse(
        readFileSync(require.resolve(`${catalogueSource.package}/${catalogueSource.file}`), 'utf8'),
      ) as { webhooks: Record<string, { post: { operationId: string } }> };
      const forgeEvents = new Set(
        Object.values(description.webhooks).map(({ post }) =>
          neutralEventName(post.operationId.split('/')[0]!.replaceAll('-', '_')),
        ),
      );
      for (const event of events) expect(forgeEvents.has(event) || specOnly.has(event), event).toBe(true);
      for (const event of forgeEvents) expect(catalogue[event], event).toBeDefined();
    });
  });

  describe('EventNames', () => {
    it('lists in `All` every event followed by its `event.action` names, sorted and without duplicates', () => {
      const expected = Object.entries(catalogue).flatMap(([event, actions]) => [
        event,
        ...actions.map((action) => `${event}.${action}`),
      ]);
      expect(allNames).toEqual(expected);
      expect(new Set(allNames).size).toBe(allNames.length);
      expect(Object.keys(catalogue)).toEqual([...Object.keys(catalogue)].sort());
    });

    it('lists in `StringNames` exactly the plain event names', () => {
      expect(EventNames.StringNames).toEqual(Object.keys(catalogue));
      expect(EventNames.StringNames.every((name) => !name.includes('.'))).toBe(true);
    });

    it('has one object per event with actions whose values are that event`s `event.action` names', () => {
      expect(EventNames.CheckRunEvent.Completed).toBe('check_run.completed');
      expect(EventNames.CheckRunEvent.RequestedAction).toBe('check_run.requested_action');
      expect(EventNames.RepositoryDispatchEvent.OnDemandTest).toBe('repository_dispatch.on-demand-test');
      expect(EventNames.ForgeAppAuthorizationEvent.Revoked).toBe('forge_app_authorization.revoked');
      for (const [event, actions] of Object.entries(catalogue)) {
        const key = `${event
          .split('_')
          .map((part) => part[0]!.toUpperCase() + part.slice(1))
          .join('')}Event`;
        if (actions.length === 0) {
          expect(perEventObjects[key], key).toBeUndefined();
          continue;
        }
        const values = Object.values(perEventObjects[key] as Record<string, string>);
        expect(values.sort(), key).toEqual(actions.map((action) => `${event}.${action}`).sort());
      }
    });
  });

  describe('knownEventNames and isKnownEventName()', () => {
    it('knows every name of `EventNames.All` and nothing else', () => {
      expect(knownEventNames.size).toBe(allNames.length);
      for (const name of allNames) expect(knownEventNames.has(name)).toBe(true);
      expect(knownEventNames.has('not-a-known-event')).toBe(false);
      expect(knownEventNames.has('issues.not_an_action')).toBe(false);
    });

    it('accepts any `repository_dispatch` action, dots included, but not an empty one', () => {
      expect(freeFormActionEvents).toEqual(['repository_dispatch']);
      expect(isKnownEventName('repository_dispatch.deploy')).toBe(true);
      expect(isKnownEventName('repository_dispatch.sample.collected')).toBe(true);
      expect(isKnownEventName('repository_dispatch.')).toBe(false);
      expect(isKnownEventName('repository_dispatch')).toBe(true);
    });

    it('rejects unknown events, unknown actions and the special names', () => {
      expect(isKnownEventName('issues.opened')).toBe(true);
      expect(isKnownEventName('not-a-known-event')).toBe(false);
      expect(isKnownEventName('issues.exploded')).toBe(false);
      expect(isKnownEventName('push.created')).toBe(false);
      expect(isKnownEventName('*')).toBe(false);
      expect(isKnownEventName('error')).toBe(false);
      expect(isKnownEventName('github_app_authorization')).toBe(false);
    });
  });

  describe('neutralEventName()', () => {
    it('maps the forge`s spelling to the neutral name, with or without an action', () => {
      expect(neutralEventName('github_app_authorization')).toBe('forge_app_authorization');
      expect(neutralEventName('github_app_authorization.revoked')).toBe('forge_app_authorization.revoked');
    });

    it('returns every other name unchanged', () => {
      expect(neutralEventName('push')).toBe('push');
      expect(neutralEventName('forge_app_authorization')).toBe('forge_app_authorization');
      expect(neutralEventName('repository_dispatch.github_app_authorization')).toBe(
        'repository_dispatch.github_app_authorization',
      );
      expect(neutralEventName('toString')).toBe('toString');
    });
  });

  describe('source', () => {
    it('names the installed version of the forge description it was generated from', () => {
      const pkg = JSON.parse(
        readFileSync(require.resolve(`${catalogueSource.package}/package.json`), 'utf8'),
      ) as { version: string };
      expect(catalogueSource.version).toBe(pkg.version);
    });
  });
});

describe('payload types against real payloads (@octokit/webhooks-examples)', () => {
  const groups = require('@octokit/webhooks-examples') as {
    name: string;
    examples: Record<string, unknown>[];
  }[];
  const shapes = payloadShapes as Record<string, Record<string, string>>;
  const objects = commonObjectShapes as unknown as Record<
    string,
    Record<string, { required: boolean; types: string[] }>
  >;
  const objectOf = commonFieldTypes as Record<string, string>;
  const typeOf = (value: unknown): string => (value === null ? 'null' : typeof value);

  const cases = groups.flatMap((group) =>
    group.examples.map((payload, index) => ({
      label: `${group.name} #${index}${typeof payload.action === 'string' ? ` (${payload.action})` : ''}`,
      event: neutralEventName(group.name),
      payload,
    })),
  );

  it('has examples to check', () => {
    expect(cases.length).toBeGreaterThan(300);
  });

  it.each(cases)('$label has a known name and the typed common fields', ({ event, payload }) => {
    const action = typeof payload.action === 'string' ? payload.action : undefined;
    const name = action === undefined ? event : `${event}.${action}`;
    expect(isKnownEventName(name), name).toBe(true);
    const shape = shapes[name] ?? shapes[event];
    expect(shape, name).toBeDefined();
    for (const [field, rule] of Object.entries(shape!)) {
      const value = payload[field];
      if (value === undefined) {
        expect(rule.startsWith('optional'), `${name}: '${field}' is typed as always present`).toBe(true);
        continue;
      }
      if (value === null) {
        expect(rule.endsWith('-nullable'), `${name}: '${field}' is not typed as nullable`).toBe(true);
        continue;
      }
      for (const [key, spec] of Object.entries(objects[objectOf[field]!]!)) {
        const inner = (value as Record<string, unknown>)[key];
        if (inner === undefined) {
          expect(spec.required, `${name}: '${field}.${key}' is typed as always present`).toBe(false);
          continue;
        }
        const type = typeOf(inner);
        const allowed = spec.types.map((t) => (t === 'ForgeUser' ? 'object' : t));
        expect(allowed, `${name}: '${field}.${key}' is a ${type}`).toContain(type);
      }
    }
  });
});
