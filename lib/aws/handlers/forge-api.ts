import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccessToken, RequestOptions, Response } from '../../oauth2/index.js';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { type ForgeApiConfig, readForgeApiConfig } from '../tokens/config.js';
import { createTokenSource } from '../tokens/token-source.js';
import type { LoggerLike } from '../types.js';

/** Options of {@link createForgeApi}; every one has a default read from the environment. */
export interface ForgeApiOptions {
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** The configuration itself, instead of reading it from `env`. */
  config?: ForgeApiConfig | undefined;
  /** `dynamodb` holds the token table, `ssm` the client secret or app key; each built when not given. */
  clients?: { dynamodb?: DynamoDBClient | undefined; ssm?: SSMClient | undefined } | undefined;
  logger?: LoggerLike | undefined;
}

/** The forge's API with a stored token: what a subscriber calls it through. */
export interface ForgeApi {
  /** `FORGEBRIDGE_FORGE_API_URL`, without trailing slashes. */
  readonly url: string;
  /** The provider's current token from the token store (served from memory while fresh). */
  token(): Promise<AccessToken>;
  /**
   * A GET of `path` (relative to {@link url}, or absolute on {@link url}'s own origin) with the current token.
   * An absolute URL on any other origin or scheme (one taken from a payload) is a `TypeError`: the token goes
   * nowhere but the configured API.
   */
  get(path: string, options?: RequestOptions): Promise<Response>;
}

/**
 * The forge's API for a subscriber: the token of `FORGEBRIDGE_OAUTH_PROVIDER`'s entry of
 * `FORGEBRIDGE_OAUTH_CLIENTS` (an OAuth client's token or a GitHub App installation token, both sent as
 * `Bearer`), read from the DynamoDB token store the scheduled refresh keeps fresh.
 *
 * @example
 * ```ts
 * const api = createForgeApi();
 * const issue = await api.get(`/repos/${owner}/${repo}/issues/1`);
 * ```
 */
export function createForgeApi(options: ForgeApiOptions = {}): ForgeApi {
  const env = options.env ?? process.env;
  const config = options.config ?? readForgeApiConfig(env);
  const tokens = createTokenSource(config.client, {
    ...config,
    documentClient: DynamoDBDocumentClient.from(
      options.clients?.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(sdkTimeouts())),
    ),
    ssm: options.clients?.ssm ?? withoutSdkCallLog(new SSMClient(sdkTimeouts())),
    logger: options.logger,
    env,
  });
  const token = async () => (await tokens.store()).get();
  const origin = new URL(config.forgeApiUrl).origin;
  return {
    url: config.forgeApiUrl,
    token,
    async get(path, requestOptions) {
      const absolute = /^[a-z][a-z0-9+.-]*:/i.test(path);
      const url = absolute ? path : `${config.forgeApiUrl}/${path.replace(/^\/+/, '')}`;
      if (!URL.canParse(url) || new URL(url).origin !== origin) {
        // The URL itself is left out: it may carry a credential of its own.
        throw new TypeError(`"path" must be relative to the forge api or on its origin (${origin})`);
      }
      return (await token()).get(url, requestOptions);
    },
  };
}
