// Extension grants of the local authorization server: the resource owner password credentials grant
// (RFC 6749 §4.3) and the JWT bearer authorization grant (RFC 7523 §2.1), registered on oidc-provider with
// `registerGrantType`. Both really check their input and issue real tokens through the provider's models.
import { createHash, timingSafeEqual } from 'node:crypto';
import { decodeJwt, type JWTVerifyOptions, jwtVerify, type KeyInput } from 'jose';
import type { KoaContextWithOIDC, OidcClient, Provider, ResourceServerInfo } from 'oidc-provider';
import { errors } from 'oidc-provider';

/** The password grant's type, RFC 6749 §4.3.2. */
export const PASSWORD_GRANT = 'password';
/** The JWT bearer authorization grant's type, RFC 7523 §2.1. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** A resource owner of the local server (login name -> password and claims). */
export interface LocalAccount {
  password: string;
  claims?: Record<string, unknown>;
}

/** A party whose JWT bearer assertions the server accepts (RFC 7523 §3: `iss` names it). */
export interface AssertionIssuer {
  /** The assertion's required `iss`. */
  issuer: string;
  /** Key that verifies its signature: a public key (JWK, KeyObject, CryptoKey) or an HMAC secret. */
  key: KeyInput;
  /** Accepted JWS algorithms, e.g. `['RS256']`; default: what jose accepts for the key. */
  algorithms?: readonly string[];
}

/** What the extension grants need from the server: accounts, trusted assertion issuers and resources. */
export interface GrantSetup {
  accounts: ReadonlyMap<string, LocalAccount>;
  assertionIssuers: readonly AssertionIssuer[];
  /** Both the issuer and the token endpoint URL are accepted as the assertion's `aud` (RFC 7523 §3). */
  audiences: readonly string[];
  resourceServerInfo(resource: string): ResourceServerInfo | undefined;
}

type OidcError = Error & { error_description?: string };

function invalidGrant(description: string): OidcError {
  const error: OidcError = new errors.InvalidGrant(description);
  error.error_description = description;
  return error;
}

function invalidRequest(description: string): OidcError {
  return new errors.InvalidRequest(description);
}

