/**
 * GitLab's webhook-event API for one project or group hook: list the hook's events of the last 7 days (offset
 * pagination: `page`/`per_page`, the next page from `x-next-page`, else the `Link` header), and resend one
 * (`POST .../events/:hook_event_id/resend`). GitLab has no call for one event: each listed event carries its
 * `request_headers` and `request_data`, so the payload of a delivery too large for the ingest is kept from the
 * list. Every listed event is checked against GitLab's documented fields before it is used, so nothing is
 * resent on a guess.
 */
import { resolvePreset } from '../../webhooks/index.js';
import { ForgeApiError, ForgeApiErrorCodes } from '../errors.js';
import { isDeliveryId } from '../rules.js';
import type { SourceHook } from '../stage/source-hook.js';
import { type ForgeHttpOptions, sendAuthorized } from './forge-http.js';
import { nextLink } from './github.js';
import type { DeliveryLogApi, ForgeDelivery, ForgePayload, HookAuth } from './types.js';

/** The most events GitLab lists per page: `per_page` is declared `values: 1..20` (lib/api/hooks/events.rb), and
 * GitLab answers 400 to anything above. */
const MAX_PER_PAGE = 20;
/** The status our side answered that keeps the event's payload for the reconciler (Lambda's 6 MB limit). */
const TOO_LARGE = 413;
/** The delivery-id headers the ingest reads, in its order: `Idempotency-Key` (the same on a resend) first. */
const DELIVERY_HEADERS = resolvePreset('gitlab').deliveryHeaders;

/** The path of a hook's events, under the API base URL (`https://gitlab.com/api/v4`). */
export function gitLabEventsPath(hook: SourceHook): string {
  // A project or group path (`group/sub/project`) is one URL-encoded segment.
  const e = encodeURIComponent;
  if (hook.kind === 'project') return `/projects/${e(hook.project ?? '')}/hooks/${hook.id}/events`;
  if (hook.kind === 'group') return `/groups/${e(hook.group ?? '')}/hooks/${hook.id}/events`;
  throw new TypeError(`hook kind "${hook.kind}" is not a gitlab hook`);
}

function malformed(what: string, detail: string): ForgeApiError {
  return new ForgeApiError(ForgeApiErrorCodes.malformed, `${what} answered ${detail}`);
}

/**
 * GitLab's `response_status`, a string: the HTTP status our side answered, or `internal error` when GitLab got
 * no answer (a timeout, no connection): 0, as GitHub records it. `undefined` for anything else.
 */
export function gitLabStatusCode(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (value === 'internal error') return 0;
  return /^[1-5]\d\d$/.test(value) ? Number(value) : undefined;
}

/** A listed event, checked, with its headers (lowercase names) and payload. */
export interface GitLabEvent {
  delivery: ForgeDelivery;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
}

/** One listed webhook event, checked: a missing or mistyped field the reconciler needs is a malformed answer. */
export function parseGitLabEvent(value: unknown, what: string): GitLabEvent {
  const item = value as Record<string, unknown> | null;
  if (item === null || typeof item !== 'object' || Array.isArray(item))
    throw malformed(what, 'an event that is not an object');
  const { id, request_headers: requestHeaders, request_data: data, response_status: status } = item;
  if (!Number.isSafeInteger(id) || (id as number) <= 0)
    throw malformed(what, 'an event without an integer "id"');
  if (requestHeaders === null || typeof requestHeaders !== 'object' || Array.isArray(requestHeaders)) {
    throw malformed(what, 'an event without a "request_headers" object');
  }
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(requestHeaders as Record<string, unknown>)) {
    if (typeof header === 'string') headers[name.toLowerCase()] = header;
  }
  const deliveryId = DELIVERY_HEADERS.map((name) => headers[name]).find((header) => header !== undefined);
  if (!isDeliveryId(deliveryId)) {
    throw malformed(what, 'an event without an "Idempotency-Key" or "X-Gitlab-Event-UUID" request header');
  }
  const event = headers['x-gitlab-event'];
  if (event === undefined || event === '')
    throw malformed(what, 'an event without an "X-Gitlab-Event" request header');
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw malformed(what, 'an event without a "request_data" object');
  }
  const statusCode = gitLabStatusCode(status);
  if (statusCode === undefined) throw malformed(what, 'an event without a "response_status"');
  const at = typeof item.created_at === 'string' ? Date.parse(item.created_at) : Number.NaN;
  if (Number.isNaN(at)) throw malformed(what, 'an event without a "created_at" date');
  return {
    // GitLab's log does not say whether an event was itself a resend.
    delivery: { attemptId: id as number, deliveryId, at, statusCode, event, redelivery: false },
    headers,
    payload: data as Record<string, unknown>,
  };
}

