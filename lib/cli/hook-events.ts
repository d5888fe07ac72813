/**
 * Which events a forge hook must send: the ones the stage's EventBridge rules route (serverless.yml's
 * `eventBridge` patterns), in the forge's own terms: GitHub's event names (the catalogue's), GitLab's trigger
 * flags (`push_events`, `merge_requests_events`, ...).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { CliError } from './errors.js';

/** What the rules route: every event (a rule on `source` alone), or these catalogue events. */
export type RoutedEvents = { all: true } | { all: false; events: string[] };

/**
 * GitLab's hook trigger flags by the catalogue event each delivers (lib/webhooks' GitLab routing, read backwards):
 * a `Note Hook` is an `issue_comment`, `commit_comment` or `pull_request_review_comment`.
 */
export const GITLAB_TRIGGERS: Readonly<Record<string, readonly string[]>> = {
  push: ['push_events', 'tag_push_events'],
  pull_request: ['merge_requests_events'],
  issues: ['issues_events', 'confidential_issues_events'],
  issue_comment: ['note_events', 'confidential_note_events'],
  commit_comment: ['note_events', 'confidential_note_events'],
  pull_request_review_comment: ['note_events', 'confidential_note_events'],
  workflow_run: ['pipeline_events'],
  workflow_job: ['job_events'],
  release: ['releases_events'],
  milestone: ['milestone_events'],
  gollum: ['wiki_page_events'],
};

/**
 * Every trigger flag of a GitLab project or group hook the API documents ("Project webhooks API", "Group
 * webhooks API": the common ones), set by `--all-events` or a rule on every event.
 */
export const GITLAB_ALL_TRIGGERS: readonly string[] = [
  'push_events',
  'tag_push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'note_events',
  'confidential_note_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'releases_events',
  'milestone_events',
  'feature_flag_events',
  'emoji_events',
];

/** The event GitLab's "test hook" API sends for connect's test delivery (`POST .../test/push_events`). */
export const GITLAB_TEST_TRIGGER = 'push_events';

/**
 * The events the `eventBridge` patterns of a serverless.yml route, for `forge` (a pattern limited to other forges
 * by `detail.forge` routes nothing of this one). A pattern naming no `detail-type` and no `detail.event` routes
 * everything.
 */
export function routedEvents(serverlessYml: string, forge: string): RoutedEvents {
  // CloudFormation's short tags (`!GetAtt`) are not YAML's: read them as plain values, they name no event.
  const document = parseDocument(serverlessYml, {
    customTags: ['!GetAtt', '!Ref', '!Sub', '!Join', '!Select', '!If', '!Equals', '!ImportValue'].map(
      (tag) => ({ tag, resolve: (value: unknown) => value }),
    ),
  });
  const content = document.toJS({ maxAliasCount: 100 }) as { functions?: unknown } | null;
  const functions = content?.functions;
  const events = new Set<string>();
  if (functions === null || typeof functions !== 'object') return { all: false, events: [] };
  for (const definition of Object.values(functions as Record<string, unknown>)) {
    const triggers = (definition as { events?: unknown } | null)?.events;
    if (!Array.isArray(triggers)) continue;
    for (const trigger of triggers) {
      const pattern = (trigger as { eventBridge?: { pattern?: unknown } } | null)?.eventBridge?.pattern;
      if (pattern === null || typeof pattern !== 'object') continue;
      const routed = patternEvents(pattern as Record<string, unknown>, forge);
      if (routed === 'all') return { all: true };
      for (const event of routed) events.add(event);
    }
  }
  return { all: false, events: [...events].sort() };
}

function patternEvents(pattern: Record<string, unknown>, forge: string): string[] | 'all' {
  const detail = (pattern.detail ?? {}) as Record<string, unknown>;
  const forges = detail.forge;
  if (Array.isArray(forges) && !forges.includes(forge)) return [];
  const named: string[] = [];
  const detailType = pattern['detail-type'];
  if (Array.isArray(detailType)) {
    for (const entry of detailType) {
      if (typeof entry === 'string') named.push(entry.split('.')[0] as string);
      else if (typeof (entry as { prefix?: unknown })?.prefix === 'string') {
        const prefix = (entry as { prefix: string }).prefix;
        // `issues.` names an event; a prefix inside a name (`pull_`) cannot be told apart: every event.
        if (!prefix.endsWith('.')) return 'all';
        named.push(prefix.slice(0, -1));
      } else return 'all';
    }
  }
  if (Array.isArray(detail.event)) {
    for (const entry of detail.event) if (typeof entry === 'string') named.push(entry);
  }
  return detailType === undefined && detail.event === undefined ? 'all' : named;
}

/** The routed events of the project in `dir` (its serverless.yml); a one-line error when there is none. */
export function projectEvents(dir: string, forge: string): RoutedEvents {
  const file = join(dir, 'serverless.yml');
  if (!existsSync(file)) {
    throw new CliError(
      `no serverless.yml in "${dir}" to read the rules from: pass "--dir <project>" or "--all-events"`,
    );
  }
  return routedEvents(readFileSync(file, 'utf8'), forge);
}

/** GitHub's `events` of a hook for what the rules route: `["*"]` for everything. */
export function gitHubEvents(routed: RoutedEvents): string[] {
  return routed.all ? ['*'] : [...routed.events];
}

/** GitLab's trigger flags for what the rules route (`push_events` always: GitLab's test delivery is a push). */
export function gitLabTriggers(routed: RoutedEvents): string[] {
  if (routed.all) return [...GITLAB_ALL_TRIGGERS];
  const triggers = new Set<string>([GITLAB_TEST_TRIGGER]);
  for (const event of routed.events) for (const flag of GITLAB_TRIGGERS[event] ?? []) triggers.add(flag);
  return GITLAB_ALL_TRIGGERS.filter((flag) => triggers.has(flag));
}
