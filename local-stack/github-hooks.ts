// GitHub's repository and organization webhooks API for the local stand-in (github-deliveries.ts serves it beside
// the hook deliveries): list, create, get and update a `web` hook, and ping it (`POST .../pings`, answered 204,
// then the `ping` event really sent, signed with the hook's secret, to the hook's URL, and logged in the hook's
// deliveries). Answers follow GitHub's REST description (`@octokit/openapi`: `hook`, `org-hook`, `validation-error`)
// and refuse what GitHub refuses: a hook without `config.url`, a name other than `web`, a content type other than
// `json` / `form`, a second hook on one URL (422 Validation Failed), an unknown hook (404).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A hook's settings as GitHub keeps them (the secret in clear here, `********` in every answer). */
export interface GitHubWebHook {
  id: number;
  /** `/repos/{owner}/{repo}/hooks/{id}` or `/orgs/{org}/hooks/{id}`. */
  path: string;
  active: boolean;
  events: string[];
  config: { url: string; content_type: string; insecure_ssl: string; secret?: string };
  created_at: string;
  updated_at: string;
}

/** What the hooks routes need of the deliveries stand-in. */
export interface GitHubHooksContext {
  /** The stand-in's base URL (`http://127.0.0.1:<port>`), for the answers' `url` fields. */
  base(): string;
  answer(
    req: IncomingMessage,
    res: ServerResponse,
    operation: GitHubHooksOperation,
    status: number,
    body: unknown,
  ): void;
  /** Makes the deliveries side keep a log for the hook (its secret and URL), or updates them. */
  track(path: string, secret: string, url: string): void;
  /** Sends the ping through the deliveries side (signed, logged as an attempt). */
  ping(path: string, payload: Record<string, unknown>): void;
  /** The last attempt's status of a hook, for `last_response`. */
  lastStatus(path: string): number | undefined;
}

/** The operations the hooks routes answer (recorded with each answer). */
export type GitHubHooksOperation =
  | 'hooks'
  | 'hook'
  | 'create-hook'
  | 'update-hook'
  | 'ping'
  | 'invalid'
  | 'error';

const DOC = 'https://docs.github.com/rest/repos/webhooks';
const CONTENT_TYPES = new Set(['json', 'form']);

function stamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The hooks API of one stand-in: `route` answers a request it serves and returns true, else false. */
export function gitHubHooks(context: GitHubHooksContext) {
  const webHooks = new Map<string, GitHubWebHook>();
  let nextId = 4_001;

  const view = (hook: GitHubWebHook) => {
    const url = `${context.base()}${hook.path}`;
    const org = hook.path.startsWith('/orgs/');
    const { secret, ...config } = hook.config;
    const status = context.lastStatus(hook.path);
    return {
      type: org ? 'Organization' : 'Repository',
      id: hook.id,
      name: 'web',
      active: hook.active,
      events: hook.events,
      config: { ...config, ...(secret === undefined || secret === '' ? {} : { secret: '********' }) },
      updated_at: hook.updated_at,
      created_at: hook.created_at,
      url,
      ping_url: `${url}/pings`,
      deliveries_url: `${url}/deliveries`,
      ...(org
        ? {}
        : {
            test_url: `${url}/test`,
            last_response:
              status === undefined
                ? { code: null, status: 'unused', message: null }
                : {
                    code: status,
                    status: status >= 200 && status < 300 ? 'active' : 'failed',
                    message: null,
                  },
          }),
    };
  };

  const invalid = (req: IncomingMessage, res: ServerResponse, message: string, field?: string) =>
    context.answer(req, res, 'invalid', 422, {
      message: 'Validation Failed',
      errors: [{ resource: 'Hook', code: 'custom', ...(field === undefined ? {} : { field }), message }],
      documentation_url: DOC,
    });

  /** The config of a request, checked; a message when GitHub would refuse it. */
  const configOf = (
    value: unknown,
    current: GitHubWebHook['config'] | undefined,
  ): GitHubWebHook['config'] | string => {
    if (value === undefined && current !== undefined) return current;
    if (value === null || typeof value !== 'object') return 'Config must have url';
    const given = value as Record<string, unknown>;
    const url = given.url ?? current?.url;
    if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:/.test(url))
      return 'Config must have a valid url';
    const contentType = given.content_type ?? current?.content_type ?? 'form';
    if (typeof contentType !== 'string' || !CONTENT_TYPES.has(contentType))
      return 'Config content_type must be json or form';
    const insecure = given.insecure_ssl ?? current?.insecure_ssl ?? '0';
    if (!['0', '1', 0, 1].includes(insecure as string)) return 'Config insecure_ssl must be "0" or "1"';
    const secret = given.secret ?? current?.secret;
    if (secret !== undefined && typeof secret !== 'string') return 'Config secret must be a string';
    return {
      url,
      content_type: contentType,
      insecure_ssl: String(insecure),
      ...(secret === undefined ? {} : { secret }),
    };
  };

  const eventsOf = (value: unknown): string[] | undefined =>
    Array.isArray(value) && value.every((event) => typeof event === 'string')
      ? [...new Set(value as string[])]
      : undefined;

  const route = (req: IncomingMessage, res: ServerResponse, pathname: string, text: string): boolean => {
    const match = /^(\/repos\/[^/]+\/[^/]+|\/orgs\/[^/]+)\/hooks(?:\/(\d+)(\/pings)?)?$/.exec(pathname);
    if (match === null) return false;
    const [, owner, id, pings] = match as unknown as [string, string, string | undefined, string | undefined];
    let body: Record<string, unknown> = {};
    if (text.length > 0) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        context.answer(req, res, 'error', 400, { message: 'Problems parsing JSON', documentation_url: DOC });
        return true;
      }
    }
    if (id === undefined) {
      const hooks = [...webHooks.values()].filter((hook) => hook.path.startsWith(`${owner}/hooks/`));
      if (req.method === 'GET') {
        context.answer(req, res, 'hooks', 200, hooks.map(view));
        return true;
      }
      if (req.method !== 'POST') return false;
      if (body.name !== undefined && body.name !== 'web') {
        invalid(req, res, 'Name must be "web"', 'name');
        return true;
      }
      const config = configOf(body.config, undefined);
      if (typeof config === 'string') {
        invalid(req, res, config, 'config');
        return true;
      }
      const events = body.events === undefined ? ['push'] : eventsOf(body.events);
      if (events === undefined) {
        invalid(req, res, 'Events must be a list of event names', 'events');
        return true;
      }
      if (hooks.some((hook) => hook.config.url === config.url)) {
        invalid(
          req,
          res,
          `Hook already exists on this ${owner.startsWith('/orgs/') ? 'organization' : 'repository'}`,
        );
        return true;
      }
      const hookId = nextId++;
      const now = stamp();
      const hook: GitHubWebHook = {
        id: hookId,
        path: `${owner}/hooks/${hookId}`,
        active: body.active !== false,
        events,
        config,
        created_at: now,
        updated_at: now,
      };
      webHooks.set(hook.path, hook);
      context.track(hook.path, config.secret ?? '', config.url);
      context.answer(req, res, 'create-hook', 201, view(hook));
      return true;
    }
    const hook = webHooks.get(`${owner}/hooks/${id}`);
    if (hook === undefined) return false;
    if (pings !== undefined) {
      if (req.method !== 'POST') return false;
      const { secret: _secret, ...config } = hook.config;
      context.ping(hook.path, {
        zen: 'Design for failure.',
        hook_id: hook.id,
        hook: { ...view(hook), config },
        ...(owner.startsWith('/orgs/')
          ? { organization: { login: owner.split('/')[2] } }
          : { repository: { id: 1_296_269, full_name: owner.replace('/repos/', '') } }),
        sender: { login: 'octocat', id: 1 },
      });
      context.answer(req, res, 'ping', 204, undefined);
      return true;
    }
    if (req.method === 'GET') {
      context.answer(req, res, 'hook', 200, view(hook));
      return true;
    }
    if (req.method !== 'PATCH') return false;
    const config = configOf(body.config, hook.config);
    if (typeof config === 'string') {
      invalid(req, res, config, 'config');
      return true;
    }
    const replaced = body.events === undefined ? hook.events : eventsOf(body.events);
    const added = body.add_events === undefined ? [] : eventsOf(body.add_events);
    const removed = body.remove_events === undefined ? [] : eventsOf(body.remove_events);
    if (replaced === undefined || added === undefined || removed === undefined) {
      invalid(req, res, 'Events must be a list of event names', 'events');
      return true;
    }
    hook.events = [...new Set([...replaced, ...added])].filter((event) => !removed.includes(event));
    hook.config = config;
    if (typeof body.active === 'boolean') hook.active = body.active;
    hook.updated_at = stamp();
    context.track(hook.path, config.secret ?? '', config.url);
    context.answer(req, res, 'update-hook', 200, view(hook));
    return true;
  };

  return {
    route,
    /** The hooks created through the API, by path: tests plant misconfigurations here. */
    webHooks,
  };
}
