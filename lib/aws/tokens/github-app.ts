/**
 * GitHub App installation tokens: the app signs a short JWT with its private key and trades it for an
 * installation token at `POST {api}/app/installations/{id}/access_tokens`. The token comes back as a lib/oauth2
 * `AccessToken` (stored `toHash()`-shaped by the `TokenStore`), so a subscriber calls the API with either kind the
 * same way. The private key and the JWT never reach a log line or an error message.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { AccessToken, Client, type ConnectionOptions, type Response } from '../../oauth2/index.js';
import { AwsDefaults } from '../constants.js';
import { GitHubAppError } from '../errors.js';
import type { TokenKey } from '../types.js';
import type { GitHubAppConfig } from './config.js';
import type { TokenTarget } from './token-store.js';

/** The REST API version the requests ask for. */
const API_VERSION = '2022-11-28';
const GITHUB_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': API_VERSION };
/** Longest part of a forge's `message` quoted in an error. */
const MAX_MESSAGE_LENGTH = 200;

/**
 * The token-table key of an installation: `provider#app/<appId>#<scope>`, the scope naming the installation (or
 * the account it is looked up by) and the narrowing, so a narrowed token never stands in for a wider one.
 */
export function gitHubAppKey(config: GitHubAppConfig): TokenKey {
  const parts = [
    config.installationId === undefined
      ? `account/${config.account ?? ''}`
      : `installation/${config.installationId}`,
    ...(config.repositories ?? []).map((name) => `repository/${name}`),
    ...(config.repositoryIds ?? []).map((id) => `repository_id/${id}`),
    ...Object.entries(config.permissions ?? {}).map(([name, level]) => `permission/${name}:${level}`),
  ];
  return { provider: config.provider, clientId: `app/${config.appId}`, scope: parts.join(' ') };
}

/**
 * Reads an app's private key (PEM, PKCS#1 as GitHub hands it out, or PKCS#8). A key pasted on one line with
 * literal `\n` is accepted. The error names only the app, never the key.
 */
export function loadGitHubAppKey(pem: string, appId: string): KeyObject {
  const text = pem.includes('\n') ? pem : pem.replaceAll('\\n', '\n');
  let key: KeyObject | undefined;
  try {
    key = createPrivateKey(text);
  } catch {
    key = undefined;
  }
  if (key?.asymmetricKeyType !== 'rsa') {
    throw new GitHubAppError(`the private key of app "${appId}" is not an rsa private key in pem`);
  }
  return key;
}

/** Signs the app JWT: RS256, `iss` = the app id, `iat` backdated 60 s, `exp` 9 minutes ahead. */
export function signGitHubAppJwt(appId: string, key: KeyObject, nowMs: number = Date.now()): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(appId)
    .setIssuedAt(now - AwsDefaults.githubAppJwtBackdateSeconds)
    .setExpirationTime(now + AwsDefaults.githubAppJwtSeconds)
    .sign(key);
}

/** The forge's `message` field, cleaned for an error message: one line, bounded, the JWT redacted. */
function forgeMessage(response: Response, jwt: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return undefined;
  }
  const message = (body as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || message === '') return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is stripped
  const line = message.replaceAll(jwt, '[FILTERED]').replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return line.length > MAX_MESSAGE_LENGTH ? `${line.slice(0, MAX_MESSAGE_LENGTH)}…` : line;
}

function refused(what: string, response: Response, jwt: string): GitHubAppError {
  const message = forgeMessage(response, jwt);
  return new GitHubAppError(
    `${what} failed: ${response.status}${message === undefined ? '' : ` ${JSON.stringify(message)}`}`,
    { status: response.status },
  );
}

function parseObject(response: Response): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(response.body);
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON body narrowing the token, or `undefined` for the installation's full access. */
function narrowing(config: GitHubAppConfig): string | undefined {
  const body: Record<string, unknown> = {};
  if (config.repositories !== undefined) body.repositories = config.repositories;
  if (config.repositoryIds !== undefined) body.repository_ids = config.repositoryIds;
  if (config.permissions !== undefined) body.permissions = config.permissions;
  return Object.keys(body).length === 0 ? undefined : JSON.stringify(body);
}

