/**
 * How each forge's own event names (and its payload's action) map onto the catalogue's `event` / `action` where a
 * counterpart exists, keeping the forge's own name or action where none does. Each preset (forges.ts) names its
 * route; the tables are in docs/forges.md.
 */
import { neutralEventName } from './event-names.js';
import { splitEventType } from './standard.js';

/** What a delivery routes as: the catalogue's event name and action where there is a counterpart. */
export interface ForgeRoute {
  /** The catalogue event name (`pull_request`), or the forge's own name where none corresponds. */
  readonly name: string;
  /** The catalogue action (`opened`), the forge's own action where none corresponds, or `undefined`. */
  readonly action: string | undefined;
  /** The forge's own action (`open` for a GitLab merge request), or `undefined`. */
  readonly nativeAction: string | undefined;
}

/** The catalogue's own names (GitHub's, and the neutral preset's): the payload's `action`. */
export function routeCatalogue(nativeName: string, payload: unknown): ForgeRoute {
  const action = stringAt(payload, 'action');
  return { name: neutralEventName(nativeName), action, nativeAction: action };
}

/** A Standard Webhooks sender's `type` (or the configured event header): `contact.created` is `contact` + `created`. */
export function routeTyped(nativeName: string): ForgeRoute {
  const { name, action } = splitEventType(nativeName);
  return { name, action, nativeAction: action };
}

// GitLab: the X-Gitlab-Event value -> catalogue event, with how its action is read and mapped.
const GITLAB_ACTIONS = {
  open: 'opened',
  reopen: 'reopened',
  close: 'closed',
  // GitHub reports a merge as `closed` with `merged: true`; GitLab's payload keeps its own `merge` state.
  merge: 'closed',
  update: 'edited',
  create: 'created',
  delete: 'deleted',
} as const;

const GITLAB_STATUS_RUN = {
  created: 'requested',
  waiting_for_resource: 'requested',
  preparing: 'requested',
  pending: 'requested',
  scheduled: 'requested',
  running: 'in_progress',
  success: 'completed',
  failed: 'completed',
  canceled: 'completed',
  canceling: 'completed',
  skipped: 'completed',
  manual: 'completed',
} as const;

const GITLAB_STATUS_JOB = {
  created: 'queued',
  waiting_for_resource: 'queued',
  preparing: 'queued',
  pending: 'queued',
  scheduled: 'queued',
  running: 'in_progress',
  success: 'completed',
  failed: 'completed',
  canceled: 'completed',
  canceling: 'completed',
  skipped: 'completed',
  manual: 'waiting',
} as const;

const GITLAB_NOTE_TARGETS = {
  Issue: 'issue_comment',
  MergeRequest: 'issue_comment',
  Commit: 'commit_comment',
} as const;

/** GitLab's route: `X-Gitlab-Event` and the payload's action or status, onto the catalogue's. */
export function routeGitlab(nativeName: string, payload: unknown): ForgeRoute {
  const attributes = objectAt(payload, 'object_attributes');
  switch (nativeName) {
    case 'Push Hook':
    case 'Tag Push Hook':
      return { name: 'push', action: undefined, nativeAction: undefined };
    case 'Merge Request Hook': {
      const native = stringAt(attributes, 'action');
      // An update that moved the source branch (`oldrev` set) is GitHub's `synchronize`.
      const action =
        native === 'update' && stringAt(attributes, 'oldrev') !== undefined
          ? 'synchronize'
          : mapped(GITLAB_ACTIONS, native);
      return { name: 'pull_request', action, nativeAction: native };
    }
    case 'Issue Hook':
    case 'Confidential Issue Hook': {
      const native = stringAt(attributes, 'action');
      return { name: 'issues', action: mapped(GITLAB_ACTIONS, native), nativeAction: native };
    }
    case 'Note Hook':
    case 'Confidential Note Hook': {
      const target = stringAt(attributes, 'noteable_type');
      const native = stringAt(attributes, 'action');
      const action = mapped(GITLAB_ACTIONS, native ?? 'create');
      // A note on a line of a merge request's diff is GitHub's review comment.
      if (target === 'MergeRequest' && stringAt(attributes, 'type') === 'DiffNote') {
        return { name: 'pull_request_review_comment', action, nativeAction: native };
      }
      if (target !== undefined && Object.hasOwn(GITLAB_NOTE_TARGETS, target)) {
        const name = GITLAB_NOTE_TARGETS[target as keyof typeof GITLAB_NOTE_TARGETS];
        return { name, action, nativeAction: native };
      }
      return { name: nativeName, action: native, nativeAction: native };
    }
    case 'Pipeline Hook': {
      const status = stringAt(attributes, 'status');
      return { name: 'workflow_run', action: mapped(GITLAB_STATUS_RUN, status), nativeAction: status };
    }
    case 'Job Hook': {
      const status = stringAt(payload, 'build_status');
      return { name: 'workflow_job', action: mapped(GITLAB_STATUS_JOB, status), nativeAction: status };
    }
    case 'Release Hook': {
      const native = stringAt(payload, 'action');
      return { name: 'release', action: mapped(GITLAB_ACTIONS, native), nativeAction: native };
    }
    case 'Milestone Hook': {
      const native = stringAt(attributes, 'action') ?? stringAt(payload, 'action');
      const action = native === 'reopen' ? 'opened' : mapped(GITLAB_ACTIONS, native);
      return { name: 'milestone', action, nativeAction: native };
    }
    case 'Wiki Page Hook':
      return { name: 'gollum', action: undefined, nativeAction: stringAt(attributes, 'action') };
    case 'System Hook': {
      const native = stringAt(payload, 'event_name');
      return { name: nativeName, action: native, nativeAction: native };
    }
    default: {
      const native = stringAt(attributes, 'action');
      return { name: nativeName, action: native, nativeAction: native };
    }
  }
}

