// The local OAuth 2.0 authorization server: a real oidc-provider (panva) running in-process on 127.0.0.1.
// Used by the oauth2 integration tests, the token-store tests, the benchmark and the local stack (`npm start`).
// See docs/oauth2-testing.md for what it is configured with and how to use it.
import { randomBytes, X509Certificate } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type {
  Account,
  ClientMetadata,
  KoaContextWithOIDC,
  OidcClient,
  ResourceServerInfo,
} from 'oidc-provider';
import Provider, { errors } from 'oidc-provider';
import { createMemoryAdapter } from './authorization-server-adapter.js';
import {
  type AssertionIssuer,
  type GrantSetup,
  type LocalAccount,
  registerJwtBearerGrant,
  registerPasswordGrant,
} from './authorization-server-grants.js';

export type { AssertionIssuer, LocalAccount } from './authorization-server-grants.js';
export { JWT_BEARER_GRANT, PASSWORD_GRANT } from './authorization-server-grants.js';

/** Paths of the server's endpoints. They match the oauth2 gem's defaults, so `site: issuer` just works. */
export const AUTHORIZATION_SERVER_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  userinfo: '/oauth/userinfo',
  jwks: '/oauth/jwks',
} as const;

/** The resource indicator (RFC 8707) of the local stack's forge API: its access tokens are JWTs for it. */
export const FORGE_API_RESOURCE = 'urn:forgebridge:forge-api';
/** Scopes the forge API resource knows. */
export const FORGE_API_SCOPES = 'forge:read forge:write';

/** The client the local stack uses for client_credentials (client_secret_basic). */
export const DEFAULT_CLIENT = {
  client_id: 'forgebridge-local',
  client_secret: 'forgebridge-local-secret',
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: FORGE_API_SCOPES,
} as const satisfies ClientMetadata;

/** The resource owner the local stack knows (password grant, devInteractions login, JWT bearer `sub`). */
export const DEFAULT_ACCOUNTS: Readonly<Record<string, LocalAccount>> = {
  alice: { password: 'alice-local-password', claims: { name: 'Alice', email: 'alice@forge.test' } },
};

/** Options of {@link startAuthorizationServer}; every field is optional. */
export interface AuthorizationServerOptions {
  /** Port to listen on (127.0.0.1). Default `0`: an ephemeral port. */
  port?: number;
  /** Statically registered clients (oidc-provider client metadata). Default: `[DEFAULT_CLIENT]`. */
  clients?: readonly ClientMetadata[];
  /** Resource owners. Default: {@link DEFAULT_ACCOUNTS}. */
  accounts?: Readonly<Record<string, LocalAccount>>;
  /** Resource indicators the server issues JWT access tokens for, with their scopes and TTL.
   *  Default: `{ [FORGE_API_RESOURCE]: { scope: FORGE_API_SCOPES } }`. */
  resources?: Readonly<Record<string, { scope: string; accessTokenTtl?: number }>>;
  /** Issuers whose RFC 7523 assertions the JWT bearer grant accepts. Default: none. */
  assertionIssuers?: readonly AssertionIssuer[];
  /** Access token lifetime in seconds (all grants, unless a resource sets its own). Default `3600`. */
  accessTokenTtl?: number;
  /** Whether every refresh rotates the refresh token (the old one is consumed: reuse revokes the grant).
   *  Default `true`. */
  rotateRefreshToken?: boolean;
  /** Clients whose refresh responses carry no `refresh_token` (the old one stays valid, never rotated),
   *  as some providers do. Default: none. */
  omitRefreshTokenOnRefresh?: readonly string[];
  /** Serve HTTPS with these PEMs and ask for (but do not require) a client certificate, for
   *  `tls_client_auth` (RFC 8705). A certificate is trusted when it chains to `ca`. Default: plain HTTP. */
  tls?: { key: string; cert: string; ca: string };
  /** Enable oidc-provider's development login/consent pages for the authorization code flow. Default `true`. */
  devInteractions?: boolean;
  /** A path for the issuer, like a realm (`'/realms/main'`): every endpoint lives under it. Default none. */
  issuerPath?: string;
  /** Which discovery documents are served: OpenID Connect's `<issuer>/.well-known/openid-configuration`,
   *  RFC 8414's `<origin>/.well-known/oauth-authorization-server<issuer path>`, or both. Default `'openid'`. */
  discovery?: 'openid' | 'oauth' | 'both';
  /** Milliseconds every token endpoint request waits before it is handled, to make a slow server
   *  (timeouts, refreshes in flight while other callers arrive). Default `0`. */
  tokenEndpointDelayMs?: number;
}

