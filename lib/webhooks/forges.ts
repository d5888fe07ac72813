/**
 * Forge presets: the delivery headers and signature scheme of each forge, and the one routing model that maps
 * each forge's own event names onto the catalogue's `event` / `action` where a counterpart exists.
 */
import { neutralEventName } from './event-names.js';
import { STANDARD_HEADERS, type StandardHeaderNames, SVIX_HEADERS, splitEventType } from './standard.js';

/**
 * The forges with a preset. `generic` is the neutral `X-Forge-*` headers; `standard` is the Standard Webhooks
 * scheme (`webhook-*` headers) and `svix` the same scheme under `svix-*` names.
 */
export const Forges = [
  'generic',
  'github',
  'gitea',
  'forgejo',
  'gitlab',
  'bitbucket',
  'standard',
  'svix',
] as const;

/** A forge with a preset. */
export type Forge = (typeof Forges)[number];

/**
 * How a signature header carries its proof:
 * - `sha256`: `sha256=<hex>` HMAC-SHA256 (`X-Hub-Signature-256`; Bitbucket's `X-Hub-Signature`);
 * - `sha1`: `sha1=<hex>` HMAC-SHA1 (the legacy `X-Hub-Signature`);
 * - `hex-sha256`: the bare hex HMAC-SHA256 (`X-Gitea-Signature`, `X-Forgejo-Signature`);
 * - `token`: the shared secret itself (`X-Gitlab-Token`): no body integrity;
 * - `standard`: Standard Webhooks `v1,<base64>` entries, an HMAC-SHA256 over `id.timestamp.body` keyed with
 *   the decoded `whsec_` secret, with the id and timestamp in their own headers (`webhook-signature`).
 */
export type SignatureScheme = 'sha256' | 'sha1' | 'hex-sha256' | 'token' | 'standard';

/** One header that may carry a delivery's signature, lowercase. */
export interface SignatureSource {
  readonly header: string;
  readonly scheme: SignatureScheme;
}

/** A forge's preset: header names (lowercase, first present wins) and signature sources. */
export interface ForgePreset {
  readonly forge: Forge;
  /** Event name headers, in order of preference. */
  readonly eventHeaders: readonly string[];
  /** Delivery id headers, in order of preference. */
  readonly deliveryHeaders: readonly string[];
  /**
   * The header naming the hook that sent a delivery, where the forge's delivery id names the event rather than
   * one hook's delivery of it (GitHub: two Apps or hooks on one URL get one event under one GUID). Part of the
   * delivery's identity: two hooks' deliveries of one event are two deliveries (docs/forges.md, "Hook identity").
   */
  readonly hookHeaders: readonly string[];
  /**
   * Signature headers. Every HMAC-SHA256 one present must match; a sha1 one counts only when no sha256 one is
   * present; a token only when no HMAC is present.
   */
  readonly signatures: readonly SignatureSource[];
  /**
   * The Standard Webhooks header sets the preset reads, first one whose signature header is present wins;
   * such a delivery is verified by its `standard` signature (and its timestamp) alone.
   */
  readonly standardHeaders: readonly StandardHeaderNames[];
}

/** What a delivery routes as: the catalogue's event name and action where there is a counterpart. */
export interface ForgeRoute {
  /** The catalogue event name (`pull_request`), or the forge's own name where none corresponds. */
  readonly name: string;
  /** The catalogue action (`opened`), the forge's own action where none corresponds, or `undefined`. */
  readonly action: string | undefined;
  /** The forge's own action (`open` for a GitLab merge request), or `undefined`. */
  readonly nativeAction: string | undefined;
}

const HUB_SIGNATURES: readonly SignatureSource[] = [
  { header: 'x-hub-signature-256', scheme: 'sha256' },
  { header: 'x-hub-signature', scheme: 'sha1' },
];

