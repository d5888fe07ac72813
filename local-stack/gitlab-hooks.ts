// GitLab's project and group webhooks API for the local stand-in (gitlab-events.ts serves it beside the hook
// events): list, add, get and edit a hook (`POST /projects/:id/hooks`, `PUT .../hooks/:hook_id`) and "test hook"
// (`POST .../hooks/:hook_id/test/:trigger`): the test event really sent, with the hook's secret token in
// `X-Gitlab-Token`, to the hook's URL, logged in its events, answered `201 {"message":"201 Created"}`. Answers carry
// the fields GitLab's "Project webhooks API" / "Group webhooks API" document (the token never: GitLab does not
// show it) and refuse what GitLab refuses: no `url` (400 `url is missing`), an invalid URL (422), an unknown hook
// (404), a trigger outside the documented list (400).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The trigger flags of a hook, as the API documents them (test/fixtures/gitlab/hooks.schema.json). */
export const GITLAB_HOOK_FLAGS = [
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
] as const;

/** The triggers "test hook" takes, with the event it sends for the few the stand-in can (the rest: a push). */
const TEST_TRIGGERS: Record<string, string> = {
  push_events: 'Push Hook',
  tag_push_events: 'Tag Push Hook',
  issues_events: 'Issue Hook',
  confidential_issues_events: 'Issue Hook',
  note_events: 'Note Hook',
  confidential_note_events: 'Note Hook',
  merge_requests_events: 'Merge Request Hook',
  job_events: 'Job Hook',
  pipeline_events: 'Pipeline Hook',
  wiki_page_events: 'Wiki Page Hook',
  releases_events: 'Release Hook',
  emoji_events: 'Emoji Hook',
  resource_access_token_events: 'Resource Access Token Hook',
};

/** A hook as GitLab keeps it (its token in clear here, never in an answer). */
export interface GitLabWebHook {
  id: number;
  /** `/projects/<id>/hooks/<hook_id>` (the id as requested: `acme%2Fweb`). */
  path: string;
  url: string;
  token: string;
  enable_ssl_verification: boolean;
  /** `executable`, `temporarily_disabled` or `disabled`. */
  alert_status: string;
  flags: Record<(typeof GITLAB_HOOK_FLAGS)[number], boolean>;
  created_at: string;
}

/** What the hooks routes need of the events stand-in. */
export interface GitLabHooksContext {
  answer(
    req: IncomingMessage,
    res: ServerResponse,
    operation: GitLabHooksOperation,
    status: number,
    body: unknown,
  ): void;
  /** Makes the events side keep a log for the hook (its token and URL), or updates them. */
  track(path: string, token: string, url: string): void;
  /** Sends one event through the events side (logged there). */
  test(path: string, event: string, data: Record<string, unknown>): Promise<void>;
}

export type GitLabHooksOperation = 'hooks' | 'hook' | 'create-hook' | 'update-hook' | 'test' | 'error';