/** A running local authorization server. */
export interface AuthorizationServer {
  /** The issuer identifier, e.g. `http://127.0.0.1:54321` (no trailing slash). */
  readonly issuer: string;
  readonly port: number;
  /** Absolute URL of the token endpoint. */
  readonly tokenEndpoint: string;
  /** Absolute URL of the JWKS that verifies its JWT access tokens and ID tokens. */
  readonly jwksUri: string;
  /** The accounts it knows. */
  readonly accounts: Readonly<Record<string, LocalAccount>>;
  /** The oidc-provider instance, for tests that need more. */
  readonly provider: Provider;
  /** Token endpoint requests since start or the last reset; with a grant type, only those. */
  tokenRequests(grantType?: string): number;
  resetCounters(): void;
  stop(): Promise<void>;
}

const clientAuthMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'tls_client_auth'];

function peerCertificate(ctx: KoaContextWithOIDC): X509Certificate | undefined {
  const socket = ctx.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const peer = socket.getPeerCertificate();
  if (peer === null || peer === undefined || !peer.raw) return undefined;
  return new X509Certificate(peer.raw);
}

// RFC 4514 order (most specific first) of Node's subject, which lists the RDNs in DER order, one per line.
const subjectDn = (certificate: X509Certificate): string =>
  certificate.subject.split('\n').filter(Boolean).reverse().join(',');

function certificateSubjectMatches(ctx: KoaContextWithOIDC, property: string, expected: string): boolean {
  const certificate = peerCertificate(ctx);
  if (certificate === undefined) return false;
  const names = (certificate.subjectAltName ?? '').split(', ');
  switch (property) {
    case 'tls_client_auth_subject_dn':
      return subjectDn(certificate) === expected;
    case 'tls_client_auth_san_dns':
      return names.includes(`DNS:${expected}`);
    case 'tls_client_auth_san_uri':
      return names.includes(`URI:${expected}`);
    case 'tls_client_auth_san_ip':
      return names.includes(`IP Address:${expected}`);
    case 'tls_client_auth_san_email':
      return names.includes(`email:${expected}`);
    default:
      return false;
  }
}

async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

const OPTION_KEYS: ReadonlySet<string> = new Set([
  'port',
  'clients',
  'accounts',
  'resources',
  'assertionIssuers',
  'accessTokenTtl',
  'rotateRefreshToken',
  'omitRefreshTokenOnRefresh',
  'tls',
  'devInteractions',
  'issuerPath',
  'discovery',
  'tokenEndpointDelayMs',
]);

function validateOptions(options: AuthorizationServerOptions): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`'options' must be an object`);
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`'${key}' is not a known authorization server option`);
  }
  const { port, accessTokenTtl, issuerPath, discovery, tls } = options;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new TypeError(`'port' must be an integer from 0 to 65535`);
  }
  if (accessTokenTtl !== undefined && (!Number.isInteger(accessTokenTtl) || accessTokenTtl <= 0)) {
    throw new TypeError(`'accessTokenTtl' must be a positive integer of seconds`);
  }
  if (issuerPath !== undefined && !/^(\/[\w.~-]+)+\/?$/.test(issuerPath)) {
    throw new TypeError(`'issuerPath' must look like "/realms/main"`);
  }
  const delay = options.tokenEndpointDelayMs;
  if (delay !== undefined && (!Number.isInteger(delay) || delay < 0)) {
    throw new TypeError(`'tokenEndpointDelayMs' must be a non-negative integer`);
  }
  if (discovery !== undefined && !['openid', 'oauth', 'both'].includes(discovery)) {
    throw new TypeError(`'discovery' must be "openid", "oauth" or "both"`);
  }
  if (
    tls !== undefined &&
    !['key', 'cert', 'ca'].every((field) => typeof tls[field as keyof typeof tls] === 'string')
  ) {
    throw new TypeError(`'tls' must have PEM strings 'key', 'cert' and 'ca'`);
  }
}

