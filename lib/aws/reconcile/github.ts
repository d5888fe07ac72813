/**
 * GitHub's hook-delivery API for one repository, organization or App hook: list (cursor pagination through the
 * `Link` header), get one (its request headers and payload), and redeliver (`POST .../attempts`). Request
 * building is pure; every answer is checked against the fields GitHub's REST description requires before it is
 * used, so nothing is redelivered on a guess.
 */

import { ForgeApiError, ForgeApiErrorCodes } from '../errors.js';
import { isDeliveryId } from '../rules.js';
import type { SourceHook } from '../stage/source-hook.js';
import { type ForgeAnswer, type ForgeHttpOptions, sendAuthorized } from './forge-http.js';
import type { DeliveryLogApi, ForgeDelivery, ForgePayload, HookAuth } from './types.js';

const GITHUB_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
/** The header naming the hook a delivery came from. */
const HOOK_HEADER = 'x-github-hook-id';
/** The most attempts GitHub lists per page. */
const PER_PAGE = 100;

/** The path of a hook's deliveries, under the API base URL. */
export function gitHubDeliveriesPath(hook: SourceHook): string {
  const e = encodeURIComponent;
  if (hook.kind === 'repo')
    return `/repos/${e(hook.owner ?? '')}/${e(hook.repo ?? '')}/hooks/${hook.id}/deliveries`;
  if (hook.kind === 'org') return `/orgs/${e(hook.org ?? '')}/hooks/${hook.id}/deliveries`;
  if (hook.kind === 'app') return '/app/hook/deliveries';
  throw new TypeError(`hook kind "${hook.kind}" is not a github hook`);
}

/** The `rel="next"` URL of a `Link` header, or `undefined` on the last page. */
export function nextLink(link: string | null): string | undefined {
  if (link === null) return undefined;
  for (const part of link.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match !== null && /(?:^|;)\s*rel="?next"?\s*(?:;|$)/.test(match[2] as string)) return match[1];
  }
  return undefined;
}

function malformed(what: string, detail: string): ForgeApiError {
  return new ForgeApiError(ForgeApiErrorCodes.malformed, `${what} answered ${detail}`);
}

/** One `hook-delivery-item`, checked: a missing or mistyped required field is a malformed answer. */
export function parseGitHubDelivery(value: unknown, what: string): ForgeDelivery {
  const item = value as Record<string, unknown> | null;
  if (item === null || typeof item !== 'object' || Array.isArray(item))
    throw malformed(what, 'an item that is not an object');
  const { id, guid, delivered_at: deliveredAt, status_code: statusCode, redelivery, event, action } = item;
  const at = typeof deliveredAt === 'string' ? Date.parse(deliveredAt) : Number.NaN;
  if (!Number.isSafeInteger(id) || (id as number) <= 0)
    throw malformed(what, 'an item without an integer "id"');
  if (!isDeliveryId(guid)) throw malformed(what, 'an item without a "guid"');
  if (Number.isNaN(at)) throw malformed(what, 'an item without a "delivered_at" date');
  if (!Number.isSafeInteger(statusCode) || (statusCode as number) < 0) {
    throw malformed(what, 'an item without an integer "status_code"');
  }
  if (typeof redelivery !== 'boolean') throw malformed(what, 'an item without a boolean "redelivery"');
  if (typeof event !== 'string') throw malformed(what, 'an item without an "event"');
  if (action !== null && action !== undefined && typeof action !== 'string') {
    throw malformed(what, 'an item whose "action" is not a string');
  }
  return {
    attemptId: id as number,
    deliveryId: guid,
    at,
    statusCode: statusCode as number,
    event,
    ...(typeof action === 'string' ? { action } : {}),
    redelivery,
  };
}

/** Options of {@link gitHubDeliveryLog}. */
export interface GitHubDeliveryLogOptions extends ForgeHttpOptions {
  hook: SourceHook;
  auth: HookAuth;
}

/**
 * The delivery log of one GitHub hook. Each call carries the hook's token; a 401 renews it once and tries
 * again. The next page is the `Link` header's, and only on the API's own origin (the token goes nowhere else).
 */
export function gitHubDeliveryLog(options: GitHubDeliveryLogOptions): DeliveryLogApi {
  const { hook, auth } = options;
  const base = `${hook.api}${gitHubDeliveriesPath(hook)}`;
  const origin = new URL(hook.api).origin;

  const call = (method: 'GET' | 'POST', url: string): Promise<ForgeAnswer> =>
    sendAuthorized(auth, { method, url, headers: GITHUB_HEADERS }, options);

  const api: DeliveryLogApi = {
    forge: 'github',
    async *list(since, maxPages) {
      let url: string | undefined = `${base}?per_page=${PER_PAGE}`;
      for (let page = 0; url !== undefined && page < maxPages; page += 1) {
        const what = `GET ${new URL(url).pathname}`;
        const answer = await call('GET', url);
        if (!Array.isArray(answer.json))
          throw malformed(what, `${answer.status} with a body that is not an array`);
        const items = answer.json.map((item) => parseGitHubDelivery(item, what));
        yield items;
        if (items.length === 0 || items.some((item) => item.at < since)) return;
        const next = nextLink(answer.headers.get('link'));
        if (next !== undefined && (!URL.canParse(next) || new URL(next).origin !== origin)) {
          throw malformed(what, 'a "link" to another origin');
        }
        url = next;
      }
    },
    async redeliver(attempt) {
      await call('POST', `${base}/${attempt.attemptId}/attempts`);
    },
    async fetchPayload(attempt): Promise<ForgePayload> {
      const url = `${base}/${attempt.attemptId}`;
      const what = `GET ${new URL(url).pathname}`;
      const answer = await call('GET', url);
      const fetched = parseGitHubDelivery(answer.json, what);
      // The answer must be the attempt that was listed: the payload is published under the listed id.
      if (
        fetched.attemptId !== attempt.attemptId ||
        fetched.deliveryId !== attempt.deliveryId ||
        fetched.event !== attempt.event
      ) {
        throw malformed(what, `${answer.status} with another delivery's "id", "guid" or "event"`);
      }
      const request = (answer.json as { request?: { headers?: unknown; payload?: unknown } } | null)?.request;
      const payload = request?.payload;
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
        throw malformed(what, `${answer.status} without a "request.payload" object`);
      }
      const headers: Record<string, string> = {};
      if (request?.headers !== null && typeof request?.headers === 'object') {
        for (const [name, value] of Object.entries(request.headers as Record<string, unknown>)) {
          if (typeof value === 'string') headers[name.toLowerCase()] = value;
        }
      }
      return { headers, payload };
    },
  };
  if (hook.kind !== 'app') return api;
  // An App's hook has an id GitHub sends as X-GitHub-Hook-ID but its configuration does not show: the ingest keys
  // the App's deliveries with it, so the reconciler reads it from one attempt's request and keeps it.
  let learned: string | undefined;
  api.hookOf = async (attempt) => {
    if (learned !== undefined) return learned;
    const { headers } = await api.fetchPayload(attempt);
    const id = headers[HOOK_HEADER];
    if (id === undefined) return undefined;
    if (!/^[1-9]\d{0,19}$/.test(id)) {
      throw malformed(
        `GET ${gitHubDeliveriesPath(hook)}/${attempt.attemptId}`,
        `a "${HOOK_HEADER}" that is not a hook id`,
      );
    }
    learned = id;
    return id;
  };
  return api;
}