const PRESETS: Readonly<Record<Forge, ForgePreset>> = {
  generic: {
    forge: 'generic',
    eventHeaders: ['x-forge-event'],
    deliveryHeaders: ['x-forge-delivery'],
    hookHeaders: [],
    signatures: HUB_SIGNATURES,
    standardHeaders: [],
  },
  github: {
    forge: 'github',
    eventHeaders: ['x-github-event'],
    // The GUID names the event, shared by every hook it is delivered to; X-GitHub-Hook-ID names the hook.
    deliveryHeaders: ['x-github-delivery'],
    hookHeaders: ['x-github-hook-id'],
    signatures: HUB_SIGNATURES,
    standardHeaders: [],
  },
  gitea: {
    forge: 'gitea',
    eventHeaders: ['x-gitea-event'],
    // A hook task's own UUID: already one per hook.
    deliveryHeaders: ['x-gitea-delivery'],
    hookHeaders: [],
    signatures: [{ header: 'x-gitea-signature', scheme: 'hex-sha256' }, ...HUB_SIGNATURES],
    standardHeaders: [],
  },
  forgejo: {
    forge: 'forgejo',
    eventHeaders: ['x-forgejo-event', 'x-gitea-event'],
    deliveryHeaders: ['x-forgejo-delivery', 'x-gitea-delivery'],
    hookHeaders: [],
    signatures: [
      { header: 'x-forgejo-signature', scheme: 'hex-sha256' },
      { header: 'x-gitea-signature', scheme: 'hex-sha256' },
      ...HUB_SIGNATURES,
    ],
    standardHeaders: [],
  },
  gitlab: {
    forge: 'gitlab',
    eventHeaders: ['x-gitlab-event'],
    // Idempotency-Key is one hook's delivery (kept across its retries): already one per hook.
    deliveryHeaders: ['idempotency-key', 'x-gitlab-event-uuid'],
    hookHeaders: [],
    signatures: [{ header: 'x-gitlab-token', scheme: 'token' }],
    // With a signing token, GitLab signs the Standard Webhooks way; its webhook-id equals Idempotency-Key.
    standardHeaders: [STANDARD_HEADERS],
  },
  bitbucket: {
    forge: 'bitbucket',
    eventHeaders: ['x-event-key'],
    // X-Hook-UUID names the webhook, not the delivery: every delivery of one hook carries the same one.
    deliveryHeaders: ['x-request-uuid'],
    hookHeaders: ['x-hook-uuid'],
    signatures: [{ header: 'x-hub-signature', scheme: 'sha256' }],
    standardHeaders: [],
  },
  standard: {
    forge: 'standard',
    // No event header: the event is the payload's `type` (`contact.created`).
    eventHeaders: [],
    // The message id, the same for every endpoint it is sent to: each endpoint is a source of its own here.
    deliveryHeaders: [STANDARD_HEADERS.id],
    hookHeaders: [],
    signatures: [{ header: STANDARD_HEADERS.signature, scheme: 'standard' }],
    standardHeaders: [STANDARD_HEADERS],
  },
  svix: {
    forge: 'svix',
    eventHeaders: [],
    // Svix's own names first; the Standard Webhooks names it can send instead are read too.
    deliveryHeaders: [SVIX_HEADERS.id, STANDARD_HEADERS.id],
    hookHeaders: [],
    signatures: [
      { header: SVIX_HEADERS.signature, scheme: 'standard' },
      { header: STANDARD_HEADERS.signature, scheme: 'standard' },
    ],
    standardHeaders: [SVIX_HEADERS, STANDARD_HEADERS],
  },
};

/**
 * The preset of a forge: its event, delivery and signature headers and signature schemes.
 *
 * @throws TypeError naming "forge" when it is not one of `Forges`.
 */
export function resolvePreset(forge: unknown = 'generic'): ForgePreset {
  if (typeof forge !== 'string' || !Object.hasOwn(PRESETS, forge)) {
    throw new TypeError(`"forge" must be one of ${Forges.map((name) => `"${name}"`).join(', ')}`);
  }
  return PRESETS[forge as Forge];
}

/**
 * Maps a forge's own event name (and its payload's action) onto the catalogue's event name and action where a
 * counterpart exists, and keeps the forge's own name or action where none does. The tables are in
 * docs/forges.md.
 *
 * @example
 * ```ts
 * routeForgeEvent('gitlab', 'Merge Request Hook', { object_attributes: { action: 'open' } });
 * // { name: 'pull_request', action: 'opened', nativeAction: 'open' }
 * ```
 */
export function routeForgeEvent(forge: Forge, nativeName: string, payload: unknown): ForgeRoute {
  switch (forge) {
    case 'gitlab':
      return routeGitlab(nativeName, payload);
    case 'bitbucket':
      return routeBitbucket(nativeName, payload);
    case 'gitea':
    case 'forgejo':
      return routeGitea(nativeName, payload);
    case 'standard':
    case 'svix': {
      // The payload's `type` (or the configured event header): `contact.created` is `contact` + `created`.
      const { name, action } = splitEventType(nativeName);
      return { name, action, nativeAction: action };
    }
    default: {
      const action = stringAt(payload, 'action');
      return { name: neutralEventName(nativeName), action, nativeAction: action };
    }
  }
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

function routeGitlab(nativeName: string, payload: unknown): ForgeRoute {
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

function routeBitbucket(nativeName: string, payload: unknown): ForgeRoute {
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

function routeGitea(nativeName: string, payload: unknown): ForgeRoute {
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
