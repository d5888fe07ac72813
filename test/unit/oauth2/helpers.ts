import { type Interceptable, MockAgent } from 'undici';
import type { ClientOptions } from '../../../lib/oauth2/index.js';
import { Client } from '../../../lib/oauth2/index.js';

export const SITE = 'https://auth.example.test';

/** A MockAgent that refuses real network connections. */
export function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return agent;
}

/** A client wired to the MockAgent. */
export function mockClient(
  agent: MockAgent,
  options: ClientOptions = {},
  id = 'client-id',
  secret = 'client-secret',
): Client {
  return new Client(id, secret, {
    site: SITE,
    ...options,
    connection: { dispatcher: agent, ...options.connection },
  });
}

/** Captures one request's body and headers from a MockAgent interceptor reply callback. */
export interface Captured {
  body: string;
  headers: Record<string, string>;
  path: string;
  method: string;
}

export function normalizeHeaders(headers: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined || headers === null) return out;
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i += 2)
      out[String(headers[i]).toLowerCase()] = String(headers[i + 1]);
  } else if (headers instanceof Headers) {
    headers.forEach((v, k) => {
      out[k] = v;
    });
  } else {
    for (const [k, v] of Object.entries(headers as Record<string, string>)) out[k.toLowerCase()] = String(v);
  }
  return out;
}

export const JSON_HEADERS = { headers: { 'content-type': 'application/json; charset=utf-8' } };

/** What one request intercepted by a MockAgent looked like. */
export function capture(o: { body?: unknown; headers?: unknown; path: string; method: string }): Captured {
  return {
    body: o.body === undefined || o.body === null ? '' : String(o.body),
    headers: normalizeHeaders(o.headers),
    path: o.path,
    method: o.method,
  };
}

/** Intercepts one POST to the token endpoint, records it in `seen` and answers `reply` as JSON. */
export function tokenEndpoint(
  pool: Interceptable,
  seen: Captured[],
  reply: Record<string, unknown> = { access_token: 'at' },
): void {
  pool.intercept({ path: '/oauth/token', method: 'POST' }).reply(
    200,
    (o) => {
      seen.push(capture(o));
      return reply;
    },
    JSON_HEADERS,
  );
}
