// The local "forge API" for the example subscriber: a small resource server on 127.0.0.1 that accepts only
// access tokens signed by the local authorization server (checked against its JWKS with jose) for the forge
// API resource, and answers a few read-only routes. It records every request so tests can see the calls.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

/** Options of {@link startForgeApi}. */
export interface ForgeApiOptions {
  /** The authorization server's issuer; tokens must carry it as `iss`. */
  issuer: string;
  /** Where its signing keys are published. */
  jwksUri: string;
  /** The `aud` the tokens must carry (the RFC 8707 resource). */
  audience: string;
  /** Port. Default: a free one. */
  port?: number;
}

/** One request the forge API answered. */
export interface ForgeApiRequest {
  method: string;
  path: string;
  status: number;
  /** The token's `client_id` (or `sub`) when it was valid. */
  clientId?: string;
  scope?: string;
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
  const jwks = createRemoteJWKSet(new URL(options.jwksUri));
  const log: ForgeApiRequest[] = [];

  const verify = async (request: IncomingMessage): Promise<JWTPayload | undefined> => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer ([\w.~+/-]+=*)$/i.exec(header);
    if (match?.[1] === undefined) return undefined;
    try {
      const { payload } = await jwtVerify(match[1], jwks, {
        issuer: options.issuer,
        audience: options.audience,
      });
      return payload;
    } catch {
      return undefined;
    }
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://forge.local').pathname;
    const method = request.method ?? 'GET';
    const entry: ForgeApiRequest = { method, path, status: 500 };
    log.push(entry);
    void verify(request).then(
      (claims) => {
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
        const clientId = claims.client_id ?? claims.sub;
        if (typeof clientId === 'string') entry.clientId = clientId;
        if (typeof claims.scope === 'string') entry.scope = claims.scope;
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
      },
      () => {
        send(response, 500, { message: 'internal error' });
      },
    );
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
