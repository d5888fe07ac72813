/**
 * The reconciler's composition root: reads its configuration from the environment, builds its SDK clients unless
 * given them, and wires the delivery-log API of each source that names a hook (GitHub's or GitLab's, its token
 * from the token store, or the GitHub App JWT for an App's hook) into one {@link reconcile} run per invocation.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { resolvePreset } from '../../webhooks/index.js';
import { DeliveryLog } from '../delivery-log/delivery-log.js';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import { readGovernorConfig } from '../governor/limits.js';
import { ForgebridgeMetrics } from '../metrics.js';
import { EventPublisher } from '../publish/index.js';
import { DedupeRecords } from '../queue/index.js';
import { ReconcileAttempts } from '../reconcile/attempts.js';
import { gitHubAppJwtAuth, storeAuth } from '../reconcile/auth.js';
import {
  type ReconcileConfig,
  type ReconcileSourceConfig,
  readReconcileConfig,
} from '../reconcile/config.js';
import { gitHubDeliveryLog } from '../reconcile/github.js';
import { gitLabDeliveryLog } from '../reconcile/gitlab.js';
import { recordReconcileRun } from '../reconcile/last-run.js';
import { type ReconcileSource, reconcile } from '../reconcile/reconcile.js';
import { createRecovery } from '../reconcile/recover.js';
import type { DeliveryLogApi, ReconcileReport } from '../reconcile/types.js';
import { errorCode } from '../rules.js';
import type { LoggerLike } from '../types.js';

/** The client of each forge's delivery-log API (the forges whose preset has a `deliveryLog`). */
const DELIVERY_LOG_APIS = {
  github: gitHubDeliveryLog,
  gitlab: gitLabDeliveryLog,
} as const satisfies Record<ReconcileSourceConfig['forge'], unknown>;

/** Options of {@link createReconcileHandler}; everything defaults to what the Lambda builds for itself. */
/** The SDK clients of the reconciler, as the other composition roots take theirs. */
export interface ReconcileClients {
  /** DynamoDB client of the dedupe, token and delivery-log tables. */
  dynamodb?: DynamoDBClient | undefined;
  /** Reads the OAuth client secrets and App private keys (built on first use). */
  ssm?: SSMClient | undefined;
  /** Publishes deliveries too large for the ingest (the publisher retries). */
  eventBridge?: EventBridgeClient | undefined;
  /** The claim-check bucket's client. */
  s3?: S3Client | undefined;
}

export interface ReconcileHandlerOptions {
  /** Where the configuration is read. Default `process.env`. */
  env?: Env | undefined;
  /** The SDK clients the reconciler talks through; each one not given is built with the AWS timeouts. */
  clients?: ReconcileClients | undefined;
  /** The forge API's `fetch`. Default the global one. */
  fetch?: typeof fetch | undefined;
  logger?: LoggerLike | undefined;
  /** Prints each run's per-source counts (EMF lines on stdout). Default: `ForgebridgeMetrics`; `false` turns it off. */
  metrics?: Pick<ForgebridgeMetrics, 'reconcile'> | false | undefined;
}

/** What one invocation may ask: one source only, or a dry run (the CLI's `forgebridge reconcile`). */
export interface ReconcileEvent {
  /** Reconcile only the source of this name. */
  sourceName?: string;
  /** Report what would be done; nothing is redelivered, published or written. */
  dryRun?: boolean;
}

/** The reconciler's Lambda handler. */
export type ReconcileHandler = (
  event: ReconcileEvent | undefined,
  context?: Partial<Context>,
) => Promise<ReconcileReport>;

function deliveryLogApi(
  source: ReconcileSourceConfig,
  config: ReconcileConfig,
  deps: Required<Pick<ReconcileHandlerOptions, 'env'>> &
    ReconcileHandlerOptions & { documentClient: DynamoDBDocumentClient; ssm: SSMClient | undefined },
): DeliveryLogApi {
  const { hook, token } = source;
  const auth =
    hook.kind === 'app' && token.kind === 'github_app'
      ? gitHubAppJwtAuth(token, { ssm: deps.ssm, env: deps.env })
      : storeAuth(token, {
          documentClient: deps.documentClient,
          tableName: config.tokenTableName,
          ssm: deps.ssm,
          refreshWindowSeconds: config.refreshWindowSeconds,
          logger: deps.logger,
          env: deps.env,
          governor: readGovernorConfig(deps.env),
        });
  const http = { hook, auth, fetch: deps.fetch, timeoutMs: config.apiTimeoutMs };
  return DELIVERY_LOG_APIS[source.forge](http);
}

/**
 * Builds the reconciler's handler: a misconfiguration (a malformed `hook`, a provider with no token entry, a
 * forge without a delivery-log API) throws a `TypeError` here, at cold start, never at the first run.
 *
 * @example
 * ```ts
 * export const handler = createReconcileHandler();
 * ```
 */
