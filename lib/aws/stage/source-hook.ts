import { type Forge, Forges, resolvePreset } from '../../webhooks/index.js';

/** Where a source's hook lives: a GitHub repository, organization or App hook, a GitLab project or group hook. */
export type SourceHookKind = 'repo' | 'org' | 'app' | 'project' | 'group';

/**
 * The forge-side hook of a webhook source (its `hook` object in `FORGEBRIDGE_WEBHOOK_SOURCES`): what the
 * reconciler lists the forge's delivery log of. Only the fields its kind needs are set.
 */
export interface SourceHook {
  kind: SourceHookKind;
  /** The forge's REST API base URL, without trailing slashes. Default `https://api.github.com` (GitHub kinds) or `https://gitlab.com/api/v4`. */
  api: string;
  /** The hook's id; absent for `app` (an App has one hook). */
  id?: number;
  /** The token-store provider whose token calls the API; for `app`, the provider of the `github_app` entry whose key signs the app JWT. */
  provider: string;
  /** `repo`: the repository's owner and name. */
  owner?: string;
  repo?: string;
  /** `org`: the organization's login. */
  org?: string;
  /** `project`: the project's id or `namespace/path`. */
  project?: string;
  /** `group`: the group's id or path. */
  group?: string;
}

const KIND_FIELDS: Record<SourceHookKind, readonly string[]> = {
  repo: ['owner', 'repo'],
  org: ['org'],
  app: [],
  project: ['project'],
  group: ['group'],
};
const COMMON = new Set(['kind', 'api', 'id', 'provider']);
const NAME = /^[A-Za-z0-9_.-]+$/;
// A GitLab path may nest groups (`group/subgroup/project`).
const PATH = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;

/**
 * Whether a URL's host is this machine (`localhost`, `127.0.0.0/8`, `[::1]`): the only place a forge API may be
 * reached over plain http (the local stack's stand-ins), since the hook's token and every answer the reconciler
 * trusts travel over it.
 */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Parses a source's `hook` object; `label(field)` names the field in errors (`"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.id"`).
 * A `TypeError` when it is malformed or its forge has no delivery-log API (its preset's `deliveryLog`).
 */
export function parseSourceHook(value: unknown, forge: Forge, label: (field?: string) => string): SourceHook {
  const { deliveryLog } = resolvePreset(forge);
  if (deliveryLog === undefined) {
    throw new TypeError(
      `${label()} cannot be reconciled: ${forge} offers no api to list and redeliver a hook's deliveries (remove "hook")`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${label()} must be an object`);
  }
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(KIND_FIELDS, kind)) {
    throw new TypeError(`${label('kind')} must be one of "repo", "org", "app", "project", "group"`);
  }
  const hookKind = kind as SourceHookKind;
  if (!deliveryLog.hookKinds.includes(hookKind)) {
    const wanted = Forges.find((other) => resolvePreset(other).deliveryLog?.hookKinds.includes(hookKind));
    throw new TypeError(
      `${label('kind')} "${hookKind}" is a ${wanted} hook: the source's "forge" must be "${wanted}"`,
    );
  }
  const fields = KIND_FIELDS[hookKind];
  for (const key of Object.keys(record)) {
    if (!COMMON.has(key) && !fields.includes(key)) {
      throw new TypeError(`${label()} of kind "${hookKind}" has an unknown field "${key}"`);
    }
  }
  const text = (key: string, pattern: RegExp, what: string): string => {
    const field = record[key];
    if (field === undefined || field === null || field === '')
      throw new TypeError(`${label(key)} is required`);
    const string = typeof field === 'number' && Number.isSafeInteger(field) ? String(field) : field;
    if (typeof string !== 'string' || !pattern.test(string))
      throw new TypeError(`${label(key)} must be ${what}`);
    return string;
  };
  const hook: SourceHook = {
    kind: hookKind,
    api: deliveryLog.api,
    provider: text('provider', /^\S+$/, 'a token-store provider name'),
  };
  if (record.api !== undefined) {
    const api = record.api;
    const url = typeof api === 'string' && URL.canParse(api) ? new URL(api) : undefined;
    const secure = url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname));
    if (url === undefined || !secure || url.search !== '' || url.username !== '' || url.password !== '') {
      throw new TypeError(
        `${label('api')} must be an https url without a query or credentials (http only on loopback)`,
      );
    }
    hook.api = (api as string).replace(/\/+$/, '');
  }
  if (hookKind === 'app') {
    if (record.id !== undefined) throw new TypeError(`${label('id')} must be left out: an app has one hook`);
  } else {
    const id = record.id;
    const number = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number <= 0) {
      throw new TypeError(`${label('id')} must be the hook's id, a positive integer`);
    }
    hook.id = number;
  }
  if (hookKind === 'repo') {
    hook.owner = text('owner', NAME, 'a user or organization login');
    hook.repo = text('repo', NAME, 'a repository name without its owner');
  } else if (hookKind === 'org') {
    hook.org = text('org', NAME, 'an organization login');
  } else if (hookKind === 'project') {
    hook.project = text('project', PATH, 'a project id or its full path');
  } else if (hookKind === 'group') {
    hook.group = text('group', PATH, 'a group id or its full path');
  }
  return hook;
}
