import { AwsErrorCodes } from '../constants.js';
import { AwsBridgeError } from '../errors.js';
import type { LoggerLike, TokenLike } from '../types.js';
import type { TokenSource } from './token-source.js';

/**
 * What happened to one token source (an OAuth client or a GitHub App installation). `status` is the store's outcome (`fresh`, `refreshed`, `waited`, `stale`) or
 * `failed`; `error` carries only a code and a message (never a token or a secret).
 */
export interface RefreshReport {
  /** The token table key, `provider#clientId#scope`. */
  key: string;
  status: 'fresh' | 'refreshed' | 'waited' | 'stale' | 'failed';
  /** Epoch seconds of the token now stored, when known. */
  expiresAt?: number;
  version?: number;
  error?: { code: string; message: string };
}

/** The outcome of one scheduled refresh: counts and one report per client. */
export interface RefreshRun {
  refreshed: number;
  failed: number;
  reports: RefreshReport[];
}

/** Options of {@link refreshTokens}. */
export interface RefreshOptions {
  /** Refresh a token that expires within this many seconds. Default: each store's own window (300). */
  windowSeconds?: number | undefined;
  logger?: LoggerLike | undefined;
}

/**
 * The code and message of a failure. A store wraps a failed fetch in its own error; when the cause is one of
 * lib/aws' own (a GitHub App's refused request, with the forge's status and message), its message is added: it
 * holds no secret, unlike a third party's message might.
 */
function describe(error: unknown): { code: string; message: string; reason?: string } {
  const code =
    typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
      ? error.code
      : AwsErrorCodes.refreshFailed;
  const message = error instanceof Error ? error.message : 'refresh failed';
  const cause = error instanceof Error ? error.cause : undefined;
  if (!(cause instanceof AwsBridgeError)) return { code, message };
  return { code, message: `${message}: ${cause.message}`, reason: cause.message };
}

async function refreshOne<T extends TokenLike>(
  source: TokenSource<T>,
  options: RefreshOptions,
): Promise<RefreshReport> {
  const { key } = source;
  try {
    const store = await source.store();
    const result = await store.refresh(
      options.windowSeconds === undefined ? {} : { windowSeconds: options.windowSeconds },
    );
    const report: RefreshReport = { key, status: result.outcome, version: result.version };
    if (result.token.expiresAt !== undefined) report.expiresAt = result.token.expiresAt;
    options.logger?.info('token refresh', { key, status: report.status, expiresAt: report.expiresAt });
    return report;
  } catch (error) {
    const { reason, ...described } = describe(error);
    const report: RefreshReport = { key, status: 'failed', error: described };
    options.logger?.error('token refresh failed', {
      key,
      code: described.code,
      ...(reason === undefined ? {} : { reason }),
    });
    return report;
  }
}

/**
 * The scheduled refresh: each client's stored token is refreshed when it expires within the window
 * (single-flight with readers through the store's lease). Clients run concurrently; a client whose secret cannot
 * be read or whose refresh fails is reported and does not stop the others.
 *
 * @example
 * ```ts
 * const run = await refreshTokens(createTokenSources(readTokenConfig(), { documentClient, ssm }), { logger });
 * if (run.failed > 0) throw new TokenRefreshError(run);
 * ```
 */
export async function refreshTokens<T extends TokenLike>(
  sources: readonly TokenSource<T>[],
  options: RefreshOptions = {},
): Promise<RefreshRun> {
  const reports = await Promise.all(sources.map((source) => refreshOne(source, options)));
  const failed = reports.filter((report) => report.status === 'failed').length;
  const refreshed = reports.filter((report) => report.status === 'refreshed').length;
  options.logger?.info('refresh run', { clients: reports.length, refreshed, failed });
  return { refreshed, failed, reports };
}
