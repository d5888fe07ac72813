// A local stand-in for GitHub's hook-delivery API (repository, organization and App hooks) on 127.0.0.1: it
// keeps each hook's delivery log (one item per attempt, newest first), lists it 100 at a time with cursor
// pagination through the `Link` header, answers one delivery with its request headers and payload, and on
// `POST .../attempts` delivers the payload again, signed as GitHub signs it, through `send` (the real ingest in
// the tests and the local stack), recording the new attempt with the status it got. Every answer it sends is
// kept in `responses`, so the tests validate each against GitHub's REST description. A query parameter outside
// the range that description declares (`per_page` an integer up to 100, `status` `success` or `failure`) is
// refused with a 400, the description's `bad_request`. Faults (an API that is down, a rate limit, a malformed
// answer, expired tokens) are switches.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sign } from '../lib/webhooks/index.js';
import { type GitHubHooksOperation, type GitHubWebHook, gitHubHooks } from './github-hooks.js';
import { type RecordedAnswer, recordingAnswer, type SendDelivery, serveStandIn } from './stand-in-server.js';

export type { SendDelivery };

/** One attempt, as GitHub's `hook-delivery` describes it (the list answers it without `request`/`response`). */
export interface StandInAttempt {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at?: string | null;
  /** The raw body sent (the payload as the API answers it is its parse). */
  body: string;
  /** The request headers sent, lower-case (the API answers them in GitHub's own casing). */
  headers: Record<string, string>;
}

/** One hook of the stand-in: the path its deliveries live under (`/repos/acme/web/hooks/1`, `/app/hook`). */
export interface StandInHook {
  path: string;
  /**
   * The id GitHub sends as `X-GitHub-Hook-ID`: a repository or organization hook's is the last segment of its
   * path; an App's one hook has a number of its own, which its path does not show.
   */
  id: string;
  /** The hook's secret: each (re)delivery is signed with it (none: sent unsigned). */
  secret: string;
  attempts: StandInAttempt[];
  /** Where it delivers, for a hook created through the hooks API (else the stand-in's target). */
  url?: string;
}

/** One answer the stand-in sent: what the tests validate against the API's description. */
export type StandInResponse = RecordedAnswer<'list' | 'get' | 'redeliver' | 'error' | GitHubHooksOperation>;

/** Options of {@link startGitHubDeliveries}. */
export interface GitHubDeliveriesOptions {
  /** Where deliveries and redeliveries go. */
  send: SendDelivery;
  /** Whether a bearer token is good (the tests check it against the local authorization server's keys). */
  accepts: (token: string) => boolean | Promise<boolean>;
  port?: number;
}

/** A running stand-in. */
export interface GitHubDeliveries {
  readonly url: string;
  readonly hooks: Map<string, StandInHook>;
  readonly responses: StandInResponse[];
  /** Switches: `down` answers 503; `rateLimitAfter` answers 403 with no requests left after that many more; `malformed` breaks list items. */
  faults: { down: boolean; rateLimitAfter: number | undefined; malformed: boolean };
  /** Redelivery requests received (the `POST .../attempts`). */
  readonly redeliveries: string[];
  /** The hooks created through the webhooks API (github-hooks.ts), by path. */
  readonly webHooks: Map<string, GitHubWebHook>;
  addHook(path: string, secret: string): StandInHook;
  /**
   * The forge delivers a new event: sent through `send` unless `statusCode` is given (the forge's record of
   * an attempt that happened elsewhere). Returns the attempt recorded.
   */
  deliver(
    hookPath: string,
    delivery: {
      event: string;
      payload: Record<string, unknown>;
      guid?: string;
      /** The status recorded without sending (the attempt never reached us, or got this answer elsewhere). */
      statusCode?: number;
      /** Sent, but recorded as timed out (status 0): our answer came after the forge stopped waiting. */
      answeredLate?: boolean;
      redelivery?: boolean;
      at?: number;
    },
  ): Promise<StandInAttempt>;
  /** Waits for the redeliveries in flight. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** `per_page`: "The number of results per page (max 100)", default 30 (@octokit/openapi). */
const PER_PAGE_MAX = 100;
/** `status`: `success` is a `status_code` in 200-399, `failure` in 400-599 (@octokit/openapi). */
const STATUS_RANGES: Record<string, [number, number]> = { success: [200, 399], failure: [400, 599] };
const DOC = 'https://docs.github.com/rest/webhooks/repo-deliveries';

function statusText(code: number): string {
  if (code === 0) return 'timed out';
  return code >= 200 && code < 300 ? 'OK' : `Invalid HTTP Response: ${code}`;
}

/** Headers as GitHub's delivery answer spells them (`X-GitHub-Hook-ID`, `X-Hub-Signature-256`, `User-Agent`). */
function githubCasing(headers: Record<string, string>): Record<string, string> {
  const spelled: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const words = name.split('-').map((word) => word.charAt(0).toUpperCase() + word.slice(1));
    const spelling = words.join('-').replace(/^X-Github-/, 'X-GitHub-');
    spelled[spelling.replace(/-Id$/, '-ID')] = value;
  }
  return spelled;
}

