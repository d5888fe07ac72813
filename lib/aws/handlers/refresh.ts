import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { TokenRefreshError } from '../errors.js';
import { readGovernorConfig } from '../governor/limits.js';
import { readTokenConfig, type TokenConfig } from '../tokens/config.js';
import { type RefreshRun, refreshTokens } from '../tokens/refresh.js';
import { createTokenSources, type TokenSource } from '../tokens/token-source.js';
import type { LoggerLike } from '../types.js';

/** Options of {@link createRefreshHandler}; every one has a default read from the environment. */
export interface RefreshHandlerOptions {
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** The configuration itself, instead of reading it from `env`. */
  config?: TokenConfig | undefined;
  /** `dynamodb` holds the token table, `ssm` the client secrets and app keys; each built when not given. */
  clients?: { dynamodb?: DynamoDBClient | undefined; ssm?: SSMClient | undefined } | undefined;
  /** A Powertools `Logger` (Lambda context added) or any {@link LoggerLike}. Default: service `forgebridge-refresh`. */
  logger?: LoggerLike | undefined;
  /** The token sources themselves, instead of one per entry of the configuration. */
  sources?: readonly TokenSource[] | undefined;
}

/**
 * Builds the scheduled token refresh: each configured entry, an OAuth client (client credentials) or a GitHub
 * App installation, gets its stored token renewed when it is within the refresh window of expiry. A failed
 * entry fails the invocation (`TokenRefreshError`), so the function's Errors metric and its alarm fire.
 *
 * @example
 * ```ts
 * export const handler = createRefreshHandler();
 * ```
 */
export function createRefreshHandler(options: RefreshHandlerOptions = {}) {
  const env = options.env ?? process.env;
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-refresh' });
  const sources =
    options.sources ??
    createTokenSources(options.config ?? readTokenConfig(env), {
      documentClient: DynamoDBDocumentClient.from(
        options.clients?.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(sdkTimeouts())),
      ),
      ssm: options.clients?.ssm ?? withoutSdkCallLog(new SSMClient(sdkTimeouts())),
      logger,
      env,
      // A GitHub App installation's token exchange takes its turn with the installation's forge API governor.
      governor: readGovernorConfig(env),
    });
  const chain = middy(async (): Promise<RefreshRun> => {
    const result = await refreshTokens(sources, { logger });
    if (result.failed > 0) throw new TokenRefreshError(result);
    return result;
  });
  if (logger instanceof Logger) chain.use(injectLambdaContext(logger));
  return chain;
}