/** Options of {@link gitLabDeliveryLog}. */
export interface GitLabDeliveryLogOptions extends ForgeHttpOptions {
  hook: SourceHook;
  auth: HookAuth;
  /** Events per page, 1 to 20 (GitLab refuses more). Default 20. */
  perPage?: number | undefined;
}

/**
 * The delivery log of one GitLab project or group hook. Each call carries the hook's token (`Authorization:
 * Bearer`); a 401 renews it once and tries again. The list is not filtered by `status`: GitLab's categories
 * leave out an event it got no answer for (`internal error`), and a later successful attempt must be seen.
 */
export function gitLabDeliveryLog(options: GitLabDeliveryLogOptions): DeliveryLogApi {
  const { hook, auth } = options;
  const base = `${hook.api}${gitLabEventsPath(hook)}`;
  const origin = new URL(hook.api).origin;
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, Math.floor(options.perPage ?? MAX_PER_PAGE)));
  // The payloads of events our side answered 413, from the last list: GitLab has no call for one event.
  const tooLarge = new Map<number, ForgePayload>();

  const nextPage = (headers: Headers, page: number, what: string): string | undefined => {
    const next = headers.get('x-next-page');
    if (next !== null) {
      if (next.trim() === '') return undefined;
      if (!/^\d+$/.test(next.trim()) || Number(next) <= page) throw malformed(what, 'a bad "x-next-page"');
      return `${base}?per_page=${perPage}&page=${Number(next)}`;
    }
    // Past 10,000 events GitLab may leave out its page headers; the `Link` header still names the next page.
    const link = nextLink(headers.get('link'));
    if (link !== undefined && (!URL.canParse(link) || new URL(link).origin !== origin)) {
      throw malformed(what, 'a "link" to another origin');
    }
    return link;
  };

  return {
    forge: 'gitlab',
    async *list(since, maxPages) {
      tooLarge.clear();
      let url: string | undefined = `${base}?per_page=${perPage}&page=1`;
      for (let page = 1; url !== undefined && page <= maxPages; page += 1) {
        const what = `GET ${new URL(url).pathname}`;
        const answer = await sendAuthorized(auth, { method: 'GET', url }, options);
        if (!Array.isArray(answer.json))
          throw malformed(what, `${answer.status} with a body that is not an array`);
        const events = answer.json.map((item) => parseGitLabEvent(item, what));
        for (const { delivery, headers, payload } of events) {
          if (delivery.statusCode === TOO_LARGE) tooLarge.set(delivery.attemptId, { headers, payload });
        }
        const items = events.map((event) => event.delivery);
        yield items;
        if (items.length === 0 || items.some((item) => item.at < since)) return;
        url = nextPage(answer.headers, page, what);
      }
    },
    async redeliver(attempt) {
      await sendAuthorized(auth, { method: 'POST', url: `${base}/${attempt.attemptId}/resend` }, options);
    },
    async fetchPayload(attempt): Promise<ForgePayload> {
      const kept = tooLarge.get(attempt.attemptId);
      if (kept === undefined) {
        throw new ForgeApiError(
          ForgeApiErrorCodes.malformed,
          `event ${attempt.attemptId} of ${new URL(base).pathname} has no "request_data" from the last list`,
        );
      }
      return kept;
    },
  };
}
