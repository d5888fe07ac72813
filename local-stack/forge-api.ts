// The local "forge API" for the example subscriber: a small resource server on 127.0.0.1 that accepts only
// access tokens signed by the local authorization server (checked against its JWKS with jose) for the forge
// API resource, and, with `githubApps`, GitHub App installation tokens it issued itself (its app routes check the
// app JWT as GitHub does: local-stack/github-app-server.ts). It answers a few read-only routes and records every
// request so tests can see the calls.
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
  /** Port. Default: a free one. */
  port?: number;
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
}

/** A running forge API. */
export interface ForgeApi {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Every request so far, oldest first. */
  requests(): ForgeApiRequest[];
  stop(): Promise<void>;
}

const ISSUE_PATH = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/;
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

  const answer = async (request: IncomingMessage, response: ServerResponse, entry: ForgeApiRequest) => {
    const { method, path } = entry;
    if (githubApps !== undefined) {
      const body = await readBody(request);
      if (body === undefined) {
        entry.status = 413;
        send(response, 413, { message: 'request body too large' });
        return;
      }
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
    const issue = ISSUE_PATH.exec(path);
    if (method !== 'GET' || issue === null) {
      entry.status = 404;
      send(response, 404, { message: 'not found' });
      return;
    }
    const [, owner, repo, number] = issue;
    entry.status = 200;
    send(response, 200, {
      number: Number(number),
      title: `Issue ${number} of ${owner}/${repo}`,
      repository: { full_name: `${owner}/${repo}` },
    });
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://forge.local').pathname;
    const entry: ForgeApiRequest = { method: request.method ?? 'GET', path, status: 500 };
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
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
