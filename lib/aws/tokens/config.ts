/**
 * The token functions' configuration, read from the environment (every variable is named in serverless.yml and
 * documented in docs/configuration.md). A malformed value is a `TypeError` naming the variable, thrown at cold start.
 */
import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';

/** One OAuth client: an element of the `FORGEBRIDGE_OAUTH_CLIENTS` JSON array. */
export interface OAuthClientConfig {
  /** Names the forge in the token table key (`provider#clientId#scope`). */
  provider: string;
  clientId: string;
  /** Space-separated scopes asked for; absent means the client's default scope. */
  scope?: string;
  /** Resource indicator sent with the token request, when the server wants one. */
  resource?: string;
  /** Base URL of the authorization server. */
  site: string;
  /** Token endpoint, relative to `site` or absolute. Default lib/oauth2's `oauth/token`. */
  tokenUrl?: string;
  /** SSM SecureString parameter holding the client secret. */
  secretParameter?: string;
  /** Offline only: environment variable holding the client secret. Default `FORGEBRIDGE_OAUTH_CLIENT_SECRET`. */
  secretEnv?: string;
}

/** What every token function reads: the token table, the refresh window and the OAuth clients. */
export interface TokenConfig {
  /** `FORGEBRIDGE_TOKEN_TABLE`. */
  tableName: string;
  /** `FORGEBRIDGE_REFRESH_WINDOW_SECONDS`; `undefined` leaves the default (300). */
  refreshWindowSeconds: number | undefined;
  /** `FORGEBRIDGE_OAUTH_CLIENTS`. */
  clients: OAuthClientConfig[];
}

/** A subscriber that calls the forge API: the token configuration, the API's base URL and the client it uses. */
export interface ForgeApiConfig extends TokenConfig {
  /** `FORGEBRIDGE_FORGE_API_URL`, without trailing slashes. */
  forgeApiUrl: string;
  /** The first client of `FORGEBRIDGE_OAUTH_PROVIDER` (any provider when unset). */
  client: OAuthClientConfig;
}

const CLIENTS_VAR = 'FORGEBRIDGE_OAUTH_CLIENTS';
const OPTIONAL_FIELDS = ['scope', 'resource', 'tokenUrl', 'secretParameter', 'secretEnv'] as const;

function field(entry: Record<string, unknown>, index: number, name: string, required: boolean) {
  const value = entry[name];
  if (value === undefined || value === null || value === '') {
    if (required) throw new TypeError(`"${CLIENTS_VAR}[${index}].${name}" is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw new TypeError(`"${CLIENTS_VAR}[${index}].${name}" must be a string`);
  return value;
}

function parseClient(entry: unknown, index: number): OAuthClientConfig {
  if (typeof entry !== 'object' || entry === null) {
    throw new TypeError(`"${CLIENTS_VAR}[${index}]" must be an object`);
  }
  const record = entry as Record<string, unknown>;
  const config: OAuthClientConfig = {
    provider: field(record, index, 'provider', true) as string,
    clientId: field(record, index, 'clientId', true) as string,
    site: field(record, index, 'site', true) as string,
  };
  for (const name of OPTIONAL_FIELDS) {
    const value = field(record, index, name, false);
    if (value !== undefined) config[name] = value;
  }
  return config;
}

/** Parses `FORGEBRIDGE_OAUTH_CLIENTS`: an empty list when unset, a `TypeError` naming a malformed field. */
export function readOAuthClients(env: Env = process.env): OAuthClientConfig[] {
  const raw = optionalEnv(CLIENTS_VAR, env);
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed))
    throw new TypeError(`environment variable "${CLIENTS_VAR}" must be a json array`);
  return parsed.map(parseClient);
}

/** Reads the token table, the refresh window and the OAuth clients (the refresh function's configuration). */
export function readTokenConfig(env: Env = process.env): TokenConfig {
  return {
    tableName: requireEnv('FORGEBRIDGE_TOKEN_TABLE', env),
    refreshWindowSeconds: numberEnv('FORGEBRIDGE_REFRESH_WINDOW_SECONDS', env),
    clients: readOAuthClients(env),
  };
}

/** Reads a forge-API subscriber's configuration: {@link readTokenConfig} plus the API URL and its client. */
export function readForgeApiConfig(env: Env = process.env): ForgeApiConfig {
  const forgeApiUrl = requireEnv('FORGEBRIDGE_FORGE_API_URL', env).replace(/\/+$/, '');
  const provider = optionalEnv('FORGEBRIDGE_OAUTH_PROVIDER', env);
  const tokens = readTokenConfig(env);
  const client = tokens.clients.find(
    (candidate) => provider === undefined || candidate.provider === provider,
  );
  if (client === undefined) throw new TypeError(`environment variable "${CLIENTS_VAR}" names no client`);
  return { ...tokens, forgeApiUrl, client };
}
