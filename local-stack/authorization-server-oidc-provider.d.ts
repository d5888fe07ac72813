// The few parts of oidc-provider 9 (which ships no types) that the local authorization server uses.
// Written from its README and lib/ sources; widen it here when the server needs more.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { Socket } from 'node:net';

  export type ClientMetadata = { client_id: string } & Record<string, unknown>;

  export interface OidcClient {
    readonly clientId: string;
    readonly scope?: string;
    grantTypeAllowed(grantType: string): boolean;
  }

  export interface OidcContext {
    readonly params?: Record<string, string | string[] | undefined>;
    readonly client?: OidcClient;
    readonly route?: string;
    readonly provider: Provider;
    entity(name: string, value: unknown): void;
  }

  export interface KoaContextWithOIDC {
    readonly oidc: OidcContext;
    readonly method: string;
    readonly path: string;
    readonly socket: Socket;
    readonly req: IncomingMessage;
    status: number;
    body: unknown;
  }

  export type Middleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void> | void;

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: 'opaque' | 'jwt';
    jwt?: { sign?: { alg?: string } };
  }

  export interface TokenInstance {
    scope?: string | undefined;
    resourceServer?: ResourceServerInstance;
    readonly expiration: number;
    readonly tokenType?: string;
    save(): Promise<string>;
  }

  export interface ResourceServerInstance {
    readonly scopes: Set<string>;
  }

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface TokenConstructorOptions {
    client: OidcClient;
    accountId?: string;
    grantId?: string;
    gty?: string;
    scope?: string | undefined;
    resource?: string | undefined;
    rotations?: number;
    expiresWithSession?: boolean;
  }

  export interface Configuration extends Record<string, unknown> {
    clients?: ClientMetadata[];
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    readonly Grant: new (options: {
      accountId: string;
      clientId: string;
    }) => GrantInstance;
    readonly AccessToken: new (
      options: TokenConstructorOptions,
    ) => TokenInstance;
    readonly RefreshToken: new (
      options: TokenConstructorOptions,
    ) => TokenInstance;
    readonly ClientCredentials: new (
      options: TokenConstructorOptions,
    ) => TokenInstance;
    readonly ResourceServer: new (
      identifier: string,
      info: ResourceServerInfo,
    ) => ResourceServerInstance;
    registerGrantType(
      name: string,
      handler: (ctx: KoaContextWithOIDC) => Promise<void>,
      params?: string | readonly string[] | Set<string>,
      dupes?: string | readonly string[] | Set<string>,
    ): void;
    use(middleware: Middleware): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    urlFor(name: string, options?: Record<string, string>): string;
  }

  export const errors: {
    InvalidGrant: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
    InvalidScope: new (description?: string, scope?: string) => Error;
    InvalidTarget: new (description?: string) => Error;
  };

  export default Provider;
}
