/**
 * A forge-side hook as `forgebridge connect` sees it, pure: the REST requests that list, create, update and test
 * a GitHub repository / organization hook or a GitLab project / group hook (path and body, no I/O), what a
 * forge's answer says of a hook and of its recent deliveries, and what is wrong with a hook for its source. What
 * differs between the forges is their hooks API's (./hook-apis).
 */
import { HOOK_APIS, type HookForge, hookApiOf } from './hook-apis/index.js';

/** Where a hook lives. */
export type HookPlace =
  | { kind: 'repo'; owner: string; repo: string }
  | { kind: 'org'; org: string }
  | { kind: 'project'; project: string }
  | { kind: 'group'; group: string };

export { forgeOf } from './hook-apis/index.js';

/** `acme/web`, `org acme`, `project acme/web`, `group acme`. */
export function placeLabel(place: HookPlace): string {
  switch (place.kind) {
    case 'repo':
      return `${place.owner}/${place.repo}`;
    case 'org':
      return `org ${place.org}`;
    case 'project':
      return `project ${place.project}`;
    case 'group':
      return `group ${place.group}`;
  }
}

/** The hook a source should have: where it posts, its secret, the events (GitHub names or GitLab trigger flags). */
export interface WantedHook {
  url: string;
  secret: string;
  events: readonly string[];
}

/** One REST request: method, path under the API base (with its query), JSON body. */
export interface HookRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT';
  path: string;
  body?: Record<string, unknown>;
}

/** The hooks collection of a place: `/repos/{owner}/{repo}/hooks`, `/projects/{id}/hooks` (a path URL-encoded). */
export function hooksPath(place: HookPlace): string {
  const part = encodeURIComponent;
  switch (place.kind) {
    case 'repo':
      return `/repos/${part(place.owner)}/${part(place.repo)}/hooks`;
    case 'org':
      return `/orgs/${part(place.org)}/hooks`;
    case 'project':
      return `/projects/${part(place.project)}/hooks`;
    case 'group':
      return `/groups/${part(place.group)}/hooks`;
  }
}

/** One page of the place's hooks (100 a page on both forges). */
export function listRequest(place: HookPlace, page: number): HookRequest {
  return { method: 'GET', path: `${hooksPath(place)}?per_page=100&page=${page}` };
}

/** One hook. */
export function getRequest(place: HookPlace, id: number): HookRequest {
  return { method: 'GET', path: `${hooksPath(place)}/${id}` };
}

/**
 * A new hook: GitHub's `web` hook with JSON content, the secret, TLS verification on (`insecure_ssl` "0"), active
 * and the events; GitLab's with the secret token, TLS verification on and every trigger flag set (on for the
 * events, off for the rest: GitLab turns `push_events` on by default).
 */
export function createRequest(place: HookPlace, wanted: WantedHook): HookRequest {
  return { method: 'POST', path: hooksPath(place), body: hookApiOf(place).createBody(wanted) };
}

/**
 * The update that makes `hook` the wanted one, keeping the events it has beyond them: GitHub's `PATCH` (the whole
 * `config`, `add_events`), GitLab's `PUT` (the URL, token, TLS verification and the wanted flags). The secret is
 * sent only with `secret: true` (the forge never shows it, so a hook is re-keyed only when a test proved it wrong
 * or it has none).
 */
export function updateRequest(
  place: HookPlace,
  hook: ForgeHook,
  wanted: WantedHook,
  options: { secret: boolean },
): HookRequest {
  return { ...hookApiOf(place).update(hook, wanted, options), path: `${hooksPath(place)}/${hook.id}` };
}

/** The forge's test delivery: GitHub's ping (`POST .../pings`), GitLab's test hook (`POST .../test/push_events`). */
export function testRequest(place: HookPlace, id: number): HookRequest {
  return { method: 'POST', path: `${hooksPath(place)}/${id}${hookApiOf(place).testPath}` };
}

/** The hook's latest deliveries as the forge logged them (GitHub's deliveries, GitLab's events). */
export function attemptsRequest(place: HookPlace, id: number): HookRequest {
  return { method: 'GET', path: `${hooksPath(place)}/${id}${hookApiOf(place).attemptsPath}` };
}

