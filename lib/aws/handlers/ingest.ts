import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import type { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import middy from '@middy/core';
import { DeliveryLog } from '../delivery-log/index.js';
import { type Env, sdkTimeouts, withoutSdkCallLog } from '../env.js';
import {
  createIngest,
  deliveryLog,
  type ForgeWebhookSource,
  forgeWebhookSources,
  jsonBody,
  type WebhookSecret,
  webhookErrors,
} from '../ingest/index.js';
import { ForgebridgeMetrics } from '../metrics.js';
import type { PublisherLike } from '../publish/index.js';
import type { DeliveryQueue } from '../queue/index.js';
import { createSecretsProvider } from '../secrets.js';
import { type IngestConfig, readIngestConfig } from '../stage/function-config.js';
import type { WebhookSourceConfig } from '../stage/webhook-source.js';
import type { LoggerLike } from '../types.js';
import { deliveryPath } from './delivery-path.js';
import { deliveryLogKey, loggerContext } from './observability.js';

/** The SDK clients the ingest talks through; each one not given is built with the ingest's timeouts. */
export interface IngestClients {
  dynamodb?: DynamoDBClient | undefined;
  /** Built with `maxAttempts: 1`: the publisher retries `PutEvents` itself, within its budget. */
  eventBridge?: EventBridgeClient | undefined;
  /** With an ordered stream: built with `maxAttempts: 1` and an HTTP/1.1 handler; the stream publisher retries itself. */
  kinesis?: KinesisClient | undefined;
  s3?: S3Client | undefined;
  ssm?: SSMClient | undefined;
}

/** Options of {@link createIngestHandler}; every one has a default read from the environment. */
export interface IngestHandlerOptions {
  /** Where the configuration is read from. Default `process.env`. */
  env?: Env | undefined;
  /** The configuration itself, instead of reading it from `env`. */
  config?: IngestConfig | undefined;
  clients?: IngestClients | undefined;
  /** A Powertools `Logger` (Lambda context added to every line) or any {@link LoggerLike}. Default: a `Logger` of service `forgebridge-ingest`. */
  logger?: LoggerLike | undefined;
  /** Puts deliveries on the bus. Default: an `EventPublisher` on the configured bus and bucket. */
  publisher?: PublisherLike | undefined;
  /** Every source's secret(s), instead of its SSM parameter (or its variable offline). */
  secret?: WebhookSecret | undefined;
  /** Each source's secret(s), instead of its SSM parameter (or its variable offline): a secret store of your own. */
  sourceSecret?: ((source: WebhookSourceConfig) => WebhookSecret) | undefined;
  /** Where a delivery the bus did not take is kept. Default: a `DeliveryQueue` on the dedupe table and the bucket. */
  queue?: Pick<DeliveryQueue, 'enqueue'> | undefined;
  /** The delivery log. Default: one on `FORGEBRIDGE_DELIVERIES_TABLE`, none without it; `false` turns it off. */
  deliveryLog?: DeliveryLog | false | undefined;
  /** Counts every answered request (EMF lines on stdout). Default: `ForgebridgeMetrics` on the configured sources; `false` turns it off. */
  metrics?: Pick<ForgebridgeMetrics, 'delivery'> | false | undefined;
}

/** The ingest's Lambda handler: an API Gateway (payload 1.0 or 2.0) or Function URL event in, its answer out. */
export type IngestLambdaHandler = ReturnType<typeof createIngestHandler>;

/**
 * Builds the ingest Lambda: configuration from the environment (a `TypeError` naming the variable at cold
 * start when one is wrong), its SDK clients, one secrets provider per source (read on that source's first
 * delivery, so an unknown source is refused before any secret is read), the publisher, the durable queue, the
 * delivery log when its table is set, and the Middy chain in the order it needs: logger context, delivery log
 * (it sees the request as it came and, last, the answer given), verification per source, JSON body, errors.
 *
 * @example
 * ```ts
 * export const handler = createIngestHandler();
 * ```
 */
export function createIngestHandler(options: IngestHandlerOptions = {}) {
  const config = options.config ?? readIngestConfig(options.env ?? process.env);
  const logger = options.logger ?? new Logger({ serviceName: 'forgebridge-ingest' });
  // A stalled call fails within the forge's ~10 s instead of hanging until the Lambda timeout with the lock held.
  const quick = sdkTimeouts(config.requestTimeoutMs);
  const clients = options.clients ?? {};
  let ssm = clients.ssm;
  const client = () => {
    ssm ??= withoutSdkCallLog(new SSMClient(quick));
    return ssm;
  };
  // Each source as forgeWebhookSources takes it: its name, its delivery options as read, its secret.
  const sources: ForgeWebhookSource[] = config.sources.map((source) => ({
    name: source.name,
    ...source.deliveryOptions,
    secret: secretOf(source, config, options, client),
  }));
  const { dynamodb, publisher, queue } = deliveryPath({
    publisher: config.publisher,
    tableName: config.dedupe.tableName,
    ttlSeconds: config.dedupe.ttlSeconds,
    requestTimeoutMs: config.requestTimeoutMs,
    clients,
    logger,
    given: options,
  });
  const run = createIngest({ publisher, dedupe: { ...config.dedupe, client: dynamodb }, queue, logger });
  const log =
    options.deliveryLog === false
      ? undefined
      : (options.deliveryLog ??
        (config.deliveryLog === undefined
          ? undefined
          : new DeliveryLog({ ...config.deliveryLog, client: dynamodb, logger })));

  const metrics =
    options.metrics === false
      ? undefined
      : (options.metrics ??
        new ForgebridgeMetrics({ env: options.env, sources: config.sources.map(({ name }) => name) }));

  const chain = middy(run);
  const context = loggerContext(logger);
  if (context !== undefined) chain.use(context);
  // First after the logger's context: it sees the request as it came in and, last, the answer given.
  if (log !== undefined || metrics !== undefined) chain.use(deliveryLog({ log, metrics, logger }));
  chain.use(forgeWebhookSources({ sources }));
  // Verified: every further line carries the delivery id.
  const key = deliveryLogKey(logger, (event: { webhook?: { id?: unknown } }) => event.webhook?.id);
  if (key !== undefined) chain.use(key);
  return chain.use(jsonBody()).use(webhookErrors({ logger }));
}

/** A source's secret(s): the caller's own, or its SSM parameter (its variable offline), read per delivery. */
function secretOf(
  source: WebhookSourceConfig,
  config: IngestConfig,
  options: IngestHandlerOptions,
  ssm: () => SSMClient,
): WebhookSecret {
  if (options.sourceSecret !== undefined) return options.sourceSecret(source);
  if (options.secret !== undefined) return options.secret;
  if (source.secretParameter === undefined && !config.offline) {
    throw new TypeError(
      `webhook source "${source.name}" has no "secretParameter" (FORGEBRIDGE_WEBHOOK_SOURCES, or FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER for the default source)`,
    );
  }
  // The source's own secretParameter and secretEnv, as read.
  const provider = createSecretsProvider(source, {
    offline: config.offline,
    ...(config.offline ? { env: options.env ?? process.env } : { ssm: ssm() }),
  });
  return () => provider.getSecrets();
}
