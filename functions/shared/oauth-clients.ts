/**
 * The OAuth clients the refresh function keeps tokens for and the subscribers call the forge with, read from
 * `FORGEBRIDGE_OAUTH_CLIENTS` (a JSON array). Each client's secret comes from SSM Parameter Store
 * (`secretParameter`, a SecureString) through lib/aws' cached secrets provider; offline, from the environment
 * variable `secretEnv` (default `FORGEBRIDGE_OAUTH_CLIENT_SECRET`). Wiring only: the token logic is lib/aws'
 * `TokenStore`, the OAuth logic lib/oauth2.
 */
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Env, optionalEnv } from '../../lib/aws/env.js';
import { createSecretsProvider, type LoggerLike, type TokenKey, TokenStore } from '../../lib/aws/index.js';
import { AccessToken, Client } from '../../lib/oauth2/index.js';

/**
 * One configured OAuth client (an element of `FORGEBRIDGE_OAUTH_CLIENTS`).
 *
 * @example
 * ```json
 * [{ "provider": "forge", "clientId": "ci-bot", "scope": "forge:read", "site": "https://forge.example.com",
 *    "tokenUrl": "oauth/token", "secretParameter": "/forgebridge/prod/oauth/ci-bot" }]
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export interface OAuthClientConfig {
  /** Names the forge in the token table key (`provider#clientId#scope`). */
  provider: string;
  clientId: string;
  /** Space-separated scopes asked for; absent means the client's default scope. */
  scope?: string;
  /** RFC 8707 resource indicator sent with the token request, when the server wants one. */
  resource?: string;
  /** Base URL of the authorization server. */
  site: string;
  /** Token endpoint, relative to `site` or absolute. Default `oauth/token` (lib/oauth2's default). */
  tokenUrl?: string;
  /** SSM SecureString parameter holding the client secret. */
  secretParameter?: string;
  /** Offline only: environment variable holding the client secret. Default `FORGEBRIDGE_OAUTH_CLIENT_SECRET`. */
  secretEnv?: string;
}

const CLIENTS_VAR = 'FORGEBRIDGE_OAUTH_CLIENTS';
const DEFAULT_SECRET_ENV = 'FORGEBRIDGE_OAUTH_CLIENT_SECRET';

function field(
  entry: Record<string, unknown>,
  index: number,
  name: string,
  required: boolean,
): string | undefined {
  const value = entry[name];
  if (value === undefined || value === null || value === '') {
    if (required) throw new TypeError(`"${CLIENTS_VAR}[${index}].${name}" is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw new TypeError(`"${CLIENTS_VAR}[${index}].${name}" must be a string`);
  return value;
}

/**
 * Parses `FORGEBRIDGE_OAUTH_CLIENTS`: an empty list when it is unset, a `TypeError` naming the field when an
 * entry is malformed.
 *
 * @example
 * ```ts
 * const clients = readOAuthClients(); // [{ provider: 'forge', clientId: 'ci-bot', site: '…' }]
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-2.2
 */
export function readOAuthClients(env: Env = process.env): OAuthClientConfig[] {
  const raw = optionalEnv(CLIENTS_VAR, env);
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new TypeError(`environment variable "${CLIENTS_VAR}" must be a json array`);
  }
  if (!Array.isArray(parsed))
    throw new TypeError(`environment variable "${CLIENTS_VAR}" must be a json array`);
  return parsed.map((entry: unknown, index): OAuthClientConfig => {
    if (typeof entry !== 'object' || entry === null) {
      throw new TypeError(`"${CLIENTS_VAR}[${index}]" must be an object`);
    }
    const record = entry as Record<string, unknown>;
    const config: OAuthClientConfig = {
      provider: field(record, index, 'provider', true) as string,
      clientId: field(record, index, 'clientId', true) as string,
      site: field(record, index, 'site', true) as string,
    };
    for (const name of ['scope', 'resource', 'tokenUrl', 'secretParameter', 'secretEnv'] as const) {
      const value = field(record, index, name, false);
      if (value !== undefined) config[name] = value;
    }
    return config;
  });
}

/** Dependencies shared by every token source: the clients built at module scope of a handler. */
export interface TokenSourceDependencies {
  documentClient: DynamoDBDocumentClient;
  ssm: SSMClient;
  tableName: string;
  refreshWindowSeconds?: number | undefined;
  logger?: LoggerLike | undefined;
  env?: Env;
}

/**
 * What lib/aws' `refreshTokens` and `TokenStore` need of one client: its key, how to load a stored token, and
 * how to get a new one (a client-credentials request, which ignores the current token).
 *
 * @example
 * ```ts
 * await refreshTokens([await source.target()], { client, tableName });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4.2
 */
export interface AccessTokenTarget {
  key: TokenKey;
  fromHash: (hash: Record<string, unknown>) => AccessToken;
  fetchToken: () => Promise<AccessToken>;
}

/**
 * Everything needed to get a token for one configured client: the refresh target (for `refreshTokens`) and a
 * `TokenStore` whose `get()` serves the token from memory while it is fresh (for subscribers).
 *
 * @example
 * ```ts
 * const source = createTokenSource(clients[0], deps);
 * const token = await (await source.store()).get();
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export interface TokenSource {
  readonly config: OAuthClientConfig;
  /** Resolves the client secret (cached) and builds the target once. */
  target(): Promise<AccessTokenTarget>;
  /** The token store of this client, built once per warm Lambda. */
  store(): Promise<TokenStore<AccessToken>>;
}

/**
 * Builds the token source of one configured client.
 *
 * @example
 * ```ts
 * const sources = readOAuthClients().map((client) => createTokenSource(client, deps));
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
export function createTokenSource(config: OAuthClientConfig, deps: TokenSourceDependencies): TokenSource {
  const env = deps.env ?? process.env;
  const secrets = createSecretsProvider({
    parameterName: config.secretParameter,
    ssm: deps.ssm,
    envVar: config.secretEnv ?? DEFAULT_SECRET_ENV,
    env,
  });
  let target: Promise<AccessTokenTarget> | undefined;
  let store: Promise<TokenStore<AccessToken>> | undefined;

  const buildTarget = async (): Promise<AccessTokenTarget> => {
    const [secret] = await secrets.getSecrets();
    const client = new Client(config.clientId, secret, {
      site: config.site,
      ...(config.tokenUrl === undefined ? {} : { tokenUrl: config.tokenUrl }),
    });
    const params: Record<string, string> = {};
    if (config.scope !== undefined) params.scope = config.scope;
    if (config.resource !== undefined) params.resource = config.resource;
    const key = {
      provider: config.provider,
      clientId: config.clientId,
      ...(config.scope ? { scope: config.scope } : {}),
    };
    return {
      key,
      fromHash: (hash) => AccessToken.fromHash(client, hash),
      // Client credentials: a "refresh" is a new token request (RFC 6749 §4.4.3 issues no refresh token).
      fetchToken: () => client.clientCredentials.getToken(params),
    };
  };

  return {
    config,
    target() {
      target ??= buildTarget().catch((error: unknown) => {
        target = undefined;
        throw error;
      });
      return target;
    },
    store() {
      store ??= this.target()
        .then(
          (built) =>
            new TokenStore<AccessToken>({
              client: deps.documentClient,
              tableName: deps.tableName,
              key: built.key,
              fromHash: built.fromHash,
              fetchToken: built.fetchToken,
              refreshWindowSeconds: deps.refreshWindowSeconds,
              logger: deps.logger,
            }),
        )
        .catch((error: unknown) => {
          store = undefined;
          throw error;
        });
      return store;
    },
  };
}
