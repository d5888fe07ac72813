// The local "forge API" for the example subscriber: a small resource server on 127.0.0.1 that accepts only
// access tokens signed by the local authorization server (checked against its JWKS with jose) for the forge
// API resource, and, with `githubApps`, GitHub App installation tokens it issued itself (its app routes check the
// app JWT as GitHub does: local-stack/github-app-server.ts). It answers a few read-only routes and records every
// request so tests can see the calls. With `limits` it enforces GitHub's secondary rate limits, scaled down (requests
// in flight at once per token owner, content-creating requests per sliding window), answering a 403 with
// `retry-after` as GitHub does, and counts what it saw (the most in flight, the limit answers).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { GitHubApps } from './github-app-server.js';

/** Options of {@link startForgeApi}. Without `issuer`, `jwksUri` and `audience`, no OAuth token is accepted. */
export interface ForgeApiOptions {
  /** The authorization server's issuer; tokens must carry it as `iss`. */
  issuer?: string;
  /** Where its signing keys are published. */
  jwksUri?: string;
  /** The `aud` the tokens must carry (the RFC 8707 resource). */
  audience?: string;
  /** Serve GitHub's app routes with this authority, and accept the installation tokens it issues. */
  githubApps?: GitHubApps;
  /** Enforce GitHub's secondary rate limits, scaled down. Default: none enforced. */
  limits?: ForgeApiLimits | undefined;
  /** How long each API answer takes, in ms (so that requests overlap as a real forge's do). Default 0. */
  delayMs?: number;
  /** Port. Default: a free one. */
  port?: number;
}

/**
 * GitHub's secondary rate limits at a scale tests can reach: `concurrency` requests in flight at once per token
 * owner, and at most `writes` content-creating requests (POST, PATCH, PUT, DELETE) per owner in any
 * `windowSeconds`-long window. GitHub's own: 100 in flight, 80 a minute.
 */
export interface ForgeApiLimits {
  concurrency: number;
  writes: number;
  windowSeconds: number;
}

/**
 * Reads `FORGEBRIDGE_LOCAL_FORGE_LIMITS`: `<in flight>,<writes>/<seconds>s` (`10,8/6s`, the default), or `off`. A
 * `TypeError` naming the variable for anything else.
 */
export function parseForgeApiLimits(text: string | undefined): ForgeApiLimits | undefined {
  const value = (text ?? '').trim() || '10,8/6s';
  if (value === 'off') return undefined;
  const match = /^(\d+),(\d+)\/(\d+)s$/.exec(value);
  const [concurrency, writes, windowSeconds] = (match?.slice(1) ?? []).map(Number);
  if (match === null || !(concurrency && writes && windowSeconds)) {
    throw new TypeError(
      `"FORGEBRIDGE_LOCAL_FORGE_LIMITS" must be <in flight>,<writes>/<seconds>s (e.g. 10,8/6s) or off, not "${value}"`,
    );
  }
  return { concurrency, writes, windowSeconds };
}

/** What the limits saw. */
export interface ForgeApiLimitStats {
  /** The most requests of one owner in flight at once. */
  maxConcurrent: number;
  /** 403 answers for a secondary limit: requests in flight, content-creating requests in the window. */
  concurrencyAnswers: number;
  writeAnswers: number;
  /** Content-creating requests answered 2xx. */
  writesDone: number;
}

/** One request the forge API answered. */
export interface ForgeApiRequest {
  method: string;
  path: string;
  status: number;
  /** The token's `client_id` (or `sub`), or `app/<appId>` for an installation token, when it was valid. */
  clientId?: string;
  scope?: string;
  /** The installation an installation token stands for. */
  installationId?: number;
  /** When it arrived (epoch ms). */
  at: number;
}

/** A running forge API. */
export interface ForgeApi {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Every request so far, oldest first. */
  requests(): ForgeApiRequest[];
  /** What the limits saw so far. */
  limitStats(): ForgeApiLimitStats;
  /** Forgets what the limits saw (not the requests in flight). */
  resetLimitStats(): void;
  stop(): Promise<void>;
}

const ISSUE_PATH = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/;
const COMMENTS_PATH = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/;
/** GitHub's answer to a request over a secondary rate limit. */
const SECONDARY_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
const DOCS_URL =
  'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';
/** Largest request body read (an installation token request with 500 repository names fits). */
const MAX_BODY_BYTES = 64 * 1024;

