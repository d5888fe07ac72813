// A local stand-in for GitLab's webhook-event API (project and group hooks) on 127.0.0.1, under `/api/v4`: it
// keeps each hook's events (one per attempt, newest first, the last 7 days listed), lists them with GitLab's
// offset pagination (`page`, `per_page`, the `x-*-page` headers and `Link`) and its `status` filter, and on
// `POST .../events/:id/resend` sends the event again at once, as GitLab does (same `Idempotency-Key`, a new
// `X-Gitlab-Event-UUID`), recording the new event with the status it got. Deliveries go through `send` (the
// real ingest in the tests and the local stack) with the hook's secret in `X-Gitlab-Token`. Every answer it
// sends is kept in `responses`, so the tests validate each against GitLab's documented fields. A query parameter
// outside its declared range is refused as GitLab's API refuses it (lib/api/hooks/events.rb: `per_page` 1..20,
// `status` a status code or a category, `page` an integer): 400 `{"error":"<name> does not have a valid value"}`.
// Faults (an API that is down, a rate limit, a malformed answer) are switches.
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { type GitLabHooksOperation, type GitLabWebHook, gitLabHooks } from './gitlab-hooks.js';
import { type RecordedAnswer, recordingAnswer, type SendDelivery, serveStandIn } from './stand-in-server.js';

/** One event as GitLab's `GET .../hooks/:hook_id/events` lists it. */
export interface GitLabStandInEvent {
  id: number;
  url: string;
  trigger: string;
  request_headers: Record<string, string>;
  request_data: Record<string, unknown>;
  response_headers: Record<string, string>;
  response_body: string;
  execution_duration: number;
  /** The HTTP status as a string, or `internal error` when GitLab got no answer. */
  response_status: string;
  created_at: string;
}

/** One hook: its path under `/api/v4` (`/projects/acme%2Fweb/hooks/5`, `/groups/7/hooks/3`). */
export interface GitLabStandInHook {
  path: string;
  /** The hook's secret token, sent in `X-Gitlab-Token` (and shown `[REDACTED]` in the log). */
  secret: string;
  /** Where the hook delivers (the event's `url`). */
  url: string;
  readonly uuid: string;
  events: GitLabStandInEvent[];
  /** Set for a hook created through the hooks API (gitlab-hooks.ts): it delivers to its own `url`. */
  target?: string;
}

/** One answer the stand-in sent: what the tests validate against GitLab's documented fields. */
export type GitLabStandInResponse = RecordedAnswer<'list' | 'resend' | 'error' | GitLabHooksOperation>;

/** Options of {@link startGitLabEvents}. */
export interface GitLabEventsOptions {
  send: SendDelivery;
  /** Whether a token (`Authorization: Bearer` or `PRIVATE-TOKEN`) is good. */
  accepts: (token: string) => boolean | Promise<boolean>;
  port?: number;
}

/** A running stand-in. */
export interface GitLabEvents {
  /** The API base URL a hook's `api` names (`http://127.0.0.1:<port>/api/v4`). */
  readonly api: string;
  readonly hooks: Map<string, GitLabStandInHook>;
  /** The hooks created through the webhooks API (gitlab-hooks.ts), by path. */
  readonly webHooks: Map<string, GitLabWebHook>;
  readonly responses: GitLabStandInResponse[];
  /** `down` answers 503; `rateLimitAfter` answers 429 with `retry-after` after that many more requests; `malformed` drops `request_headers` from listed events. */
  faults: { down: boolean; rateLimitAfter: number | undefined; malformed: boolean };
  /** The `Idempotency-Key` of each resend asked. */
  readonly resends: string[];
  addHook(path: string, secret: string, url?: string): GitLabStandInHook;
  /** GitLab delivers a new event: sent through `send` unless `status` is given (recorded without sending). */
  deliver(
    hookPath: string,
    delivery: {
      event: string;
      payload: Record<string, unknown>;
      /** The `Idempotency-Key`; a new one by default. */
      key?: string;
      /** Recorded without sending: the status our side answered elsewhere, or `internal error`. */
      status?: string;
      /** Sent, but recorded `internal error`: our answer came after GitLab stopped waiting. */
      answeredLate?: boolean;
      at?: number;
    },
  ): Promise<GitLabStandInEvent>;
  close(): Promise<void>;
}

/** GitLab's `per_page` for hook events: `values: 1..20`, default 20 (lib/api/hooks/events.rb). */
const PER_PAGE_MAX = 20;
const WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
const TRIGGERS: Record<string, string> = {
  'Push Hook': 'push_hooks',
  'Tag Push Hook': 'tag_push_hooks',
  'Issue Hook': 'issue_hooks',
  'Note Hook': 'note_hooks',
  'Merge Request Hook': 'merge_request_hooks',
  'Pipeline Hook': 'pipeline_hooks',
  'Job Hook': 'job_hooks',
  'Release Hook': 'release_hooks',
};
const STATUS_CATEGORIES: Record<string, [number, number]> = {
  successful: [200, 299],
  client_failure: [400, 499],
  server_failure: [500, 599],
};

