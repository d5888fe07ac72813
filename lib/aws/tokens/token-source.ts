/**
 * The glue between a token source's configuration (an OAuth client or a GitHub App installation), its secret
 * and the token table: where the refresh function and the subscribers get their `TokenStore`, built once per
 * entry per process.
 */
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AccessToken, Client, type ConnectionOptions } from '../../oauth2/index.js';
import { AwsDefaults } from '../constants.js';
import type { Env } from '../env.js';
import { governedCall } from '../governor/governed-call.js';
import { ForgeGovernor } from '../governor/governor.js';
import type { GovernorConfig } from '../governor/limits.js';
import { createSecretsProvider } from '../secrets.js';
import type { LoggerLike, TokenKey, TokenLike } from '../types.js';
import type { OAuthClientConfig, TokenConfig, TokenSourceConfig } from './config.js';
import { gitHubAppKey, gitHubAppTarget, loadGitHubAppKey } from './github-app.js';
import { TokenStore, type TokenStoreOptions, type TokenTarget, tokenPartitionKey } from './token-store.js';

function targetKey(config: OAuthClientConfig): TokenKey {
  return {
    provider: config.provider,
    clientId: config.clientId,
    ...(config.scope ? { scope: config.scope } : {}),
  };
}

/** The token-table target of one client: its key, and its lib/oauth2 `Client` to load and fetch tokens. */
export function clientTarget(
  config: OAuthClientConfig,
  secret: string,
  connection?: ConnectionOptions,
): TokenTarget<AccessToken> {
  const client = new Client(config.clientId, secret, {
    site: config.site,
    ...(config.tokenUrl === undefined ? {} : { tokenUrl: config.tokenUrl }),
    ...(connection === undefined ? {} : { connection }),
  });
  const params: Record<string, string> = {};
  if (config.scope !== undefined) params.scope = config.scope;
  if (config.resource !== undefined) params.resource = config.resource;
  return {
    key: targetKey(config),
    fromHash: (hash) => AccessToken.fromHash(client, hash),
    // Client credentials issue no refresh token: a refresh is a new token request.
    fetchToken: () => client.clientCredentials.getToken(params),
  };
}

/** The clients a handler builds at module scope, shared by all its token sources. */
export interface TokenSourceOptions {
  documentClient: DynamoDBDocumentClient;
  tableName: string;
  /** Reads `secretParameter` (`privateKeyParameter`). Default: one built by Powertools on first use. */
  ssm?: SSMClient | undefined;
  /** A token within this many seconds of expiry is refreshed. Default 300. */
  refreshWindowSeconds?: number | undefined;
  logger?: LoggerLike | undefined;
  /** HTTP options of the clients' token and API requests (timeout, proxy, dispatcher). Default lib/oauth2's. */
  connection?: ConnectionOptions | undefined;
  /** Environment for `IS_OFFLINE`, `secretEnv` and `privateKeyEnv`. Default `process.env`. */
  env?: Env | undefined;
  /**
   * The forge API governor's settings: with it on, a GitHub App installation's token exchange takes its turn with
   * the installation's governor, as every call made with the token does (docs/rate-limits.md). Default: none.
   */
  governor?: GovernorConfig | undefined;
  /** Lease and clock knobs of the store (its clock also dates a GitHub App's JWT). */
  store?:
    | Pick<TokenStoreOptions<TokenLike>, 'leaseSeconds' | 'waitMs' | 'pollMs' | 'now' | 'sleep'>
    | undefined;
}

/** One client's way to its token: the table key, known before the secret is read, and its `TokenStore`. */
export interface TokenSource<T extends TokenLike = AccessToken> {
  /** The token table key (`provider#clientId#scope`), the key of every report about this client. */
  readonly key: string;
  /** Reads the client secret (SSM, cached) and builds the store, once; a failed attempt is retried on the next call. */
  store(): Promise<TokenStore<T>>;
}

/** The key, the secret and how the secret makes a target, per kind of entry. */
function kindOf(config: TokenSourceConfig, options: TokenSourceOptions) {
  const base = { ssm: options.ssm, single: true, env: options.env };
  if (config.kind === 'github_app') {
    return {
      key: gitHubAppKey(config),
      secrets: createSecretsProvider(
        { secretParameter: config.privateKeyParameter, secretEnv: config.privateKeyEnv },
        { ...base, defaultSecretEnv: AwsDefaults.githubAppPrivateKeyEnvVar },
      ),
      target: (secret: string) =>
        gitHubAppTarget(config, loadGitHubAppKey(secret, config.appId), {
          connection: options.connection,
          now: options.store?.now,
        }),
    };
  }
  return {
    key: targetKey(config),
    // The client's own secretParameter and secretEnv, as read.
    secrets: createSecretsProvider(config, {
      ...base,
      defaultSecretEnv: AwsDefaults.oauthClientSecretEnvVar,
    }),
    target: (secret: string) => clientTarget(config, secret, options.connection),
  };
}

/**
 * Builds the token source of one configured entry: an OAuth client (client credentials) or a GitHub App
 * installation (app JWT, installation token). Both give `AccessToken`s on the forge's API.
 */
export function createTokenSource(config: TokenSourceConfig, options: TokenSourceOptions): TokenSource {
  const kind = kindOf(config, options);
  const key = tokenPartitionKey(kind.key);
  const settings = options.governor;
  const governor =
    config.kind === 'github_app' && settings?.enabled === true
      ? new ForgeGovernor({
          client: options.documentClient,
          tableName: options.tableName,
          owner: key,
          limits: settings.limits,
          maxWaitMs: settings.maxWaitMs,
          leaseSeconds: settings.leaseSeconds,
          logger: options.logger,
        })
      : undefined;
  let store: Promise<TokenStore<AccessToken>> | undefined;
  const build = async () => {
    const [secret] = await kind.secrets.getSecrets();
    const target = kind.target(secret as string);
    return new TokenStore<AccessToken>({
      ...options.store,
      ...target,
      ...(governor === undefined
        ? {}
        : {
            fetchToken: (current: AccessToken | undefined) =>
              governedCall(governor, 'POST', () => target.fetchToken(current)),
          }),
      client: options.documentClient,
      tableName: options.tableName,
      refreshWindowSeconds: options.refreshWindowSeconds,
      logger: options.logger,
    });
  };
  return {
    key,
    store() {
      store ??= build().catch((error: unknown) => {
        store = undefined;
        throw error;
      });
      return store;
    },
  };
}

/** The token sources of every configured entry, of both kinds (as `readTokenConfig` returns them). */
export function createTokenSources(
  config: TokenConfig,
  options: Omit<TokenSourceOptions, 'tableName' | 'refreshWindowSeconds'>,
): TokenSource[] {
  return config.clients.map((client) =>
    createTokenSource(client, {
      ...options,
      tableName: config.tableName,
      refreshWindowSeconds: config.refreshWindowSeconds,
    }),
  );
}
