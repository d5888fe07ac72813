import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';

/** The ingest function's configuration, as {@link readIngestConfig} reads it from the environment. */
export interface IngestConfig {
  /** `EventPublisher` options: `FORGEBRIDGE_BUS_NAME` (required), `_SOURCE`, `_MAX_ENTRY_BYTES`, `_BUCKET`, `_PUBLISH_BUDGET_MS`. */
  publisher: {
    eventBusName: string;
    source: string | undefined;
    maxEntryBytes: number | undefined;
    bucket: string | undefined;
    budgetMs: number | undefined;
  };
  /** Dedupe table: `FORGEBRIDGE_DEDUPE_TABLE` (required), `_DEDUPE_TTL_SECONDS`, `_DEDUPE_LOCK_SECONDS`. */
  dedupe: { tableName: string; ttlSeconds: number | undefined; lockSeconds: number | undefined };
  /** `forgeWebhook` options but the secret: `FORGEBRIDGE_EVENT_HEADER`, `_DELIVERY_HEADER`, `_ALLOW_SHA1`, `_MAX_BODY_BYTES`. */
  webhook: {
    headers: { event?: string; delivery?: string };
    allowSha1: boolean;
    maxBodyBytes: number | undefined;
  };
  /** SSM parameter holding the webhook secret(s): `FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER`. */
  secretParameter: string | undefined;
  /** Socket timeout of the DynamoDB, EventBridge and SSM calls in ms: `FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS`. Default 2000. */
  requestTimeoutMs: number;
}

/**
 * Reads the ingest's configuration (the variables serverless.yml sets); a `TypeError` naming the variable when a
 * required one is missing or a number is not positive, so a misconfigured function fails at its cold start.
 */
export function readIngestConfig(env: Env = process.env): IngestConfig {
  const event = optionalEnv('FORGEBRIDGE_EVENT_HEADER', env);
  const delivery = optionalEnv('FORGEBRIDGE_DELIVERY_HEADER', env);
  return {
    publisher: {
      eventBusName: requireEnv('FORGEBRIDGE_BUS_NAME', env),
      source: optionalEnv('FORGEBRIDGE_SOURCE', env),
      maxEntryBytes: numberEnv('FORGEBRIDGE_MAX_ENTRY_BYTES', env),
      bucket: optionalEnv('FORGEBRIDGE_BUCKET', env),
      budgetMs: numberEnv('FORGEBRIDGE_PUBLISH_BUDGET_MS', env),
    },
    dedupe: {
      tableName: requireEnv('FORGEBRIDGE_DEDUPE_TABLE', env),
      ttlSeconds: numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS', env),
      lockSeconds: numberEnv('FORGEBRIDGE_DEDUPE_LOCK_SECONDS', env),
    },
    webhook: {
      headers: {
        ...(event === undefined ? {} : { event: event.toLowerCase() }),
        ...(delivery === undefined ? {} : { delivery: delivery.toLowerCase() }),
      },
      allowSha1: optionalEnv('FORGEBRIDGE_ALLOW_SHA1', env) !== 'false',
      maxBodyBytes: numberEnv('FORGEBRIDGE_MAX_BODY_BYTES', env),
    },
    secretParameter: optionalEnv('FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER', env),
    requestTimeoutMs: numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS', env) ?? 2_000,
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