/** The request body as text, at most {@link MAX_BODY_BYTES}; `undefined` past it. */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * Starts the forge API.
 *
 * @example
 * ```ts
 * const api = await startForgeApi({ issuer, jwksUri, audience: FORGE_API_RESOURCE });
 * await fetch(`${api.url}/repos/octo/hello/issues/1`, { headers: { authorization: `Bearer ${token}` } });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
export async function startForgeApi(options: ForgeApiOptions): Promise<ForgeApi> {
  const { issuer, jwksUri, audience, githubApps } = options;
  const jwks = jwksUri === undefined ? undefined : createRemoteJWKSet(new URL(jwksUri));
  const log: ForgeApiRequest[] = [];

  /** Who the request's token stands for: the OAuth token's claims or an installation token's grant. */
  const verify = async (
    request: IncomingMessage,
  ): Promise<{ clientId?: string; scope?: string; installationId?: number } | undefined> => {
    const header = request.headers.authorization ?? '';
    const match = /^(Bearer|token) ([\w.~+/-]+=*)$/i.exec(header);
    if (match?.[2] === undefined) return undefined;
    const grant = githubApps?.verifyInstallationToken(match[2]);
    if (grant !== undefined) return { clientId: `app/${grant.appId}`, installationId: grant.installationId };
    if (jwks === undefined || match[1]?.toLowerCase() !== 'bearer') return undefined;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(match[2], jwks, {
        ...(issuer === undefined ? {} : { issuer }),
        ...(audience === undefined ? {} : { audience }),
      }));
    } catch {
      return undefined;
    }
    const clientId = payload.client_id ?? payload.sub;
    return {
      ...(typeof clientId === 'string' && { clientId }),
      ...(typeof payload.scope === 'string' && { scope: payload.scope }),
    };
  };

  const limits = options.limits;
  const delayMs = options.delayMs ?? 0;
  const inFlight = new Map<string, number>();
  const writeLog = new Map<string, number[]>();
  let stats: ForgeApiLimitStats = { maxConcurrent: 0, concurrencyAnswers: 0, writeAnswers: 0, writesDone: 0 };
  let commentId = 0;

  /** A secondary-limit answer as GitHub gives it: 403, `retry-after` in seconds, the rate-limit message. */
  const secondaryLimit = (response: ServerResponse, entry: ForgeApiRequest, retryAfter: number) => {
    entry.status = 403;
    send(
      response,
      403,
      { message: SECONDARY_LIMIT_MESSAGE, documentation_url: DOCS_URL, status: '403' },
      { 'retry-after': String(retryAfter) },
    );
  };

  const route = (response: ServerResponse, entry: ForgeApiRequest, body: string) => {
    const { method, path } = entry;
    const issue = ISSUE_PATH.exec(path);
    if (method === 'GET' && issue !== null) {
      const [, owner, repo, number] = issue;
      entry.status = 200;
      send(response, 200, {
        number: Number(number),
        title: `Issue ${number} of ${owner}/${repo}`,
        repository: { full_name: `${owner}/${repo}` },
      });
      return;
    }
    const comments = COMMENTS_PATH.exec(path);
    if (method === 'POST' && comments !== null) {
      const [, owner, repo, number] = comments;
      let text: unknown;
      try {
        text = (JSON.parse(body) as { body?: unknown } | null)?.body;
      } catch {
        text = undefined;
      }
      if (typeof text !== 'string' || text === '') {
        entry.status = 422;
        send(response, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'IssueComment', code: 'missing_field', field: 'body' }],
          documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
        });
        return;
      }
      commentId += 1;
      const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const base = `https://api.github.com/repos/${owner}/${repo}`;
      entry.status = 201;
      send(
        response,
        201,
        {
          id: commentId,
          node_id: `IC_${commentId}`,
          url: `${base}/issues/comments/${commentId}`,
          html_url: `https://github.com/${owner}/${repo}/issues/${number}#issuecomment-${commentId}`,
          body: text,
          user: null,
          created_at: at,
          updated_at: at,
          issue_url: `${base}/issues/${number}`,
          author_association: 'NONE',
        },
        { location: `${base}/issues/comments/${commentId}` },
      );
      return;
    }
    entry.status = 404;
    send(response, 404, { message: 'not found' });
  };

  const answer = async (request: IncomingMessage, response: ServerResponse, entry: ForgeApiRequest) => {
    const { method, path } = entry;
    const body = await readBody(request);
    if (body === undefined) {
      entry.status = 413;
      send(response, 413, { message: 'request body too large' });
      return;
    }
    if (githubApps !== undefined) {
      const app = await githubApps.handle(method, path, request.headers.authorization, body);
      if (app !== undefined) {
        entry.status = app.status;
        send(response, app.status, app.body);
        return;
      }
    }
    const claims = await verify(request);
    if (claims === undefined) {
      entry.status = 401;
      send(
        response,
        401,
        { message: 'bad credentials' },
        { 'www-authenticate': 'Bearer error="invalid_token"' },
      );
      return;
    }
    Object.assign(entry, claims);
    if (limits === undefined) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      route(response, entry, body);
      return;
    }
    const owner =
      claims.installationId === undefined
        ? `client/${claims.clientId ?? ''}`
        : `installation/${claims.installationId}`;
    const flying = inFlight.get(owner) ?? 0;
    if (flying >= limits.concurrency) {
      stats.concurrencyAnswers += 1;
      secondaryLimit(response, entry, 1);
      return;
    }
    const write = !['GET', 'HEAD', 'OPTIONS'].includes(method);
    if (write) {
      const now = Date.now();
      const windowMs = limits.windowSeconds * 1000;
      const log = (writeLog.get(owner) ?? []).filter((at) => at > now - windowMs);
      writeLog.set(owner, log);
      if (log.length >= limits.writes) {
        stats.writeAnswers += 1;
        secondaryLimit(response, entry, Math.max(1, Math.ceil(((log[0] as number) + windowMs - now) / 1000)));
        return;
      }
      log.push(now);
    }
    inFlight.set(owner, flying + 1);
    stats.maxConcurrent = Math.max(stats.maxConcurrent, flying + 1);
    try {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      route(response, entry, body);
      if (write && entry.status < 300) stats.writesDone += 1;
    } finally {
      inFlight.set(owner, (inFlight.get(owner) ?? 1) - 1);
    }
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://forge.local').pathname;
    const entry: ForgeApiRequest = { method: request.method ?? 'GET', path, status: 500, at: Date.now() };
    log.push(entry);
    answer(request, response, entry).catch(() => {
      entry.status = 500;
      if (!response.headersSent) send(response, 500, { message: 'internal error' });
    });
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('forge api has no address');
  const port = address.port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => log.map((entry) => ({ ...entry })),
    limitStats: () => ({ ...stats }),
    resetLimitStats: () => {
      stats = { maxConcurrent: 0, concurrencyAnswers: 0, writeAnswers: 0, writesDone: 0 };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
