/**
 * The thin I/O layer under `forgebridge connect`: sends one {@link HookRequest} to a forge's REST API with the
 * token, reads the JSON answer, and turns a failure into one line that never holds the token or a secret.
 */
import { CliError, ExitCodes } from './errors.js';
import type { HookRequest } from './forge-hooks.js';
import { HOOK_APIS, type HookForge } from './hook-apis/index.js';
import { NETWORK_REASONS } from './http.js';

/** A forge's answer: status and parsed JSON body (`undefined` when empty or not JSON), and the `Link` header. */
export interface ForgeAnswer {
  status: number;
  body: unknown;
  link: string | null;
}

/** Options of {@link forgeClient}. */
export interface ForgeClientOptions {
  forge: HookForge;
  /** The API base, without a trailing slash. */
  api: string;
  token: string;
  /** Where the token comes from, for messages (`$GITHUB_TOKEN`). */
  tokenLabel: string;
  /** Strings an error message must never show (the token, the hook's secret). */
  hidden: readonly string[];
  /** Per request. Default 15000 ms. */
  timeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  userAgent?: string;
}

/** Sends requests to one forge; a non-2xx answer is a `CliError` unless `accept` lists its status. */
export interface ForgeClient {
  send(request: HookRequest, accept?: readonly number[]): Promise<ForgeAnswer>;
}

/** Replaces each hidden string in `text` with `[FILTERED]`. */
export function redact(text: string, hidden: readonly string[]): string {
  let out = text;
  for (const value of hidden) if (value.length > 0) out = out.split(value).join('[FILTERED]');
  return out;
}

/** A client of `options.api`. */
export function forgeClient(options: ForgeClientOptions): ForgeClient {
  const run = options.fetch ?? fetch;
  const hide = (text: string) => redact(text, [options.token, ...options.hidden]);
  return {
    async send(request, accept = []) {
      const url = `${options.api}${request.path}`;
      const headers: Record<string, string> = {
        ...HOOK_APIS[options.forge].headers,
        authorization: `Bearer ${options.token}`,
        'user-agent': options.userAgent ?? 'forgebridge-cli',
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      };
      let response: Response;
      let text: string;
      try {
        response = await run(url, {
          method: request.method,
          headers,
          ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
          redirect: 'error',
          signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
        });
        text = await response.text();
      } catch (error) {
        throw new CliError(`could not reach ${options.api}: ${networkReason(error)}`, ExitCodes.unreachable);
      }
      let body: unknown;
      try {
        body = text.length === 0 ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const answer = { status: response.status, body, link: response.headers.get('link') };
      if ((response.status >= 200 && response.status < 300) || accept.includes(response.status))
        return answer;
      const what = `${request.method} ${options.api}${request.path.split('?')[0]}`;
      const message = hide(forgeMessage(body)).slice(0, 300);
      if (response.status === 401) {
        throw new CliError(
          `the forge refused the token from ${options.tokenLabel} (${what}: 401${message === '' ? '' : ` ${message}`})`,
          ExitCodes.usage,
        );
      }
      throw new CliError(
        `${what} answered ${response.status}${message === '' ? '' : `: ${message}`}${hint(response.status)}`,
        ExitCodes.failed,
      );
    },
  };
}

function hint(status: number): string {
  if (status === 404) return ' (no such repository, project or hook, or the token may not see it)';
  if (status === 403) return ' (the token lacks the permission to manage hooks, or a rate limit)';
  return '';
}

/** The forge's own words: GitHub's `message` and `errors`, GitLab's `message` or `error`. */
function forgeMessage(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const record = body as Record<string, unknown>;
  const parts: string[] = [];
  const message = record.message ?? record.error;
  if (typeof message === 'string') parts.push(message);
  else if (message !== undefined) parts.push(JSON.stringify(message));
  if (Array.isArray(record.errors)) {
    for (const error of record.errors) {
      const entry = (error ?? {}) as Record<string, unknown>;
      const text = [entry.field, entry.code, entry.message].filter((part) => typeof part === 'string');
      if (text.length > 0) parts.push(text.join(' '));
    }
  }
  return parts.join('; ').replace(/\s+/g, ' ');
}

function networkReason(error: unknown): string {
  for (let current: unknown = error, depth = 0; current != null && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in NETWORK_REASONS) return NETWORK_REASONS[code] as string;
    if ((current as { name?: unknown }).name === 'TimeoutError') return 'no answer in time';
    current = (current as { cause?: unknown }).cause;
  }
  return 'request failed';
}
