// GitHub's app authentication, locally: the routes of the forge API (local-stack/forge-api.ts) that take an app
// JWT and give installation tokens, checking the JWT the way GitHub does: RS256 signed with the app's registered
// public key, `iss` the app id, `iat` not in the future (a few seconds of tolerance), `exp` not passed and at most
// 10 minutes after `iat`. Keys can be revoked and the clock set, so tests can make each check fail.
import { randomBytes } from 'node:crypto';
import {
  type CryptoKey,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  jwtVerify,
  type KeyObject,
} from 'jose';

/** An installation of a registered app. */
export interface LocalInstallation {
  id: number;
  appId: string;
  /** The account the app is installed on. */
  account: { login: string; type: 'Organization' | 'User' };
  /** What the installation may do. Default `{ issues: 'read', metadata: 'read' }`. */
  permissions?: Record<string, string>;
  /** The repositories it may see; absent: all (`repository_selection: 'all'`). */
  repositories?: string[];
}

/** Options of {@link createGitHubApps}. */
export interface GitHubAppsOptions {
  /** The server's clock in ms. Default `Date.now` (a test sets it behind or ahead of the client's). */
  now?: () => number;
  /** How far in the future an `iat` may be, in seconds. Default 5. */
  clockToleranceSeconds?: number;
  /** Lifetime of an installation token, in seconds. Default 3600, as GitHub's. */
  tokenLifetimeSeconds?: number;
}

/** An answer to an app route. */
export interface AppAnswer {
  status: number;
  body: unknown;
}

/** What an installation token the server issued stands for. */
export interface InstallationGrant {
  appId: string;
  installationId: number;
  permissions: Record<string, string>;
}

/** The local GitHub App authority, served by the forge API. */
export interface GitHubApps {
  /** Registers an app and the public key its JWTs are checked with (replacing an earlier one). */
  registerApp(appId: string, publicKey: CryptoKey | KeyObject): void;
  /** Revokes the app's key: its JWTs are refused from now on, as GitHub refuses a deleted key's. */
  revokeKey(appId: string): void;
  addInstallation(installation: LocalInstallation): void;
  /** Answers an app route (`/app/installations/:id/access_tokens`, `/orgs|users/:login/installation`), or `undefined`. */
  handle(
    method: string,
    path: string,
    authorization: string | undefined,
    body: string,
  ): Promise<AppAnswer | undefined>;
  /** The installation a token stands for while it is valid. */
  verifyInstallationToken(token: string): InstallationGrant | undefined;
  /** `POST .../access_tokens` requests so far, answered or refused. */
  accessTokenRequests(): number;
  resetCounters(): void;
}

const DOCUMENTATION_URL = 'https://docs.github.com/rest';
const MAX_JWT_LIFETIME_SECONDS = 600;
const ACCESS_TOKENS_PATH = /^\/app\/installations\/(\d+)\/access_tokens$/;
const LOOKUP_PATH = /^\/(orgs|users)\/([^/]+)\/installation$/;
const DEFAULT_PERMISSIONS = { issues: 'read', metadata: 'read' };

function refuse(status: number, message: string): AppAnswer {
  return { status, body: { message, documentation_url: DOCUMENTATION_URL } };
}