/**
 * Starts an oidc-provider on 127.0.0.1 with client_credentials, authorization code + PKCE (required),
 * refresh tokens, the password and JWT bearer grants, revocation, introspection, resource indicators with
 * JWT access tokens, and every client authentication method the library speaks (client_secret_basic,
 * client_secret_post, private_key_jwt, tls_client_auth).
 *
 * @example
 * const server = await startAuthorizationServer();
 * const client = new Client(DEFAULT_CLIENT.client_id, DEFAULT_CLIENT.client_secret, { site: server.issuer });
 * const token = await client.clientCredentials.getToken({ resource: FORGE_API_RESOURCE });
 * await server.stop();
 * @see https://www.rfc-editor.org/rfc/rfc6749
 */
export async function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): Promise<AuthorizationServer> {
  validateOptions(options);
  const server = options.tls
    ? createHttpsServer({ ...options.tls, requestCert: true, rejectUnauthorized: false })
    : createHttpServer();
  const port = await listen(server, options.port ?? 0);
  try {
    return await serve(server, port, options);
  } catch (error) {
    server.close();
    throw error;
  }
}

async function serve(
  server: Server,
  port: number,
  options: AuthorizationServerOptions,
): Promise<AuthorizationServer> {
  const clients = (options.clients ?? [DEFAULT_CLIENT]).map((client) => structuredClone(client));
  const accountRecord = options.accounts ?? DEFAULT_ACCOUNTS;
  const accounts = new Map(Object.entries(accountRecord));
  const resources = options.resources ?? { [FORGE_API_RESOURCE]: { scope: FORGE_API_SCOPES } };
  const accessTokenTtl = options.accessTokenTtl ?? 3600;
  const omitRefreshToken = new Set(options.omitRefreshTokenOnRefresh ?? []);
  const rotateRefreshToken = options.rotateRefreshToken ?? true;
  const tokenEndpointDelayMs = options.tokenEndpointDelayMs ?? 0;
  const issuerPath = (options.issuerPath ?? '').replace(/\/+$/, '');
  const discovery = options.discovery ?? 'openid';
  const issuer = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}${issuerPath}`;
  const tokenEndpoint = `${issuer}${AUTHORIZATION_SERVER_ROUTES.token}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'local-rs256' };

  const resourceServerInfo = (resource: string): ResourceServerInfo | undefined => {
    if (!Object.hasOwn(resources, resource)) return undefined;
    const resourceOptions = resources[resource]!;
    return {
      scope: resourceOptions.scope,
      audience: resource,
      accessTokenFormat: 'jwt',
      accessTokenTTL: resourceOptions.accessTokenTtl ?? accessTokenTtl,
      jwt: { sign: { alg: 'RS256' } },
    };
  };
  const apiScopes = Object.values(resources).flatMap((resource) => resource.scope.split(' '));

  const provider = new Provider(issuer, {
    clients,
    adapter: createMemoryAdapter(),
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    routes: AUTHORIZATION_SERVER_ROUTES,
    scopes: [...new Set(['openid', 'offline_access', 'profile', 'email', ...apiScopes])],
    claims: { openid: ['sub'], profile: ['name'], email: ['email'] },
    clientAuthMethods,
    async findAccount(_ctx: unknown, id: string): Promise<Account | undefined> {
      const account = accounts.get(id);
      if (account === undefined) return undefined;
      return { accountId: id, claims: () => ({ ...account.claims, sub: id }) };
    },
    pkce: { required: () => true },
    // 'id_token token' lets the implicit strategy (access token in the fragment) be tried end to end;
    // oidc-provider has no plain OAuth 'token' response type.
    responseTypes: ['code', 'id_token token', 'none'],
    // Refresh tokens for every client allowed the refresh_token grant, with or without offline_access.
    issueRefreshToken: async (_ctx: unknown, client: OidcClient) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: (ctx: KoaContextWithOIDC) =>
      rotateRefreshToken && !omitRefreshToken.has(ctx.oidc.client?.clientId ?? ''),
    clientBasedCORS: () => false,
    // The gem's 'query' token mode exists for providers that read the token from the query: accept it.
    acceptQueryParamAccessTokens: true,
    ttl: {
      AccessToken: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? accessTokenTtl,
      ClientCredentials: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    features: {
      devInteractions: { enabled: options.devInteractions ?? true },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientAuthMethod?: string }) =>
          client.clientAuthMethod !== 'none',
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: OidcClient, token: { clientId?: string }) =>
          token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => {
          const info = resourceServerInfo(resource);
          if (info === undefined) throw new errors.InvalidTarget();
          return info;
        },
      },
      mTLS: {
        enabled: true,
        tlsClientAuth: true,
        getCertificate: (ctx: KoaContextWithOIDC) => peerCertificate(ctx)?.toString(),
        certificateAuthorized: (ctx: KoaContextWithOIDC) =>
          (ctx.socket as Partial<TLSSocket>).authorized === true,
        certificateSubjectMatches,
      },
    },
  });

  const setup: GrantSetup = {
    accounts,
    assertionIssuers: options.assertionIssuers ?? [],
    audiences: [issuer, tokenEndpoint],
    resourceServerInfo,
  };
  registerPasswordGrant(provider, setup);
  registerJwtBearerGrant(provider, setup);

  const counts = new Map<string, number>();
  let total = 0;
  provider.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== AUTHORIZATION_SERVER_ROUTES.token) return next();
    total += 1;
    try {
      if (tokenEndpointDelayMs > 0) await setTimeout(tokenEndpointDelayMs);
      await next();
    } finally {
      const grantType = ctx.oidc?.params?.grant_type;
      if (typeof grantType === 'string') counts.set(grantType, (counts.get(grantType) ?? 0) + 1);
      const body = ctx.body as Record<string, unknown> | undefined;
      if (grantType === 'refresh_token' && omitRefreshToken.has(ctx.oidc?.client?.clientId ?? '') && body) {
        delete body.refresh_token;
      }
    }
  });
  // A server_error is a bug in this server's configuration or grants: say so once, briefly.
  provider.on('server_error', (_ctx, error) => {
    console.warn(`local authorization server: server_error: ${(error as Error).message}`);
  });

  const callback = provider.callback();
  const oidcDocument = '/.well-known/openid-configuration';
  const oauthDocument = `/.well-known/oauth-authorization-server${issuerPath}`;
  server.on('request', (req, res) => {
    const [path = '/', query] = (req.url ?? '/').split(/\?(.*)/s, 2);
    const search = query === undefined ? '' : `?${query}`;
    let inner: string | undefined;
    if (path === oauthDocument && discovery !== 'openid') inner = oidcDocument;
    else if (path === `${issuerPath}${oidcDocument}` && discovery === 'oauth') inner = undefined;
    else if (issuerPath === '') inner = path;
    else if (path.startsWith(`${issuerPath}/`)) inner = path.slice(issuerPath.length);
    if (inner === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    // Mounted like an Express sub-app: oidc-provider reads the mount path from originalUrl.
    Object.assign(req, { originalUrl: `${issuerPath}${inner}${search}` });
    req.url = `${inner}${search}`;
    callback(req, res);
  });

  return {
    issuer,
    port,
    tokenEndpoint,
    jwksUri: `${issuer}${AUTHORIZATION_SERVER_ROUTES.jwks}`,
    accounts: accountRecord,
    provider,
    tokenRequests: (grantType) => (grantType === undefined ? total : (counts.get(grantType) ?? 0)),
    resetCounters: () => {
      total = 0;
      counts.clear();
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