export function createReconcileHandler(options: ReconcileHandlerOptions = {}): ReconcileHandler {
  const env = options.env ?? process.env;
  const config = readReconcileConfig(env);
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-reconcile' });
  const clients = options.clients ?? {};
  const dynamodb =
    clients.dynamodb ?? withoutSdkCallLog(new DynamoDBClient(sdkTimeouts(config.requestTimeoutMs)));
  const documentClient = DynamoDBDocumentClient.from(dynamodb);
  const deps = { ...options, ssm: clients.ssm, env, logger, documentClient };
  const sources: ReconcileSource[] = config.sources.map((source) => ({
    name: source.name,
    forge: source.forge,
    // Where the forge names the hook in its deliveries (GitHub's X-GitHub-Hook-ID: its GUID is the event's), the
    // hook's id is part of their dedupe key.
    ...(resolvePreset(source.forge).hookHeaders.length > 0 && source.hook.id !== undefined
      ? { hook: String(source.hook.id) }
      : {}),
    windowSeconds: source.windowSeconds,
    api: deliveryLogApi(source, config, deps),
  }));
  const dedupe = new DedupeRecords({
    client: dynamodb,
    tableName: config.dedupeTableName,
    ttlSeconds: config.dedupeTtlSeconds,
  });
  const attempts = new ReconcileAttempts({
    client: dynamodb,
    tableName: config.dedupeTableName,
    // Past the longest window, so a delivery the forge still lists is never forgotten.
    ttlSeconds: Math.max(...config.sources.map((source) => source.windowSeconds), 0) + 24 * 60 * 60,
    backoffSeconds: config.backoffSeconds,
    maxBackoffSeconds: config.maxBackoffSeconds,
  });
  const deliveryLog =
    config.deliveryLog === undefined
      ? undefined
      : new DeliveryLog({
          client: dynamodb,
          tableName: config.deliveryLog.tableName,
          ttlSeconds: config.deliveryLog.ttlSeconds,
          logger,
        });

  // Deliveries too large for the ingest are published here, through the claim check: only with its bucket.
  const { bucket } = config.publisher;
  const recover =
    bucket === undefined
      ? undefined
      : createRecovery({
          publisher: new EventPublisher({
            ...config.publisher,
            eventBridge:
              clients.eventBridge ??
              withoutSdkCallLog(
                new EventBridgeClient({ ...sdkTimeouts(config.requestTimeoutMs), maxAttempts: 1 }),
              ),
            s3:
              clients.s3 ??
              withoutSdkCallLog(new S3Client(sdkTimeouts(Math.max(config.requestTimeoutMs, 5_000)))),
            bucket,
            logger,
          }),
          dedupe: {
            client: dynamodb,
            tableName: config.dedupeTableName,
            ttlSeconds: config.dedupeTtlSeconds,
          },
          deliveryLog,
          logger,
        });

  const metrics =
    options.metrics === false
      ? undefined
      : (options.metrics ?? new ForgebridgeMetrics({ env, namespace: config.metricNamespace }));

  const run = async (
    event: ReconcileEvent | undefined,
    context?: Partial<Context>,
  ): Promise<ReconcileReport> => {
    const only = typeof event?.sourceName === 'string' ? event.sourceName : undefined;
    const chosen = only === undefined ? sources : sources.filter((source) => source.name === only);
    if (only !== undefined && chosen.length === 0) {
      throw new TypeError(`source "${only}" names no hook to reconcile`);
    }
    const report = await reconcile({
      sources: chosen,
      dedupe,
      attempts,
      deliveryLog,
      recover,
      logger,
      maxRedeliveries: config.maxRedeliveries,
      maxPages: config.maxPages,
      maxBackoffSeconds: config.maxBackoffSeconds,
      metricNamespace: config.metricNamespace,
      dryRun: event?.dryRun === true,
      // One delivery takes at most one forge API call (its timeout) and a few quick writes.
      reserveMs: config.apiTimeoutMs,
      ...(typeof context?.getRemainingTimeInMillis === 'function'
        ? { remainingMs: () => (context.getRemainingTimeInMillis as () => number)() }
        : {}),
    });
    // A dry run changed nothing: it counts nothing either.
    if (report.dryRun) return report;
    if (metrics !== undefined) {
      for (const [source, counts] of Object.entries(report.bySource))
        metrics.reconcile({ source, ...counts });
    }
    // For `forgebridge status`: a run that cannot be written down still did its work.
    await recordReconcileRun(dynamodb, config.dedupeTableName, report, Date.now()).catch((error: unknown) =>
      logger.warn('reconcile run not recorded', { errorCode: errorCode(error) }),
    );
    return report;
  };
  return logger instanceof Logger
    ? (middy(run).use(injectLambdaContext(logger)) as unknown as ReconcileHandler)
    : run;
}
