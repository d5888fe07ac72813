/**
 * The token functions' configuration, read from the environment (every variable is named in serverless.yml and
 * documented in docs/configuration.md). A malformed value is a `TypeError` naming the variable, thrown at cold start.
 */
import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';

/** One OAuth client: an element of the `FORGEBRIDGE_OAUTH_CLIENTS` JSON array (the default kind). */
export interface OAuthClientConfig {
  /** Absent or `'oauth_client_credentials'`. */
  kind?: 'oauth_client_credentials';
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

/** The level a GitHub App installation token is narrowed to for one permission. */
export type GitHubAppPermissionLevel = 'read' | 'write' | 'admin';

/** One GitHub App installation: an element of `FORGEBRIDGE_OAUTH_CLIENTS` with `kind: 'github_app'`. */
export interface GitHubAppConfig {
  kind: 'github_app';
  /** Names the forge in the token table key (`provider#app/<appId>#<installation and narrowing>`). */
  provider: string;
  /** The app's id (or its client id), the `iss` of the app JWT. */
  appId: string;
  /** The installation to get tokens for; exclusive with `account`. */
  installationId?: number;
  /** The user or organization login whose installation is looked up with the app JWT; exclusive with `installationId`. */
  account?: string;
  /** Where `account` is looked up: `/orgs/{account}/installation` or `/users/{account}/installation`. Default: both, org first. */
  accountType?: 'org' | 'user';
  /** SSM SecureString parameter holding the app's private key (PEM, PKCS#1 or PKCS#8). */
  privateKeyParameter?: string;
  /** Offline only: environment variable holding the private key. Default `FORGEBRIDGE_GITHUB_APP_PRIVATE_KEY`. */
  privateKeyEnv?: string;
  /** The REST API's base URL. Default `https://api.github.com` (GitHub Enterprise Server: `https://<host>/api/v3`). */
  apiUrl?: string;
  /** Narrow the token to these repositories (names, without the owner). */
  repositories?: string[];
  /** Narrow the token to these repositories (ids). */
  repositoryIds?: number[];
  /** Narrow the token to these permissions, e.g. `{ "issues": "read" }`. */
  permissions?: Record<string, GitHubAppPermissionLevel>;
}

/** One element of `FORGEBRIDGE_OAUTH_CLIENTS`: an OAuth client or a GitHub App installation. */
export type TokenSourceConfig = OAuthClientConfig | GitHubAppConfig;

/** What every token function reads: the token table, the refresh window and the token sources. */
export interface TokenConfig {
  /** `FORGEBRIDGE_TOKEN_TABLE`. */
  tableName: string;
  /** `FORGEBRIDGE_REFRESH_WINDOW_SECONDS`; `undefined` leaves the default (300). */
  refreshWindowSeconds: number | undefined;
  /** `FORGEBRIDGE_OAUTH_CLIENTS`: OAuth clients and GitHub App installations. */
  clients: TokenSourceConfig[];
}

/** A subscriber that calls the forge API: the token configuration, the API's base URL and the client it uses. */
export interface ForgeApiConfig extends TokenConfig {
  /** `FORGEBRIDGE_FORGE_API_URL`, without trailing slashes. */
  forgeApiUrl: string;
  /** The first entry of `FORGEBRIDGE_OAUTH_PROVIDER` (any provider when unset), of either kind. */
  client: TokenSourceConfig;
}

const CLIENTS_VAR = 'FORGEBRIDGE_OAUTH_CLIENTS';
const OPTIONAL_FIELDS = ['scope', 'resource', 'tokenUrl', 'secretParameter', 'secretEnv'] as const;
const KINDS = ['oauth_client_credentials', 'github_app'] as const;
const PERMISSION_LEVELS: ReadonlySet<string> = new Set(['read', 'write', 'admin']);
/** GitHub's limit on the repositories one installation token may be narrowed to. */
const MAX_REPOSITORIES = 500;

function name(index: number, field?: string): string {
  return `"${CLIENTS_VAR}[${index}]${field === undefined ? '' : `.${field}`}"`;
}

function absent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function field(entry: Record<string, unknown>, index: number, key: string, required: boolean) {
  const value = entry[key];
  if (absent(value)) {
    if (required) throw new TypeError(`${name(index, key)} is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw new TypeError(`${name(index, key)} must be a string`);
  return value;
}

function positiveInteger(value: unknown, label: string): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number <= 0) {
    throw new TypeError(`${label} must be a positive integer`);
  }
  return number;
}

function parseOAuthClient(record: Record<string, unknown>, index: number): OAuthClientConfig {
  const config: OAuthClientConfig = {
    ...(record.kind === undefined ? {} : { kind: 'oauth_client_credentials' as const }),
    provider: field(record, index, 'provider', true) as string,
    clientId: field(record, index, 'clientId', true) as string,
    site: field(record, index, 'site', true) as string,
  };
  for (const key of OPTIONAL_FIELDS) {
    const value = field(record, index, key, false);
    if (value !== undefined) config[key] = value;
  }
  return config;
}

function parseApiUrl(record: Record<string, unknown>, index: number): string | undefined {
  const value = field(record, index, 'apiUrl', false);
  if (value === undefined) return undefined;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError(`${name(index, 'apiUrl')} must be an http(s) URL`);
  }
  return value.replace(/\/+$/, '');
}

function parseRepositories(record: Record<string, unknown>, index: number) {
  const out: Pick<GitHubAppConfig, 'repositories' | 'repositoryIds'> = {};
  if (!absent(record.repositories)) {
    const list = record.repositories;
    const label = name(index, 'repositories');
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_REPOSITORIES) {
      throw new TypeError(`${label} must be an array of 1 to ${MAX_REPOSITORIES} repository names`);
    }
    out.repositories = list.map((entry, at) => {
      if (typeof entry !== 'string' || !/^[\w.-]+$/.test(entry)) {
        throw new TypeError(
          `"${CLIENTS_VAR}[${index}].repositories[${at}]" must be a repository name without its owner`,
        );
      }
      return entry;
    });
  }
  if (!absent(record.repositoryIds)) {
    const list = record.repositoryIds;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_REPOSITORIES) {
      throw new TypeError(`${name(index, 'repositoryIds')} must be an array of 1 to ${MAX_REPOSITORIES} ids`);
    }
    out.repositoryIds = list.map((entry, at) =>
      positiveInteger(entry, `"${CLIENTS_VAR}[${index}].repositoryIds[${at}]"`),
    );
  }
  return out;
}

function parsePermissions(record: Record<string, unknown>, index: number) {
  const value = record.permissions;
  if (absent(value)) return undefined;
  const label = name(index, 'permissions');
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    Object.keys(value).length === 0
  ) {
    throw new TypeError(`${label} must be an object of permission names and levels`);
  }
  const permissions: Record<string, GitHubAppPermissionLevel> = {};
  for (const [permission, level] of Object.entries(value)) {
    if (!/^[a-z][a-z_]*$/.test(permission)) {
      throw new TypeError(`${label} has an invalid permission name`);
    }
    if (typeof level !== 'string' || !PERMISSION_LEVELS.has(level)) {
      throw new TypeError(
        `"${CLIENTS_VAR}[${index}].permissions.${permission}" must be "read", "write" or "admin"`,
      );
    }
    permissions[permission] = level as GitHubAppPermissionLevel;
  }
  return permissions;
}

function parseGitHubApp(record: Record<string, unknown>, index: number): GitHubAppConfig {
  const provider = field(record, index, 'provider', true) as string;
  const rawAppId = record.appId;
  if (absent(rawAppId)) throw new TypeError(`${name(index, 'appId')} is required`);
  const appId =
    typeof rawAppId === 'number' ? String(positiveInteger(rawAppId, name(index, 'appId'))) : rawAppId;
  if (typeof appId !== 'string' || !/^[\w.-]+$/.test(appId)) {
    throw new TypeError(`${name(index, 'appId')} must be an app id or client id`);
  }
  const config: GitHubAppConfig = { kind: 'github_app', provider, appId };
  const account = field(record, index, 'account', false);
  const hasInstallation = !absent(record.installationId);
  if (hasInstallation && account !== undefined) {
    throw new TypeError(`${name(index, 'installationId')} and ${name(index, 'account')} are exclusive`);
  }
  if (hasInstallation) {
    config.installationId = positiveInteger(record.installationId, name(index, 'installationId'));
  } else if (account !== undefined) {
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/.test(account)) {
      throw new TypeError(`${name(index, 'account')} must be a user or organization login`);
    }
    config.account = account;
    const accountType = field(record, index, 'accountType', false);
    if (accountType !== undefined) {
      if (accountType !== 'org' && accountType !== 'user') {
        throw new TypeError(`${name(index, 'accountType')} must be "org" or "user"`);
      }
      config.accountType = accountType;
    }
  } else {
    throw new TypeError(`${name(index, 'installationId')} or ${name(index, 'account')} is required`);
  }
  for (const key of ['privateKeyParameter', 'privateKeyEnv'] as const) {
    const value = field(record, index, key, false);
    if (value !== undefined) config[key] = value;
  }
  const apiUrl = parseApiUrl(record, index);
  if (apiUrl !== undefined) config.apiUrl = apiUrl;
  Object.assign(config, parseRepositories(record, index));
  const permissions = parsePermissions(record, index);
  if (permissions !== undefined) config.permissions = permissions;
  return config;
}

function parseClient(entry: unknown, index: number): TokenSourceConfig {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new TypeError(`${name(index)} must be an object`);
  }
  const record = entry as Record<string, unknown>;
  const kind = record.kind ?? 'oauth_client_credentials';
  if (kind === 'github_app') return parseGitHubApp(record, index);
  if (kind === 'oauth_client_credentials') return parseOAuthClient(record, index);
  throw new TypeError(`${name(index, 'kind')} must be ${KINDS.map((k) => `"${k}"`).join(' or ')}`);
}

/**
 * Parses `FORGEBRIDGE_OAUTH_CLIENTS`, OAuth clients and GitHub App installations: an empty list when unset, a
 * `TypeError` naming a malformed field.
 */
export function readOAuthClients(env: Env = process.env): TokenSourceConfig[] {
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
