/**
 * The configuration of the ingest and the retrier, read from their environment; each webhook source through the
 * source schema's one parser (lib/aws/stage/webhook-source.ts).
 */
import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';
import { type OrderBy, parseOrderBy } from '../order-by.js';
import { isOffline } from '../rules.js';
import { readWebhookSources, type WebhookSourceConfig } from './webhook-source.js';

/** The ingest function's configuration, as {@link readIngestConfig} reads it from the environment. */
export interface IngestConfig {
  /** `EventPublisher` options: `FORGEBRIDGE_BUS_NAME` (required), `_SOURCE`, `_MAX_ENTRY_BYTES`, `_BUCKET`, `_PUBLISH_BUDGET_MS`. */
  publisher: {
    eventBusName: string;
    source: string | undefined;
    maxEntryBytes: number | undefined;
    bucket: string | undefined;
    budgetMs: number | undefined;
    /**
     * The ordered stream every accepted delivery is also written to, after the bus: `FORGEBRIDGE_STREAM_NAME`
     * (empty: none, no ordered subscriber configured), partitioned by `FORGEBRIDGE_STREAM_ORDER_BY`.
     */
    stream?: { streamName: string; orderBy: OrderBy } | undefined;
  };
  /**
   * Dedupe table: `FORGEBRIDGE_DEDUPE_TABLE` (required), `_DEDUPE_TTL_SECONDS`, `_DEDUPE_LOCK_SECONDS`, and the
   * sources' own record lifetimes (`dedupeTtlSeconds` of `FORGEBRIDGE_WEBHOOK_SOURCES`), `undefined` when none has.
   */
  dedupe: {
    tableName: string;
    ttlSeconds: number | undefined;
    lockSeconds: number | undefined;
    ttlSecondsBySource?: Record<string, number> | undefined;
  };
  /**
   * The webhook sources ({@link readWebhookSources}): `FORGEBRIDGE_WEBHOOK_SOURCES`, or the one `default` source
   * of `FORGEBRIDGE_FORGE`; each with its verification options (`FORGEBRIDGE_ALLOW_SHA1`, `_MAX_BODY_BYTES` in them).
   */
  sources: WebhookSourceConfig[];
  /** Running offline (`IS_OFFLINE`, serverless-offline): each source's secret comes from its `secretEnv`. */
  offline: boolean;
  /** Socket timeout of the DynamoDB, EventBridge and SSM calls in ms: `FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS`. Default 2000. */
  requestTimeoutMs: number;
  /** The delivery log, `undefined` without `FORGEBRIDGE_DELIVERIES_TABLE` (no log: 2 writes per delivery). */
  deliveryLog: DeliveryLogConfig | undefined;
}

/** The delivery log's settings, as {@link readDeliveryLogConfig} reads them. */
export interface DeliveryLogConfig {
  /** `FORGEBRIDGE_DELIVERIES_TABLE`. */
  tableName: string;
  /** `FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS` in seconds; `undefined` for the library default (14 days). */
  ttlSeconds: number | undefined;
  /** `FORGEBRIDGE_DELIVERY_LOG_PAYLOAD`: keep each raw body (up to 300 KB) in its record. Default `false`. */
  storePayload: boolean;
}

const DAY_SECONDS = 24 * 60 * 60;

/**
 * Reads the delivery log's settings (the ingest writes records, subscribers report into it): `undefined` when
 * `FORGEBRIDGE_DELIVERIES_TABLE` is missing or empty; a `TypeError` naming the variable when one is invalid.
 */
export function readDeliveryLogConfig(env: Env = process.env): DeliveryLogConfig | undefined {
  const tableName = optionalEnv('FORGEBRIDGE_DELIVERIES_TABLE', env);
  const days = numberEnv('FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS', env);
  const payload = optionalEnv('FORGEBRIDGE_DELIVERY_LOG_PAYLOAD', env)?.toLowerCase();
  if (payload !== undefined && !['true', 'false', '1', '0'].includes(payload)) {
    throw new TypeError('environment variable "FORGEBRIDGE_DELIVERY_LOG_PAYLOAD" must be "true" or "false"');
  }
  if (tableName === undefined) return undefined;
  return {
    tableName,
    ttlSeconds: days === undefined ? undefined : Math.round(days * DAY_SECONDS),
    storePayload: payload === 'true' || payload === '1',
  };
}