/** A hook as the forge describes it, in terms both forges share. */
export interface ForgeHook {
  id: number;
  url: string | undefined;
  /** `json`, `form` (GitHub only: GitLab always sends JSON). */
  contentType: string | undefined;
  tlsVerification: boolean;
  active: boolean;
  /** Whether a secret is set; `undefined` where the forge does not say (GitLab). */
  hasSecret: boolean | undefined;
  /** GitHub's event names, or GitLab's trigger flags that are on. */
  events: string[];
}

/** A hook of a forge's answer, or `undefined` when the answer is not one. */
export function readHook(forge: HookForge, value: unknown): ForgeHook | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const hook = value as Record<string, unknown>;
  if (typeof hook.id !== 'number') return undefined;
  return HOOK_APIS[forge].readHook(hook as Record<string, unknown> & { id: number });
}

/** One delivery attempt from the forge's log: its id there, our delivery id, the status it got (0: none). */
export interface ForgeAttempt {
  id: number;
  deliveryId: string | undefined;
  event: string | undefined;
  status: number;
  /** Whether the forge sent the secret (GitLab's `X-Gitlab-Token`, shown redacted); `undefined` where not told. */
  sentSecret: boolean | undefined;
}

/** The attempts of a forge's delivery-log answer, newest first as the forges list them. */
export function readAttempts(forge: HookForge, value: unknown): ForgeAttempt[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item): ForgeAttempt[] => {
    const entry = (item ?? {}) as Record<string, unknown>;
    if (typeof entry.id !== 'number') return [];
    return [HOOK_APIS[forge].readAttempt(entry as Record<string, unknown> & { id: number })];
  });
}

/** What differs between a hook and the wanted one, the secret aside (the forge never shows it). */
export function differences(hook: ForgeHook, wanted: WantedHook): string[] {
  const found: string[] = [];
  if (hook.url !== wanted.url) found.push('url');
  if (hook.contentType !== 'json') found.push('content type');
  if (!hook.tlsVerification) found.push('tls verification');
  if (!hook.active) found.push('active');
  if (missingEvents(hook, wanted.events).length > 0) found.push('events');
  if (hook.hasSecret === false) found.push('secret');
  return found;
}

/** The wanted events the hook does not send (GitHub's `*` sends them all). */
export function missingEvents(hook: ForgeHook, events: readonly string[]): string[] {
  if (hook.events.includes('*')) return [];
  if (events.includes('*')) return ['*'];
  return events.filter((event) => !hook.events.includes(event));
}

/**
 * Everything wrong with a hook for its source, one finding each: another URL, form content, TLS verification off,
 * inactive, no secret, the routed events not subscribed, the last deliveries failing.
 */
export function hookFindings(
  hook: ForgeHook,
  wanted: Omit<WantedHook, 'secret'>,
  attempts: ForgeAttempt[],
): string[] {
  const findings: string[] = [];
  if (hook.url !== wanted.url)
    findings.push(`posts to another URL: ${hook.url ?? 'none'} (the source's is ${wanted.url})`);
  if (hook.contentType !== 'json') {
    findings.push(
      `content type "${hook.contentType ?? 'none'}": the ingest reads JSON only (set "application/json")`,
    );
  }
  if (!hook.tlsVerification) findings.push('TLS verification is off: turn SSL verification on');
  if (!hook.active) findings.push('inactive: the forge sends it nothing');
  const noSecret =
    hook.hasSecret === false || (attempts[0] !== undefined && attempts[0].sentSecret === false);
  if (noSecret) findings.push('no secret: the ingest refuses every delivery it sends');
  const missing = missingEvents(hook, wanted.events);
  if (missing.length > 0) {
    findings.push(`not subscribed to ${missing.join(', ')}, which the stage's rules route`);
  }
  const failing: number[] = [];
  for (const attempt of attempts) {
    if (attempt.status >= 200 && attempt.status < 300) break;
    failing.push(attempt.status);
  }
  if (failing.length > 0) {
    const shown = failing.slice(0, 5).map((status) => (status === 0 ? 'no answer' : String(status)));
    findings.push(
      `the last ${failing.length === 1 ? 'delivery' : `${failing.length} deliveries`} failed (${shown.join(', ')}${failing.length > 5 ? ', …' : ''})`,
    );
  }
  return findings;
}
