import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import type { LoggerLike, TokenKey, TokenLike } from '../types.js';
import { TokenStore, type TokenStoreOptions } from './token-store.js';

/**
 * One client-credentials client the scheduled refresh keeps fresh.
 *
 * @example
 * ```ts
 * { key: { provider: 'forge', clientId: 'ci-bot' }, fromHash, fetchToken: () => client.clientCredentials.getToken() }
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export interface RefreshTarget<T extends TokenLike = TokenLike> {
  key: TokenKey;
  /** Rebuilds a token from its stored map, e.g. `(hash) => AccessToken.fromHash(client, hash)`. */
  fromHash: (hash: Record<string, unknown>) => T;
  /** Gets a new token, e.g. `() => client.clientCredentials.getToken({ scope })`. */
  fetchToken: (current: T | undefined) => Promise<T>;
}

/**
 * Collaborators and knobs of {@link refreshTokens}.
 *
 * @example
 * ```ts
 * await refreshTokens(targets, { client: documentClient, tableName: 'tokens', windowSeconds: 300 });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export interface RefreshDependencies {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Refresh a token that expires within this many seconds. Default 300 (the schedule's period). */
  windowSeconds?: number | undefined;
  logger?: LoggerLike | undefined;
  /** Extra {@link TokenStore} options (lease, wait, clock). */
  store?:
    | Pick<TokenStoreOptions<TokenLike>, 'leaseSeconds' | 'waitMs' | 'pollMs' | 'now' | 'sleep'>
    | undefined;
}

/**
 * What happened to one client. `status` is the store's outcome (`fresh`, `refreshed`, `waited`, `stale`) or
 * `failed`; `error` carries only a code and a message (never a token or a secret).
 *
 * @example
 * ```ts
 * { key: 'forge#ci-bot#', status: 'refreshed', version: 4, expiresAt: 1795281616 }
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 */
export interface RefreshReport {
  key: string;
  status: 'fresh' | 'refreshed' | 'waited' | 'stale' | 'failed';
  /** Epoch seconds of the token now stored, when known. */
  expiresAt?: number;
  version?: number;
  error?: { code: string; message: string };
}

function describe(error: unknown): { code: string; message: string } {
  const code =
    typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
      ? error.code
      : AwsErrorCodes.refreshFailed;
  const message = error instanceof Error ? error.message : 'refresh failed';
  return { code, message };
}

/**
 * The scheduled refresh: for each configured client, refreshes its stored token when it expires within
 * `windowSeconds` (single-flight with readers through the store's lease). Clients run concurrently and one
 * failing client does not stop the others; the result reports each.
 *
 * @example
 * ```ts
 * const reports = await refreshTokens(
 *   [{ key: { provider: 'forge', clientId: 'ci-bot', scope: 'repo' }, fromHash, fetchToken }],
 *   { client: documentClient, tableName: 'tokens' },
 * );
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export async function refreshTokens<T extends TokenLike = TokenLike>(
  targets: readonly RefreshTarget<T>[],
  deps: RefreshDependencies,
): Promise<RefreshReport[]> {
  const windowSeconds = deps.windowSeconds ?? AwsDefaults.refreshWindowSeconds;
  return Promise.all(
    targets.map(async (target): Promise<RefreshReport> => {
      let key = `${target.key?.provider}#${target.key?.clientId}`;
      try {
        const store = new TokenStore<T>({
          ...deps.store,
          client: deps.client,
          tableName: deps.tableName,
          key: target.key,
          fromHash: target.fromHash,
          fetchToken: target.fetchToken,
          refreshWindowSeconds: windowSeconds,
          logger: deps.logger,
        });
        key = store.key;
        const result = await store.refresh({ windowSeconds });
        const report: RefreshReport = { key, status: result.outcome, version: result.version };
        if (result.token.expiresAt !== undefined) report.expiresAt = result.token.expiresAt;
        deps.logger?.info('token refresh', { key, status: report.status, expiresAt: report.expiresAt });
        return report;
      } catch (error) {
        const report: RefreshReport = { key, status: 'failed', error: describe(error) };
        deps.logger?.error('token refresh failed', { key, code: report.error?.code });
        return report;
      }
    }),
  );
}
