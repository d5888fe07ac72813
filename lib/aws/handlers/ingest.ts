import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import middy from '@middy/core';
import { DeliveryLog } from '../delivery-log/index.js';
import { type Env, sdkTimeouts } from '../env.js';
import { type IngestConfig, readIngestConfig, type WebhookSourceConfig } from '../ingest/config.js';
import { deliveryLog } from '../ingest/delivery-log-middleware.js';
import { createIngest, type PublisherLike } from '../ingest/ingest.js';
import { jsonBody } from '../ingest/json-body.js';
import {
  type ForgeWebhookSource,
  forgeWebhookSources,
  type WebhookSecret,
  webhookErrors,
} from '../ingest/middleware.js';
import { EventPublisher } from '../ingest/publisher.js';
import { DeliveryQueue } from '../ingest/queue.js';
import { createSecretsProvider } from '../secrets.js';
import type { LoggerLike } from '../types.js';

/** The SDK clients the ingest talks through; each one not given is built with the ingest's timeouts. */
export interface IngestClients {
  dynamodb?: DynamoDBClient | undefined;
  /** Built with `maxAttempts: 1`: the publisher retries `PutEvents` itself, within its budget. */
  eventBridge?: EventBridgeClient | undefined;
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
  const dynamodb = clients.dynamodb ?? new DynamoDBClient(quick);
  const s3 = clients.s3 ?? new S3Client(sdkTimeouts(Math.max(config.requestTimeoutMs, 5_000)));
  let ssm = clients.ssm;
  const sources = config.sources.map((source) =>
    webhookSource(source, config, options, () => {
      ssm ??= new SSMClient(quick);
      return ssm;
    }),
  );
  const publisher =
    options.publisher ??
    new EventPublisher({
      ...config.publisher,
      eventBridge: clients.eventBridge ?? new EventBridgeClient({ ...quick, maxAttempts: 1 }),
      s3,
      logger,
    });
  const queue =
    options.queue ??
    new DeliveryQueue({
      client: dynamodb,
      tableName: config.dedupe.tableName,
      ttlSeconds: config.dedupe.ttlSeconds,
      s3,
      bucket: config.publisher.bucket,
    });
  const run = createIngest({ publisher, dedupe: { ...config.dedupe, client: dynamodb }, queue, logger });
  const log =
    options.deliveryLog === false
      ? undefined
      : (options.deliveryLog ??
        (config.deliveryLog === undefined
          ? undefined
          : new DeliveryLog({ ...config.deliveryLog, client: dynamodb, logger })));

  const chain = middy(run);
  if (logger instanceof Logger) chain.use(injectLambdaContext(logger));
  // First after the logger's context: it sees the request as it came in and, last, the answer given.
  if (log !== undefined) chain.use(deliveryLog({ log, logger }));
  return chain
    .use(
      forgeWebhookSources({
        sources,
        allowSha1: config.webhook.allowSha1,
        maxBodyBytes: config.webhook.maxBodyBytes,
      }),
    )
    .use(jsonBody())
    .use(webhookErrors({ logger }));
}

function webhookSource(
  source: WebhookSourceConfig,
  config: IngestConfig,
  options: IngestHandlerOptions,
  ssm: () => SSMClient,
): ForgeWebhookSource {
  const { name, forge, headers } = source;
  if (options.sourceSecret !== undefined)
    return { name, forge, headers, secret: options.sourceSecret(source) };
  if (options.secret !== undefined) return { name, forge, headers, secret: options.secret };
  if (source.secretParameter === undefined && !config.offline) {
    throw new TypeError(
      `webhook source "${name}" has no "secretParameter" (FORGEBRIDGE_WEBHOOK_SOURCES, or FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER for the default source)`,
    );
  }
  const provider = createSecretsProvider({
    parameterName: source.secretParameter,
    envVar: source.secretEnv,
    offline: config.offline,
    ...(config.offline ? { env: options.env ?? process.env } : { ssm: ssm() }),
  });
  return { name, forge, headers, secret: () => provider.getSecrets() };
}