/** Whether an event's status matches one `status` filter value (a status code or a category). */
function matchesStatus(event: GitLabStandInEvent, filter: string): boolean {
  const range = STATUS_CATEGORIES[filter];
  if (range === undefined) return event.response_status === filter;
  const code = Number(event.response_status);
  return code >= range[0] && code <= range[1];
}

/**
 * The list query as GitLab's parameter declarations read it (Grape: `status` an array of known status codes or
 * categories, comma-separated too; `per_page` an integer in 1..20; `page` an integer), or the message of the
 * first parameter it refuses, in GitLab's words. Parameters GitLab does not declare are ignored, as Grape does.
 */
export function gitLabListQuery(
  params: URLSearchParams,
): { status: string[]; perPage: number; page: number } | { error: string } {
  const integer = (name: string, fallback: number): number | { error: string } => {
    const value = params.get(name);
    if (value === null) return fallback;
    if (!/^[+-]?\d+$/.test(value.trim())) return { error: `${name} is invalid` };
    return Number(value);
  };
  const status = [...params.getAll('status'), ...params.getAll('status[]')].flatMap((value) =>
    value.split(','),
  );
  if (
    status.some((value) => !Object.hasOwn(STATUS_CATEGORIES, value) && !Object.hasOwn(STATUS_CODES, value))
  ) {
    return { error: 'status does not have a valid value' };
  }
  const perPage = integer('per_page', 20);
  if (typeof perPage !== 'number') return perPage;
  if (perPage < 1 || perPage > PER_PAGE_MAX) return { error: 'per_page does not have a valid value' };
  const page = integer('page', 1);
  if (typeof page !== 'number') return page;
  // GitLab's offset pagination reads a page below 1 as the first.
  return { status, perPage, page: Math.max(1, page) };
}