function listItem(attempt: StandInAttempt) {
  const { body: _body, headers: _headers, ...item } = attempt;
  return item;
}

/**
 * The list query as GitHub's description declares it (`per_page` an integer in 1..100, default 30; `status`
 * `success` or `failure`; `cursor` a string), or the message refusing the first parameter outside it.
 */
export function gitHubListQuery(
  params: URLSearchParams,
): { perPage: number; status: string | undefined; cursor: string | null } | { error: string } {
  const perPage = params.get('per_page') ?? '30';
  if (!/^\d+$/.test(perPage) || Number(perPage) < 1 || Number(perPage) > PER_PAGE_MAX) {
    return { error: `"per_page" must be an integer from 1 to ${PER_PAGE_MAX}` };
  }
  const status = params.get('status') ?? undefined;
  if (status !== undefined && !Object.hasOwn(STATUS_RANGES, status)) {
    return { error: '"status" must be one of "success", "failure"' };
  }
  return { perPage: Number(perPage), status, cursor: params.get('cursor') };
}

/** Starts the stand-in on 127.0.0.1. */
export async function startGitHubDeliveries(options: GitHubDeliveriesOptions): Promise<GitHubDeliveries> {
  const hooks = new Map<string, StandInHook>();
  const responses: StandInResponse[] = [];
  const redeliveries: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const faults: GitHubDeliveries['faults'] = { down: false, rateLimitAfter: undefined, malformed: false };
  let nextId = 1_000;
  // An App hook's id, as GitHub numbers them (far from the repository hooks' small ids).
  let appHookIds = 480_001;
  const newHook = (path: string, secret: string): StandInHook => {
    const last = path.split('/').at(-1) ?? '';
    return { path, id: /^\d+$/.test(last) ? last : String(appHookIds++), secret, attempts: [] };
  };

  const attemptOf = async (
    hook: StandInHook,
    input: {
      event: string;
      body: string;
      guid: string;
      redelivery: boolean;
      statusCode?: number;
      answeredLate?: boolean;
      at?: number;
    },
  ): Promise<StandInAttempt> => {
    const payload = JSON.parse(input.body) as {
      action?: unknown;
      installation?: { id?: number };
      repository?: { id?: number };
    };
    const started = Date.now();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/standin',
      'x-github-event': input.event,
      'x-github-delivery': input.guid,
      'x-github-hook-id': hook.id,
      ...(hook.secret === '' ? {} : { 'x-hub-signature-256': sign(hook.secret, input.body) }),
    };
    const answered =
      input.statusCode ??
      (await options.send({
        headers,
        body: input.body,
        ...(hook.url === undefined ? {} : { url: hook.url }),
      }));
    const statusCode = input.answeredLate === true ? 0 : answered;
    const attempt: StandInAttempt = {
      id: nextId++,
      guid: input.guid,
      delivered_at: new Date(input.at ?? started).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      redelivery: input.redelivery,
      duration: (Date.now() - started) / 1000,
      status: statusText(statusCode),
      status_code: statusCode,
      event: input.event,
      action: typeof payload.action === 'string' ? payload.action : null,
      installation_id: payload.installation?.id ?? null,
      repository_id: payload.repository?.id ?? null,
      throttled_at: null,
      body: input.body,
      headers,
    };
    hook.attempts.unshift(attempt);
    // Newest first, as GitHub lists them (an attempt dated in the past sorts where it belongs).
    hook.attempts.sort((a, b) => Date.parse(b.delivered_at) - Date.parse(a.delivered_at) || b.id - a.id);
    return attempt;
  };

  const answer = recordingAnswer(responses, {
    'content-type': 'application/json; charset=utf-8',
    'x-github-api-version-selected': '2022-11-28',
  });

  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const webHooks = gitHubHooks({
    base: () => `http://127.0.0.1:${port}`,
    answer: (req, res, operation, status, body) => answer(req, res, operation, status, body),
    track(path, secret, url) {
      const hook = hooks.get(path) ?? newHook(path, secret);
      hook.secret = secret;
      hook.url = url;
      hooks.set(path, hook);
    },
    ping(path, payload) {
      const hook = hooks.get(path) as StandInHook;
      track(
        attemptOf(hook, {
          event: 'ping',
          body: JSON.stringify(payload),
          guid: randomUUID(),
          redelivery: false,
        }),
      );
    },
    lastStatus: (path) => hooks.get(path)?.attempts[0]?.status_code,
  });

  const route = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const error = (status: number, message: string, headers: Record<string, string> = {}) =>
      answer(req, res, 'error', status, { message, documentation_url: DOC, status: String(status) }, headers);
    if (faults.down) return error(503, 'Service Unavailable');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !(await options.accepts(token))) return error(401, 'Bad credentials');
    if (faults.rateLimitAfter !== undefined) {
      if (faults.rateLimitAfter <= 0) {
        const reset = String(Math.floor(Date.now() / 1000) + 60);
        return error(403, 'API rate limit exceeded', {
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': reset,
        });
      }
      faults.rateLimitAfter -= 1;
    }
    if (webHooks.route(req, res, url.pathname, text)) return;
    const match = /^(.*)\/deliveries(?:\/(\d+)(\/attempts)?)?$/.exec(url.pathname);
    const hook = match === null ? undefined : hooks.get(match[1] as string);
    if (match === null || hook === undefined) return error(404, 'Not Found');
    const [, , id, attempts] = match;
    if (id === undefined && req.method === 'GET') {
      const query = gitHubListQuery(url.searchParams);
      if ('error' in query) return error(400, query.error);
      const { perPage, cursor } = query;
      const range = query.status === undefined ? undefined : STATUS_RANGES[query.status];
      const listed =
        range === undefined
          ? hook.attempts
          : hook.attempts.filter(
              (attempt) => attempt.status_code >= range[0] && attempt.status_code <= range[1],
            );
      const start = cursor === null ? 0 : listed.findIndex((attempt) => `v1_${attempt.id}` === cursor);
      if (start < 0) return error(422, 'Validation Failed');
      const page = listed.slice(start, start + perPage);
      const next = listed[start + perPage];
      const headers: Record<string, string> = {};
      if (next !== undefined) {
        const filter = query.status === undefined ? '' : `&status=${query.status}`;
        headers.link = `<http://127.0.0.1:${port}${url.pathname}?per_page=${perPage}${filter}&cursor=v1_${next.id}>; rel="next"`;
      }
      const items = page.map(listItem);
      if (faults.malformed) {
        // Items without their `guid`: an answer that breaks GitHub's description on purpose.
        const broken = items.map(({ guid: _guid, ...rest }) => rest);
        return answer(req, res, 'list', 200, broken, headers, 'malformed');
      }
      return answer(req, res, 'list', 200, items, headers);
    }
    const attempt = hook.attempts.find((candidate) => String(candidate.id) === id);
    if (attempt === undefined) return error(404, 'Not Found');
    if (attempts === undefined && req.method === 'GET') {
      return answer(req, res, 'get', 200, {
        ...listItem(attempt),
        url: `http://127.0.0.1:${port}${url.pathname}`,
        request: {
          headers: githubCasing(attempt.headers),
          payload: JSON.parse(attempt.body) as Record<string, unknown>,
        },
        response: { headers: {}, payload: null },
      });
    }
    if (attempts !== undefined && req.method === 'POST') {
      redeliveries.push(attempt.guid);
      const work = attemptOf(hook, {
        event: attempt.event,
        body: attempt.body,
        guid: attempt.guid,
        redelivery: true,
      });
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
      return answer(req, res, 'redeliver', 202, {});
    }
    return error(404, 'Not Found');
  };

  const server = await serveStandIn(route, options.port);
  const { port } = server;

  return {
    url: `http://127.0.0.1:${port}`,
    hooks,
    responses,
    faults,
    redeliveries,
    webHooks: webHooks.webHooks,
    addHook(path, secret) {
      const hook = newHook(path, secret);
      hooks.set(path, hook);
      return hook;
    },
    async deliver(hookPath, delivery) {
      const hook = hooks.get(hookPath);
      if (hook === undefined) throw new Error(`no hook ${hookPath}`);
      return attemptOf(hook, {
        event: delivery.event,
        body: JSON.stringify(delivery.payload),
        guid: delivery.guid ?? randomUUID(),
        redelivery: delivery.redelivery === true,
        ...(delivery.answeredLate === undefined ? {} : { answeredLate: delivery.answeredLate }),
        ...(delivery.statusCode === undefined ? {} : { statusCode: delivery.statusCode }),
        ...(delivery.at === undefined ? {} : { at: delivery.at }),
      });
    },
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close: () => server.close(),
  };
}
