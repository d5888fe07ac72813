import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccessToken, RequestOptions, Response } from '../../oauth2/index.js';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { governedCall } from '../governor/governed-call.js';
import { ForgeGovernor, type GovernorEvent } from '../governor/governor.js';
import { type GovernorConfig, readGovernorConfig } from '../governor/limits.js';
import { currentInvocation } from '../invocation.js';
import { ForgebridgeMetrics } from '../metrics.js';
import { type ForgeApiConfig, readForgeApiConfig } from '../tokens/config.js';
import { createTokenSource } from '../tokens/token-source.js';
import type { LoggerLike } from '../types.js';

/** Options of {@link createForgeApi}; every one has a default read from the environment. */
export interface ForgeApiOptions {
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** The configuration itself, instead of reading it from `env`. */
  config?: ForgeApiConfig | undefined;
  /** The governor's settings, instead of reading them from `env` (`FORGEBRIDGE_FORGE_API_*`). */
  governor?: GovernorConfig | undefined;
  /**
   * Told of every wait, refusal, limit answer and store failure of the governor. Default: each printed as a metric
   * (`ForgeApiWaits`, `ForgeApiLimitAnswers`...: EMF lines on stdout, no API call); `false` prints none.
   */
  onGovernorEvent?: ((event: GovernorEvent) => void) | false | undefined;
  /** `dynamodb` holds the token table, `ssm` the client secret or app key; each built when not given. */
  clients?: { dynamodb?: DynamoDBClient | undefined; ssm?: SSMClient | undefined } | undefined;
  logger?: LoggerLike | undefined;
}

/** Options of one forge API call: lib/oauth2's, and how long it may wait for its turn. */
export interface ForgeRequestOptions extends RequestOptions {
  /**
   * Epoch ms the answer is needed by: the call waits for its turn until shortly before. Default: the deadline of the
   * Lambda invocation the call runs in (a subscriber's) less a fifth of the time left (1 to 10 s, for the request),
   * else the governor's longest wait.
   */
  deadline?: number | undefined;
}

/** The forge's API with a stored token: what a subscriber calls it through. */
export interface ForgeApi {
  /** `FORGEBRIDGE_FORGE_API_URL`, without trailing slashes. */
  readonly url: string;
  /** The governor every call of this API goes through; `undefined` when it is turned off. */
  readonly governor: ForgeGovernor | undefined;
  /** The provider's current token from the token store (served from memory while fresh). */
  token(): Promise<AccessToken>;
  /**
   * A request to `path` (relative to {@link url}, or absolute on {@link url}'s own origin) with the current token,
   * through the governor: it waits for its turn below the owner's limits, obeys the forge's rate-limit answers and
   * retries a secondary-limit answer once after its wait. A call that cannot get its turn in time rejects with a
   * `ForgeRateLimitError`. An absolute URL on any other origin or scheme (one taken from a payload) is a
   * `TypeError`: the token goes nowhere but the configured API.
   */
  request(method: string, path: string, options?: ForgeRequestOptions): Promise<Response>;
  get(path: string, options?: ForgeRequestOptions): Promise<Response>;
  post(path: string, options?: ForgeRequestOptions): Promise<Response>;
  patch(path: string, options?: ForgeRequestOptions): Promise<Response>;
  put(path: string, options?: ForgeRequestOptions): Promise<Response>;
  delete(path: string, options?: ForgeRequestOptions): Promise<Response>;
}

/** The governor's events as metrics. */
function governorMetrics(metrics: ForgebridgeMetrics): (event: GovernorEvent) => void {
  return (event) => metrics.governor(event);
}

/**
 * The invocation's time kept for the request and what follows it (the answer read, the report written): a fifth of
 * what is left, from 1 s to 10 s. A call that waited to the last moment and then timed out after the forge took it
 * would be retried, and a comment written twice.
 */
function answerReserveMs(left: number): number {
  return Math.max(1_000, Math.min(10_000, left / 5));
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
  const documentClient = DynamoDBDocumentClient.from(
    options.clients?.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(sdkTimeouts())),
  );
  const settings = options.governor ?? readGovernorConfig(env);
  const tokens = createTokenSource(config.client, {
    ...config,
    governor: settings,
    documentClient,
    ssm: options.clients?.ssm ?? withoutSdkCallLog(new SSMClient(sdkTimeouts())),
    logger: options.logger,
    env,
  });
  const token = async () => (await tokens.store()).get();
  const origin = new URL(config.forgeApiUrl).origin;
  const governor = settings.enabled
    ? new ForgeGovernor({
        client: documentClient,
        tableName: config.tableName,
        owner: tokens.key,
        limits: settings.limits,
        maxWaitMs: settings.maxWaitMs,
        leaseSeconds: settings.leaseSeconds,
        logger: options.logger,
        onEvent:
          options.onGovernorEvent === false
            ? undefined
            : (options.onGovernorEvent ?? governorMetrics(new ForgebridgeMetrics({ env }))),
      })
    : undefined;
  const request = async (method: string, path: string, requestOptions: ForgeRequestOptions = {}) => {
    const absolute = /^[a-z][a-z0-9+.-]*:/i.test(path);
    const url = absolute ? path : `${config.forgeApiUrl}/${path.replace(/^\/+/, '')}`;
    if (!URL.canParse(url) || new URL(url).origin !== origin) {
      // The URL itself is left out: it may carry a credential of its own.
      throw new TypeError(`"path" must be relative to the forge api or on its origin (${origin})`);
    }
    const { deadline, ...rest } = requestOptions;
    if (governor === undefined) return (await token()).request(method, url, rest);
    // The token read (from memory, or DynamoDB near its expiry) runs while the governor takes the call's turn.
    const current = token();
    current.catch(() => undefined);
    const send = async () => (await current).request(method, url, rest);
    const invocation = currentInvocation();
    const end = invocation?.deadline;
    const by = deadline ?? (end === undefined ? undefined : end - answerReserveMs(end - Date.now()));
    return governedCall(governor, method, send, {
      deadline: by,
      onWait: (ms) => {
        if (invocation !== undefined) invocation.forgeWaitMs += ms;
      },
    });
  };
  return {
    url: config.forgeApiUrl,
    governor,
    token,
    request,
    get: (path, requestOptions) => request('GET', path, requestOptions),
    post: (path, requestOptions) => request('POST', path, requestOptions),
    patch: (path, requestOptions) => request('PATCH', path, requestOptions),
    put: (path, requestOptions) => request('PUT', path, requestOptions),
    delete: (path, requestOptions) => request('DELETE', path, requestOptions),
  };
}