/** Options of {@link gitHubAppTarget}. */
export interface GitHubAppTargetOptions {
  /** HTTP options of the token and API requests (timeout, proxy, dispatcher). Default lib/oauth2's. */
  connection?: ConnectionOptions | undefined;
  /** Clock in ms the JWT's `iat` and `exp` are taken from. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * The token-table target of one GitHub App installation: its key, and a lib/oauth2 `Client` on the API's base
 * URL that loads stored tokens and makes the API calls with them. Fetching a token signs a new app JWT, looks the
 * installation up when only the account is configured (once per process), and posts to `access_tokens`.
 */
export function gitHubAppTarget(
  config: GitHubAppConfig,
  privateKey: KeyObject,
  options: GitHubAppTargetOptions = {},
): TokenTarget<AccessToken> {
  const apiUrl = config.apiUrl ?? AwsDefaults.githubApiUrl;
  const connection = options.connection ?? {};
  const client = new Client(config.appId, undefined, {
    site: apiUrl,
    connection: { ...connection, headers: { ...GITHUB_HEADERS, ...connection.headers } },
  });
  const now = options.now ?? Date.now;
  const app = `app "${config.appId}"`;
  let installationId = config.installationId;

  const send = async (verb: string, path: string, jwt: string, body?: string): Promise<Response> => {
    try {
      return await client.request(verb, `${apiUrl}${path}`, {
        headers: {
          authorization: `Bearer ${jwt}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body }),
        raiseErrors: false,
        redact: [jwt],
        maxResponseBytes: AwsDefaults.githubTokenMaxResponseBytes,
      });
    } catch (error) {
      // lib/oauth2's transport errors redact the request's secrets (the JWT is one).
      const reason = error instanceof Error ? error.message.replaceAll(jwt, '[FILTERED]') : 'request failed';
      throw new GitHubAppError(`${verb} ${path} of ${app} failed: ${reason}`, { cause: error });
    }
  };

  const lookUp = async (account: string, jwt: string): Promise<number> => {
    const kinds =
      config.accountType === undefined ? (['orgs', 'users'] as const) : ([`${config.accountType}s`] as const);
    let last: Response | undefined;
    for (const kind of kinds) {
      const path = `/${kind}/${encodeURIComponent(account)}/installation`;
      last = await send('GET', path, jwt);
      if (last.status === 404) continue;
      if (last.status < 200 || last.status >= 300) throw refused(`installation lookup of ${app}`, last, jwt);
      const id = parseObject(last)?.id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
        throw new GitHubAppError(`installation lookup of ${app} answered ${last.status} without an "id"`, {
          status: last.status,
        });
      }
      return id;
    }
    throw refused(`installation lookup of ${app} for account "${account}"`, last as Response, jwt);
  };

  const fetchToken = async (): Promise<AccessToken> => {
    const jwt = await signGitHubAppJwt(config.appId, privateKey, now());
    const id = installationId ?? (await lookUp(config.account as string, jwt));
    const response = await send('POST', `/app/installations/${id}/access_tokens`, jwt, narrowing(config));
    if (response.status < 200 || response.status >= 300) {
      // A looked-up installation that is gone (the app was reinstalled) is looked up again next time.
      if (response.status === 404 && config.installationId === undefined) installationId = undefined;
      throw refused(`installation token request of ${app}`, response, jwt);
    }
    installationId = id;
    const body = parseObject(response);
    const token = body?.token;
    const expiresAt = typeof body?.expires_at === 'string' ? Date.parse(body.expires_at) : Number.NaN;
    if (typeof token !== 'string' || token === '' || Number.isNaN(expiresAt)) {
      throw new GitHubAppError(
        `installation token request of ${app} answered ${response.status} without a "token" and an "expires_at"`,
        { status: response.status },
      );
    }
    return new AccessToken(client, token, {
      expires_at: Math.floor(expiresAt / 1000),
      token_type: 'bearer',
      ...(body?.permissions === undefined ? {} : { permissions: body.permissions }),
      ...(body?.repository_selection === undefined
        ? {}
        : { repository_selection: body.repository_selection }),
    });
  };

  return {
    key: gitHubAppKey(config),
    fromHash: (hash) => AccessToken.fromHash(client, hash),
    fetchToken,
  };
}