/** Starts the stand-in on 127.0.0.1. */
export async function startGitLabEvents(options: GitLabEventsOptions): Promise<GitLabEvents> {
  const hooks = new Map<string, GitLabStandInHook>();
  const responses: GitLabStandInResponse[] = [];
  const resends: string[] = [];
  const faults: GitLabEvents['faults'] = { down: false, rateLimitAfter: undefined, malformed: false };
  let nextId = 5_000;

  const attemptOf = async (
    hook: GitLabStandInHook,
    input: {
      event: string;
      data: Record<string, unknown>;
      key: string;
      status?: string;
      late?: boolean;
      at?: number;
    },
  ): Promise<GitLabStandInEvent> => {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'GitLab/17.6.0-standin',
      'Idempotency-Key': input.key,
      'X-Gitlab-Event': input.event,
      'X-Gitlab-Webhook-UUID': hook.uuid,
      'X-Gitlab-Instance': 'http://127.0.0.1',
      // Per request, not per event: a resend carries a new one (the Idempotency-Key stays).
      'X-Gitlab-Event-UUID': randomUUID(),
    };
    const started = Date.now();
    const answered =
      input.status === undefined
        ? await options.send({
            headers: Object.fromEntries(
              Object.entries({
                ...headers,
                ...(hook.secret === '' ? {} : { 'X-Gitlab-Token': hook.secret }),
              }).map(([k, v]) => [k.toLowerCase(), v]),
            ),
            body: JSON.stringify(input.data),
            ...(hook.target === undefined ? {} : { url: hook.target }),
          })
        : undefined;
    const status =
      input.status ?? (input.late === true || answered === 0 ? 'internal error' : String(answered));
    const event: GitLabStandInEvent = {
      id: nextId++,
      url: hook.url,
      trigger: TRIGGERS[input.event] ?? 'push_hooks',
      request_headers: { ...headers, ...(hook.secret === '' ? {} : { 'X-Gitlab-Token': '[REDACTED]' }) },
      request_data: input.data,
      response_headers: status === 'internal error' ? {} : { 'Content-Type': 'application/json' },
      response_body: status === 'internal error' ? '' : '{}',
      execution_duration: (Date.now() - started) / 1000,
      response_status: status,
      created_at: new Date(input.at ?? started).toISOString(),
    };
    hook.events.push(event);
    // Newest first, as GitLab lists them.
    hook.events.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id);
    return event;
  };

  const answer = recordingAnswer(responses, { 'content-type': 'application/json' });

  const webHooks = gitLabHooks({
    answer: (req, res, operation, status, body) => answer(req, res, operation, status, body),
    track(path, token, url) {
      const hook = hooks.get(path) ?? { path, secret: token, url, uuid: randomUUID(), events: [] };
      hook.secret = token;
      hook.url = url;
      hook.target = url;
      hooks.set(path, hook);
    },
    async test(path, event, data) {
      await attemptOf(hooks.get(path) as GitLabStandInHook, { event, data, key: randomUUID() });
    },
  });

  const route = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const error = (status: number, message: string, headers: Record<string, string> = {}) =>
      answer(req, res, 'error', status, { message }, headers);
    if (faults.down) return error(503, '503 Service Unavailable');
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (req.headers['private-token'] as string | undefined);
    if (token === undefined || !(await options.accepts(token))) return error(401, '401 Unauthorized');
    if (faults.rateLimitAfter !== undefined) {
      if (faults.rateLimitAfter <= 0) {
        return answer(
          req,
          res,
          'error',
          429,
          { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
          { 'retry-after': '60' },
        );
      }
      faults.rateLimitAfter -= 1;
    }
    if (await webHooks.route(req, res, url.pathname, text)) return;
    const match = /^\/api\/v4(\/(?:projects|groups)\/[^/]+\/hooks\/\d+)\/events(?:\/(\d+)\/resend)?$/.exec(
      url.pathname,
    );
    const listing = match !== null && match[2] === undefined && req.method === 'GET';
    // Grape checks the declared parameters before the endpoint looks the hook up.
    const query = listing ? gitLabListQuery(url.searchParams) : undefined;
    if (query !== undefined && 'error' in query)
      return answer(req, res, 'error', 400, { error: query.error });
    const hook = match === null ? undefined : hooks.get(match[1] as string);
    if (match === null || hook === undefined) return error(404, '404 Not Found');
    const eventId = match[2];
    if (query !== undefined) {
      const { status: filters, perPage, page } = query;
      const since = Date.now() - WINDOW_MS;
      const listed = hook.events.filter(
        (event) =>
          Date.parse(event.created_at) >= since &&
          (filters.length === 0 || filters.some((filter) => matchesStatus(event, filter))),
      );
      const pages = Math.max(1, Math.ceil(listed.length / perPage));
      const link = (n: number, rel: string) => {
        const target = new URL(url.pathname, `http://127.0.0.1:${port}`);
        for (const filter of filters) target.searchParams.append('status', filter);
        target.searchParams.set('page', String(n));
        target.searchParams.set('per_page', String(perPage));
        return `<${target.href}>; rel="${rel}"`;
      };
      const links = [
        ...(page > 1 ? [link(page - 1, 'prev')] : []),
        ...(page < pages ? [link(page + 1, 'next')] : []),
        link(1, 'first'),
        link(pages, 'last'),
      ];
      const headers = {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-next-page': page < pages ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
        'x-total': String(listed.length),
        'x-total-pages': String(pages),
        link: links.join(', '),
      };
      const items = listed.slice((page - 1) * perPage, page * perPage);
      if (faults.malformed) {
        // Events without their request headers: an answer that breaks GitLab's documented fields on purpose.
        const broken = items.map(({ request_headers: _headers, ...rest }) => rest);
        return answer(req, res, 'list', 200, broken, headers, 'malformed');
      }
      return answer(req, res, 'list', 200, items, headers);
    }
    const event = hook.events.find((candidate) => String(candidate.id) === eventId);
    if (event === undefined) return error(404, '404 Not found');
    if (req.method === 'POST') {
      const key = event.request_headers['Idempotency-Key'] as string;
      resends.push(key);
      const again = await attemptOf(hook, {
        event: event.request_headers['X-Gitlab-Event'] as string,
        data: event.request_data,
        key,
      });
      const code = Number(again.response_status);
      return answer(req, res, 'resend', 201, {
        response_status: Number.isNaN(code) ? again.response_status : code,
      });
    }
    return error(405, '405 Method Not Allowed');
  };

  const server = await serveStandIn(route, options.port);
  const { port } = server;

  return {
    api: `http://127.0.0.1:${port}/api/v4`,
    hooks,
    responses,
    faults,
    resends,
    webHooks: webHooks.webHooks,
    addHook(path, secret, url = 'http://127.0.0.1/webhooks') {
      const hook: GitLabStandInHook = { path, secret, url, uuid: randomUUID(), events: [] };
      hooks.set(path, hook);
      return hook;
    },
    async deliver(hookPath, delivery) {
      const hook = hooks.get(hookPath);
      if (hook === undefined) throw new Error(`no hook ${hookPath}`);
      return attemptOf(hook, {
        event: delivery.event,
        data: delivery.payload,
        key: delivery.key ?? randomUUID(),
        ...(delivery.status === undefined ? {} : { status: delivery.status }),
        ...(delivery.answeredLate === undefined ? {} : { late: delivery.answeredLate }),
        ...(delivery.at === undefined ? {} : { at: delivery.at }),
      });
    },
    close: () => server.close(),
  };
}