/** The hooks API of one stand-in: `route` answers a request it serves and returns true, else false. */
export function gitLabHooks(context: GitLabHooksContext) {
  const webHooks = new Map<string, GitLabWebHook>();
  let nextId = 7_001;

  const view = (hook: GitLabWebHook) => {
    const [, collection, owner] = hook.path.split('/');
    const ownerId = /^\d+$/.test(owner ?? '') ? Number(owner) : 42;
    return {
      id: hook.id,
      url: hook.url,
      name: '',
      description: '',
      ...(collection === 'groups' ? { group_id: ownerId } : { project_id: ownerId }),
      ...hook.flags,
      push_events_branch_filter: '',
      enable_ssl_verification: hook.enable_ssl_verification,
      repository_update_events: false,
      alert_status: hook.alert_status,
      disabled_until: null,
      url_variables: [],
      created_at: hook.created_at,
    };
  };

  const error = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown) =>
    context.answer(req, res, 'error', status, body);

  const settings = (body: Record<string, unknown>, hook: GitLabWebHook | undefined): string | undefined => {
    const url = body.url ?? hook?.url;
    if (url === undefined) return 'url is missing';
    if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:/.test(url)) return 'url is invalid';
    for (const flag of [...GITLAB_HOOK_FLAGS, 'enable_ssl_verification']) {
      if (body[flag] !== undefined && typeof body[flag] !== 'boolean') return `${flag} is invalid`;
    }
    if (body.token !== undefined && typeof body.token !== 'string') return 'token is invalid';
    return undefined;
  };

  const route = async (
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    text: string,
  ): Promise<boolean> => {
    const match = /^\/api\/v4(\/(?:projects|groups)\/[^/]+)\/hooks(?:\/(\d+)(?:\/test\/([^/]+))?)?$/.exec(
      pathname,
    );
    if (match === null) return false;
    const [, owner, id, trigger] = match as unknown as [
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    let body: Record<string, unknown> = {};
    if (text.length > 0) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        error(req, res, 400, { error: 'body is invalid JSON' });
        return true;
      }
    }
    if (id === undefined) {
      if (req.method === 'GET') {
        const hooks = [...webHooks.values()].filter((hook) => hook.path.startsWith(`${owner}/hooks/`));
        context.answer(req, res, 'hooks', 200, hooks.map(view));
        return true;
      }
      if (req.method !== 'POST') return false;
      const problem = settings(body, undefined);
      if (problem !== undefined) {
        if (problem === 'url is missing') error(req, res, 400, { error: problem });
        else
          error(req, res, 422, {
            message: { [problem.split(' ')[0] as string]: [problem.replace(/^\S+ /, '')] },
          });
        return true;
      }
      const hookId = nextId++;
      const hook: GitLabWebHook = {
        id: hookId,
        path: `${owner}/hooks/${hookId}`,
        url: body.url as string,
        token: (body.token as string | undefined) ?? '',
        enable_ssl_verification: body.enable_ssl_verification !== false,
        alert_status: 'executable',
        // GitLab turns `push_events` on unless told otherwise.
        flags: Object.fromEntries(
          GITLAB_HOOK_FLAGS.map((flag) => [
            flag,
            (body[flag] as boolean | undefined) ?? flag === 'push_events',
          ]),
        ) as GitLabWebHook['flags'],
        created_at: new Date().toISOString(),
      };
      webHooks.set(hook.path, hook);
      context.track(hook.path, hook.token, hook.url);
      context.answer(req, res, 'create-hook', 201, view(hook));
      return true;
    }
    const hook = webHooks.get(`${owner}/hooks/${id}`);
    if (hook === undefined) {
      error(req, res, 404, { message: '404 Not found' });
      return true;
    }
    if (trigger !== undefined) {
      if (req.method !== 'POST') return false;
      const event = TEST_TRIGGERS[trigger];
      if (event === undefined) {
        error(req, res, 400, { error: 'trigger does not have a valid value' });
        return true;
      }
      await context.test(hook.path, event, {
        object_kind: 'push',
        event_name: 'push',
        before: '95790bf891e76fee5e1747ab589903a6a1f80f22',
        after: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
        ref: 'refs/heads/main',
        checkout_sha: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
        user_username: 'root',
        project_id: 42,
        project: { id: 42, path_with_namespace: owner.split('/')[2]?.replaceAll('%2F', '/') ?? 'acme/web' },
        commits: [],
        total_commits_count: 0,
      });
      context.answer(req, res, 'test', 201, { message: '201 Created' });
      return true;
    }
    if (req.method === 'GET') {
      context.answer(req, res, 'hook', 200, view(hook));
      return true;
    }
    if (req.method !== 'PUT') return false;
    const problem = settings(body, hook);
    if (problem !== undefined) {
      error(req, res, 422, {
        message: { [problem.split(' ')[0] as string]: [problem.replace(/^\S+ /, '')] },
      });
      return true;
    }
    if (typeof body.url === 'string') hook.url = body.url;
    if (typeof body.token === 'string') hook.token = body.token;
    if (typeof body.enable_ssl_verification === 'boolean')
      hook.enable_ssl_verification = body.enable_ssl_verification;
    for (const flag of GITLAB_HOOK_FLAGS)
      if (typeof body[flag] === 'boolean') hook.flags[flag] = body[flag] as boolean;
    context.track(hook.path, hook.token, hook.url);
    context.answer(req, res, 'update-hook', 200, view(hook));
    return true;
  };

  return { route, webHooks };
}