function param(ctx: KoaContextWithOIDC, name: string): string | undefined {
  const value = ctx.oidc.params?.[name];
  if (Array.isArray(value)) throw invalidRequest(`'${name}' must be given once`);
  return value === undefined || value === '' ? undefined : value;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Constant-time password check: both sides are hashed to the same length before `timingSafeEqual`. */
export function passwordMatches(expected: string | undefined, given: string): boolean {
  const same = timingSafeEqual(digest(expected ?? '\u0000no account\u0000'), digest(given));
  return expected !== undefined && same;
}

interface IssueInput {
  accountId: string;
  gty: string;
  refreshToken: boolean;
}

function requestedScopes(ctx: KoaContextWithOIDC, client: OidcClient): string[] {
  const scope = param(ctx, 'scope');
  const requested = scope === undefined ? [] : [...new Set(scope.split(' ').filter(Boolean))];
  if (client.scope !== undefined) {
    const allowed = new Set(client.scope.split(' '));
    const denied = requested.find((item) => !allowed.has(item));
    if (denied !== undefined) throw new errors.InvalidScope('requested scope is not allowed', denied);
  }
  return requested;
}

async function issueTokens(ctx: KoaContextWithOIDC, setup: GrantSetup, input: IssueInput): Promise<void> {
  const { provider } = ctx.oidc;
  const client = ctx.oidc.client;
  if (client === undefined) throw invalidRequest('client authentication is required');
  const scopes = requestedScopes(ctx, client);
  const resource = param(ctx, 'resource');
  const info = resource === undefined ? undefined : setup.resourceServerInfo(resource);
  if (resource !== undefined && info === undefined) throw new errors.InvalidTarget();

  const grant = new provider.Grant({ accountId: input.accountId, clientId: client.clientId });
  if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
  const resourceScopes =
    info === undefined ? [] : scopes.filter((scope) => info.scope.split(' ').includes(scope));
  if (resource !== undefined) grant.addResourceScope(resource, resourceScopes.join(' '));
  const grantId = await grant.save();

  const accessToken = new provider.AccessToken({
    accountId: input.accountId,
    client,
    grantId,
    gty: input.gty,
    scope: scopes.join(' ') || undefined,
  });
  if (resource !== undefined && info !== undefined) {
    accessToken.resourceServer = new provider.ResourceServer(resource, info);
    accessToken.scope = resourceScopes.join(' ') || undefined;
  }
  ctx.oidc.entity('AccessToken', accessToken);
  const accessTokenValue = await accessToken.save();

  let refreshTokenValue: string | undefined;
  if (input.refreshToken && client.grantTypeAllowed('refresh_token')) {
    const refreshToken = new provider.RefreshToken({
      accountId: input.accountId,
      client,
      grantId,
      gty: input.gty,
      scope: scopes.join(' ') || undefined,
      resource,
      rotations: 0,
      expiresWithSession: false,
    });
    ctx.oidc.entity('RefreshToken', refreshToken);
    refreshTokenValue = await refreshToken.save();
  }

  ctx.body = {
    access_token: accessTokenValue,
    expires_in: accessToken.expiration,
    token_type: accessToken.tokenType ?? 'Bearer',
    ...(refreshTokenValue === undefined ? {} : { refresh_token: refreshTokenValue }),
    ...(accessToken.scope ? { scope: accessToken.scope } : {}),
  };
}

/**
 * Registers the password grant: `username` and `password` are checked (constant-time) against the
 * configured accounts; a wrong pair is `invalid_grant`. Issues an access token and, when the client may use
 * `refresh_token`, a refresh token.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.3
 */
export function registerPasswordGrant(provider: Provider, setup: GrantSetup): void {
  provider.registerGrantType(
    PASSWORD_GRANT,
    async (ctx) => {
      const username = param(ctx, 'username');
      const password = param(ctx, 'password');
      if (username === undefined) throw invalidRequest("missing required parameter 'username'");
      if (password === undefined) throw invalidRequest("missing required parameter 'password'");
      const account = setup.accounts.get(username);
      if (!passwordMatches(account?.password, password)) {
        throw invalidGrant('invalid resource owner credentials');
      }
      await issueTokens(ctx, setup, { accountId: username, gty: PASSWORD_GRANT, refreshToken: true });
    },
    ['username', 'password', 'scope', 'resource'],
  );
}

/**
 * Registers the JWT bearer grant: the `assertion` must be signed by a configured issuer's key, name it in
 * `iss`, carry the server (issuer or token endpoint) in `aud`, an unexpired `exp`, and a known account in
 * `sub`. A `jti` may be used once. No refresh token is issued (RFC 7523 §2.1 leaves it to the server).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7523#section-3
 */
export function registerJwtBearerGrant(provider: Provider, setup: GrantSetup): void {
  const seen = new Map<string, number>();
  provider.registerGrantType(
    JWT_BEARER_GRANT,
    async (ctx) => {
      const assertion = param(ctx, 'assertion');
      if (assertion === undefined) throw invalidRequest("missing required parameter 'assertion'");
      let claimedIssuer: unknown;
      try {
        claimedIssuer = decodeJwt(assertion).iss;
      } catch {
        throw invalidGrant('assertion is not a well-formed JWT');
      }
      const trusted = setup.assertionIssuers.find((candidate) => candidate.issuer === claimedIssuer);
      if (trusted === undefined) throw invalidGrant('assertion "iss" is not a trusted issuer');
      const options: JWTVerifyOptions = {
        issuer: trusted.issuer,
        audience: [...setup.audiences],
        requiredClaims: ['iss', 'sub', 'aud', 'exp'],
        clockTolerance: 5,
      };
      if (trusted.algorithms !== undefined) options.algorithms = [...trusted.algorithms];
      let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
      try {
        ({ payload } = await jwtVerify(assertion, trusted.key, options));
      } catch (error) {
        throw invalidGrant(`assertion rejected: ${(error as Error).message}`);
      }
      const now = Math.floor(Date.now() / 1000);
      for (const [jti, exp] of seen) if (exp < now) seen.delete(jti);
      if (typeof payload.jti === 'string') {
        if (seen.has(payload.jti)) throw invalidGrant('assertion "jti" was already used');
        seen.set(payload.jti, payload.exp ?? now);
      }
      const subject = payload.sub ?? '';
      if (!setup.accounts.has(subject)) throw invalidGrant('assertion "sub" is not a known account');
      await issueTokens(ctx, setup, { accountId: subject, gty: JWT_BEARER_GRANT, refreshToken: false });
    },
    ['assertion', 'scope', 'resource'],
  );
}