// Bitbucket Cloud: X-Event-Key -> catalogue event and action.
const BITBUCKET_EVENTS: Readonly<Record<string, readonly [string, string | undefined]>> = {
  'repo:push': ['push', undefined],
  'repo:fork': ['fork', undefined],
  'repo:updated': ['repository', 'edited'],
  'repo:commit_comment_created': ['commit_comment', 'created'],
  'repo:commit_status_created': ['status', undefined],
  'repo:commit_status_updated': ['status', undefined],
  'issue:created': ['issues', 'opened'],
  'issue:updated': ['issues', 'edited'],
  'issue:comment_created': ['issue_comment', 'created'],
  'pullrequest:created': ['pull_request', 'opened'],
  'pullrequest:updated': ['pull_request', 'edited'],
  'pullrequest:fulfilled': ['pull_request', 'closed'],
  'pullrequest:rejected': ['pull_request', 'closed'],
  'pullrequest:approved': ['pull_request_review', 'submitted'],
  'pullrequest:changes_request_created': ['pull_request_review', 'submitted'],
  'pullrequest:unapproved': ['pull_request_review', 'dismissed'],
  'pullrequest:changes_request_removed': ['pull_request_review', 'dismissed'],
  'pullrequest:comment_created': ['issue_comment', 'created'],
  'pullrequest:comment_updated': ['issue_comment', 'edited'],
  'pullrequest:comment_deleted': ['issue_comment', 'deleted'],
};

/** Bitbucket Cloud's route: `X-Event-Key` onto the catalogue's event and action. */
export function routeBitbucket(nativeName: string, payload: unknown): ForgeRoute {
  if (!Object.hasOwn(BITBUCKET_EVENTS, nativeName)) {
    return { name: nativeName, action: undefined, nativeAction: undefined };
  }
  const [name, action] = BITBUCKET_EVENTS[nativeName] as readonly [string, string | undefined];
  // An inline comment (on a line of the diff) is GitHub's review comment.
  if (name === 'issue_comment' && nativeName.startsWith('pullrequest:')) {
    const inline = objectAt(objectAt(payload, 'comment'), 'inline');
    if (inline !== undefined) return { name: 'pull_request_review_comment', action, nativeAction: undefined };
  }
  return { name, action, nativeAction: undefined };
}

// Gitea and Forgejo send GitHub's names for most events; these differ.
const GITEA_EVENTS: Readonly<Record<string, string>> = {
  pull_request_approved: 'pull_request_review',
  pull_request_rejected: 'pull_request_review',
  pull_request_comment: 'pull_request_review',
};

const GITEA_ACTIONS: Readonly<Record<string, string>> = {
  synchronized: 'synchronize',
  reviewed: 'submitted',
};

/** Gitea's and Forgejo's route: GitHub's names but for a few events and actions. */
export function routeGitea(nativeName: string, payload: unknown): ForgeRoute {
  const native = stringAt(payload, 'action');
  const name = Object.hasOwn(GITEA_EVENTS, nativeName) ? (GITEA_EVENTS[nativeName] as string) : nativeName;
  return { name, action: mapped(GITEA_ACTIONS, native), nativeAction: native };
}

/** `table[value]` when there is one, else `value` (the forge's own action is kept). */
function mapped(table: Readonly<Record<string, string>>, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Object.hasOwn(table, value) ? table[value] : value;
}

function objectAt(value: unknown, key: string): object | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return field !== null && typeof field === 'object' && !Array.isArray(field) ? field : undefined;
}

function stringAt(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' && field.length > 0 ? field : undefined;
}