/**
 * The ordered stream the ingest writes to: `FORGEBRIDGE_STREAM_NAME` (none when empty) and what its partition key
 * is, `FORGEBRIDGE_STREAM_ORDER_BY` (`resource`, the default; `repository`; or a JSONPath such as `$.data.id`).
 */
export function readStreamConfig(
  env: Env = process.env,
): { streamName: string; orderBy: OrderBy } | undefined {
  const streamName = optionalEnv('FORGEBRIDGE_STREAM_NAME', env);
  const orderBy = optionalEnv('FORGEBRIDGE_STREAM_ORDER_BY', env);
  let parsed: OrderBy;
  try {
    parsed = parseOrderBy(orderBy ?? 'resource');
  } catch (error) {
    throw new TypeError(`environment variable "FORGEBRIDGE_STREAM_ORDER_BY": ${(error as Error).message}`);
  }
  return streamName === undefined ? undefined : { streamName, orderBy: parsed };
}

/**
 * Reads the ingest's configuration (the variables serverless.yml sets); a `TypeError` naming the variable when a
 * required one is missing or a number is not positive, so a misconfigured function fails at its cold start.
 */
export function readIngestConfig(env: Env = process.env): IngestConfig {
  const sources = readWebhookSources(env);
  const ttlBySource = sources.filter((source) => source.dedupeTtlSeconds !== undefined);
  return {
    publisher: {
      eventBusName: requireEnv('FORGEBRIDGE_BUS_NAME', env),
      source: optionalEnv('FORGEBRIDGE_SOURCE', env),
      maxEntryBytes: numberEnv('FORGEBRIDGE_MAX_ENTRY_BYTES', env),
      bucket: optionalEnv('FORGEBRIDGE_BUCKET', env),
      budgetMs: numberEnv('FORGEBRIDGE_PUBLISH_BUDGET_MS', env),
      stream: readStreamConfig(env),
    },
    dedupe: {
      tableName: requireEnv('FORGEBRIDGE_DEDUPE_TABLE', env),
      ttlSeconds: numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS', env),
      lockSeconds: numberEnv('FORGEBRIDGE_DEDUPE_LOCK_SECONDS', env),
      ...(ttlBySource.length === 0
        ? {}
        : {
            ttlSecondsBySource: Object.fromEntries(
              ttlBySource.map((source) => [source.name, source.dedupeTtlSeconds as number]),
            ),
          }),
    },
    sources,
    offline: isOffline(env),
    requestTimeoutMs: numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS', env) ?? 2_000,
    deliveryLog: readDeliveryLogConfig(env),
  };
}

/** The retrier's configuration, as {@link readRedriveConfig} reads it from the environment. */
export interface RedriveConfig {
  /** The publisher, as the ingest's: the same variables. */
  publisher: IngestConfig['publisher'];
  /** The dedupe table holding the queue: `FORGEBRIDGE_DEDUPE_TABLE` (required). */
  tableName: string;
  /**
   * `FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS` (default 86400), `_QUEUE_LEASE_SECONDS` (60), `_QUEUE_BATCH_SIZE` (100),
   * `_QUEUE_RETRY_BASE_SECONDS` (30), `_METRIC_NAMESPACE` (`forgebridge`).
   */
  queue: {
    maxAgeSeconds: number | undefined;
    retryBaseSeconds: number | undefined;
    leaseSeconds: number | undefined;
    batchSize: number | undefined;
    metricNamespace: string | undefined;
  };
  /** Socket timeout of the AWS calls in ms: `FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS`. Default 2000. */
  requestTimeoutMs: number;
}

/** Reads the retrier's configuration; a `TypeError` naming the variable when one is missing or not a positive number. */
export function readRedriveConfig(env: Env = process.env): RedriveConfig {
  return {
    publisher: readIngestConfig(env).publisher,
    tableName: requireEnv('FORGEBRIDGE_DEDUPE_TABLE', env),
    queue: {
      maxAgeSeconds: numberEnv('FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS', env),
      retryBaseSeconds: numberEnv('FORGEBRIDGE_QUEUE_RETRY_BASE_SECONDS', env),
      leaseSeconds: numberEnv('FORGEBRIDGE_QUEUE_LEASE_SECONDS', env),
      batchSize: numberEnv('FORGEBRIDGE_QUEUE_BATCH_SIZE', env),
      metricNamespace: optionalEnv('FORGEBRIDGE_METRIC_NAMESPACE', env),
    },
    requestTimeoutMs: numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS', env) ?? 2_000,
  };
}