/** GitHub's timestamps: ISO 8601 in UTC without milliseconds. */
function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Starts an empty authority; register apps and installations on it. */
export function createGitHubApps(options: GitHubAppsOptions = {}): GitHubApps {
  const now = options.now ?? Date.now;
  const tolerance = options.clockToleranceSeconds ?? 5;
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const keys = new Map<string, CryptoKey | KeyObject | 'revoked'>();
  const installations = new Map<number, LocalInstallation>();
  const tokens = new Map<string, InstallationGrant & { expiresAtMs: number }>();
  let accessTokenRequests = 0;

  /** The app a JWT authenticates, or GitHub's refusal. */
  const authenticate = async (authorization: string | undefined): Promise<string | AppAnswer> => {
    const jwt = /^Bearer ([\w-]+\.[\w-]+\.[\w-]+)$/i.exec(authorization ?? '')?.[1];
    if (jwt === undefined) {
      return authorization === undefined
        ? refuse(401, 'Requires authentication')
        : refuse(401, 'A JSON web token could not be decoded');
    }
    let unverified: JWTPayload;
    try {
      if (decodeProtectedHeader(jwt).alg !== 'RS256')
        return refuse(401, 'A JSON web token could not be decoded');
      unverified = decodeJwt(jwt);
    } catch {
      return refuse(401, 'A JSON web token could not be decoded');
    }
    const appId = typeof unverified.iss === 'string' ? unverified.iss : String(unverified.iss ?? '');
    const key = keys.get(appId);
    if (key === undefined) return refuse(401, 'Integration not found');
    if (key === 'revoked') return refuse(401, 'A JSON web token could not be decoded');
    const current = now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, key, {
        algorithms: ['RS256'],
        issuer: appId,
        currentDate: new Date(current),
        requiredClaims: ['iat', 'exp', 'iss'],
      }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        return refuse(
          401,
          "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        );
      }
      return refuse(401, 'A JSON web token could not be decoded');
    }
    const seconds = Math.floor(current / 1000);
    const iat = payload.iat as number;
    const exp = payload.exp as number;
    if (iat > seconds + tolerance) {
      return refuse(401, "'Issued at' claim ('iat') must be an Integer representing a time in the past");
    }
    if (exp - iat > MAX_JWT_LIFETIME_SECONDS || exp > seconds + MAX_JWT_LIFETIME_SECONDS + tolerance) {
      return refuse(401, "'Expiration time' claim ('exp') is too far in the future");
    }
    return appId;
  };

  const issue = (installation: LocalInstallation, body: string): AppAnswer => {
    let request: { repositories?: unknown; repository_ids?: unknown; permissions?: unknown } = {};
    if (body !== '') {
      try {
        request = JSON.parse(body) as typeof request;
      } catch {
        return refuse(400, 'Problems parsing JSON');
      }
      if (typeof request !== 'object' || request === null) return refuse(400, 'Problems parsing JSON');
    }
    const granted: Record<string, string> = installation.permissions ?? DEFAULT_PERMISSIONS;
    let permissions = granted;
    if (request.permissions !== undefined) {
      const asked = request.permissions as Record<string, unknown>;
      if (
        typeof asked !== 'object' ||
        asked === null ||
        Object.entries(asked).some(
          ([name, level]) => granted[name] === undefined || (level === 'write' && granted[name] === 'read'),
        )
      ) {
        return refuse(422, 'The permissions requested are not granted to this installation.');
      }
      permissions = asked as Record<string, string>;
    }
    const repositories = request.repositories;
    if (repositories !== undefined) {
      const visible = installation.repositories;
      if (
        !Array.isArray(repositories) ||
        repositories.some(
          (name) => typeof name !== 'string' || (visible !== undefined && !visible.includes(name)),
        )
      ) {
        return refuse(
          422,
          'There is at least one repository that does not exist or is not accessible to the parent installation.',
        );
      }
    }
    const narrowed = repositories !== undefined || request.repository_ids !== undefined;
    const token = installationTokenValue();
    const expiresAtMs = now() + lifetime * 1000;
    tokens.set(token, {
      appId: installation.appId,
      installationId: installation.id,
      permissions,
      expiresAtMs,
    });
    return {
      status: 201,
      body: {
        token,
        expires_at: isoSeconds(expiresAtMs),
        permissions,
        repository_selection: narrowed || installation.repositories !== undefined ? 'selected' : 'all',
        ...(Array.isArray(repositories) && { repositories: repositories.map((name) => ({ name })) }),
      },
    };
  };

  return {
    registerApp(appId, publicKey) {
      keys.set(appId, publicKey);
    },
    revokeKey(appId) {
      if (keys.has(appId)) keys.set(appId, 'revoked');
    },
    addInstallation(installation) {
      installations.set(installation.id, structuredClone(installation));
    },
    async handle(method, path, authorization, body) {
      const tokenPath = ACCESS_TOKENS_PATH.exec(path);
      const lookup = LOOKUP_PATH.exec(path);
      if (tokenPath === null && lookup === null) return undefined;
      if (tokenPath !== null) accessTokenRequests += 1;
      if (method !== (tokenPath === null ? 'GET' : 'POST')) return refuse(404, 'Not Found');
      const appId = await authenticate(authorization);
      if (typeof appId !== 'string') return appId;
      if (tokenPath !== null) {
        const installation = installations.get(Number(tokenPath[1]));
        if (installation?.appId !== appId) return refuse(404, 'Not Found');
        return issue(installation, body);
      }
      const [, kind, login] = lookup as RegExpExecArray;
      const type = kind === 'orgs' ? 'Organization' : 'User';
      const found = [...installations.values()].find(
        (installation) =>
          installation.appId === appId &&
          installation.account.type === type &&
          installation.account.login.toLowerCase() === decodeURIComponent(login ?? '').toLowerCase(),
      );
      if (found === undefined) return refuse(404, 'Not Found');
      return {
        status: 200,
        body: {
          id: found.id,
          app_id: Number(found.appId) || found.appId,
          account: found.account,
          permissions: found.permissions ?? DEFAULT_PERMISSIONS,
          repository_selection: found.repositories === undefined ? 'all' : 'selected',
        },
      };
    },
    verifyInstallationToken(token) {
      const grant = tokens.get(token);
      if (grant === undefined || grant.expiresAtMs <= now()) return undefined;
      const { expiresAtMs: _, ...rest } = grant;
      return { ...rest, permissions: { ...rest.permissions } };
    },
    accessTokenRequests: () => accessTokenRequests,
    resetCounters() {
      accessTokenRequests = 0;
    },
  };
}

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** GitHub's installation token shape: `ghs_` and 36 letters and digits (never `-` or `_`, which base64url has). */
function installationTokenValue(): string {
  const bytes = randomBytes(36);
  let body = '';
  for (const byte of bytes) body += TOKEN_ALPHABET[byte % TOKEN_ALPHABET.length];
  return `ghs_${body}`;
}
