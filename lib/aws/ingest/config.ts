import { DEFAULT_TOLERANCE_SECONDS, type Forge, Forges, resolvePreset } from '../../webhooks/index.js';
import { AwsDefaults } from '../constants.js';
import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';
import { DEFAULT_SOURCE, isOffline, isSourceName, SOURCE_NAME_RULE } from '../rules.js';
import { parseSourceHook, type SourceHook } from './source-hook.js';

/**
 * One webhook source: a door `/webhooks/{name}` (`/webhooks` for `default`) with its forge preset and its own
 * secret. An element of `FORGEBRIDGE_WEBHOOK_SOURCES`.
 */
export interface WebhookSourceConfig {
  /** A source name (`SOURCE_NAME_RULE`): a path segment and part of keys. */
  name: string;
  /** The forge preset: header names, signature scheme, event mapping. */
  forge: Forge;
  /** SSM parameter holding the source's secret(s). Required unless running offline. */
  secretParameter: string | undefined;
  /** Offline only: the environment variable holding the secret(s) (`FORGEBRIDGE_WEBHOOK_SECRET[_<NAME>]`). */
  secretEnv: string;
  /** Event and delivery header names overriding the preset's (lowercase). */
  headers: { event?: string; delivery?: string };
  /** The forge-side hook whose delivery log the reconciler reads, when the source names one. */
  hook?: SourceHook;
  /** Standard Webhooks (`standard`, `svix`, GitLab's signing token): the timestamp tolerance in seconds. */
  toleranceSeconds?: number | undefined;
  /** GitLab: require the signing token's signature (`signature`) or the shared token (`token`). */
  verifyWith?: 'signature' | 'token' | undefined;
  /** How long this source's dedupe records live (its replay window without a timestamp), in seconds. */
  dedupeTtlSeconds?: number | undefined;
}

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
  /** `forgeWebhook` options but the secret: `FORGEBRIDGE_EVENT_HEADER`, `_DELIVERY_HEADER`, `_ALLOW_SHA1`, `_MAX_BODY_BYTES`. */
  webhook: {
    headers: { event?: string; delivery?: string };
    allowSha1: boolean;
    maxBodyBytes: number | undefined;
  };
  /** SSM parameter holding the webhook secret(s): `FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER`. */
  secretParameter: string | undefined;
  /**
   * The webhook sources: `FORGEBRIDGE_WEBHOOK_SOURCES` (a JSON array), or without it the one `default` source
   * of `FORGEBRIDGE_FORGE` (default `generic`), `FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER` and the header variables.
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
 * Reads the ingest's configuration (the variables serverless.yml sets); a `TypeError` naming the variable when a
 * required one is missing or a number is not positive, so a misconfigured function fails at its cold start.
 */
export function readIngestConfig(env: Env = process.env): IngestConfig {
  const event = optionalEnv('FORGEBRIDGE_EVENT_HEADER', env);
  const delivery = optionalEnv('FORGEBRIDGE_DELIVERY_HEADER', env);
  const headers = {
    ...(event === undefined ? {} : { event: event.toLowerCase() }),
    ...(delivery === undefined ? {} : { delivery: delivery.toLowerCase() }),
  };
  const secretParameter = optionalEnv('FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER', env);
  const sources = readWebhookSources(env, { secretParameter, headers });
  const ttlBySource = sources.filter((source) => source.dedupeTtlSeconds !== undefined);
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
      ...(ttlBySource.length === 0
        ? {}
        : {
            ttlSecondsBySource: Object.fromEntries(
              ttlBySource.map((source) => [source.name, source.dedupeTtlSeconds as number]),
            ),
          }),
    },
    webhook: {
      headers,
      allowSha1: optionalEnv('FORGEBRIDGE_ALLOW_SHA1', env) !== 'false',
      maxBodyBytes: numberEnv('FORGEBRIDGE_MAX_BODY_BYTES', env),
    },
    secretParameter,
    sources,
    offline: isOffline(env),
    requestTimeoutMs: numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS', env) ?? 2_000,
    deliveryLog: readDeliveryLogConfig(env),
  };
}

const SOURCES_VAR = 'FORGEBRIDGE_WEBHOOK_SOURCES';
const SOURCE_KEYS = new Set([
  'name',
  'forge',
  'secretParameter',
  'secretEnv',
  'eventHeader',
  'deliveryHeader',
  'hook',
  'toleranceSeconds',
  'verifyWith',
  'dedupeTtlSeconds',
]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A header name is an RFC 9110 token.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The offline secret variable of a source: `FORGEBRIDGE_WEBHOOK_SECRET` for `default`, else with the name
 * appended in upper case (`gitlab-acme` -> `FORGEBRIDGE_WEBHOOK_SECRET_GITLAB_ACME`).
 */
export function sourceSecretEnv(name: string): string {
  return name === DEFAULT_SOURCE
    ? AwsDefaults.secretsEnvVar
    : `${AwsDefaults.secretsEnvVar}_${name.toUpperCase().replaceAll('-', '_')}`;
}

/**
 * Reads the webhook sources; a `TypeError` naming the variable or the entry's field when one is invalid, so a
 * misconfigured ingest fails at its cold start.
 */
function readWebhookSources(
  env: Env,
  fallback: { secretParameter: string | undefined; headers: WebhookSourceConfig['headers'] },
): WebhookSourceConfig[] {
  const raw = optionalEnv(SOURCES_VAR, env);
  if (raw === undefined) {
    const forge = optionalEnv('FORGEBRIDGE_FORGE', env) ?? 'generic';
    if (!(Forges as readonly string[]).includes(forge)) {
      throw new TypeError(`environment variable "FORGEBRIDGE_FORGE" must be one of ${forgeList()}`);
    }
    const only: WebhookSourceConfig = {
      name: DEFAULT_SOURCE,
      forge: forge as Forge,
      secretParameter: fallback.secretParameter,
      secretEnv: AwsDefaults.secretsEnvVar,
      headers: fallback.headers,
    };
    return checkReplayWindows([only], env, () => '"FORGEBRIDGE_FORGE"');
  }
  for (const name of ['FORGEBRIDGE_FORGE', 'FORGEBRIDGE_EVENT_HEADER', 'FORGEBRIDGE_DELIVERY_HEADER']) {
    // Each source sets its own: a deployment-wide one would silently apply to some sources only.
    if (optionalEnv(name, env) !== undefined) {
      throw new TypeError(`environment variable "${name}" cannot be combined with "${SOURCES_VAR}"`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new TypeError(`environment variable "${SOURCES_VAR}" must be a non-empty json array`);
  }
  const sources = parsed.map(parseSource);
  const seen = new Set<string>();
  for (const [index, source] of sources.entries()) {
    if (seen.has(source.name)) throw new TypeError(`${label(index, 'name')} "${source.name}" is repeated`);
    seen.add(source.name);
  }
  return checkReplayWindows(sources, env, (index) => label(index));
}

/**
 * A signed timestamp is accepted for `toleranceSeconds`; the dedupe record is what refuses the same delivery
 * within that time. A record that expires first lets the same signed delivery in again: refused here, at cold
 * start and at package time alike.
 */
function checkReplayWindows(
  sources: WebhookSourceConfig[],
  env: Env,
  name: (index: number) => string,
): WebhookSourceConfig[] {
  const deploymentTtl = numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS', env) ?? AwsDefaults.dedupeTtlSeconds;
  for (const [index, source] of sources.entries()) {
    if (resolvePreset(source.forge).standardHeaders.length === 0 || source.verifyWith === 'token') continue;
    const tolerance = source.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const ttl = source.dedupeTtlSeconds ?? deploymentTtl;
    if (tolerance >= ttl) {
      throw new TypeError(
        `${name(index)} accepts a signed timestamp for ${tolerance} s but keeps its dedupe record ${ttl} s: the timestamp tolerance ("toleranceSeconds") must be shorter than the dedupe lifetime ("dedupeTtlSeconds" or "FORGEBRIDGE_DEDUPE_TTL_SECONDS"), or a replay is accepted once the record expires`,
      );
    }
  }
  return sources;
}

function label(index: number, field?: string): string {
  return `"${SOURCES_VAR}[${index}]${field === undefined ? '' : `.${field}`}"`;
}

function forgeList(): string {
  return Forges.map((forge) => `"${forge}"`).join(', ');
}

function parseSource(entry: unknown, index: number): WebhookSourceConfig {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new TypeError(`${label(index)} must be an object`);
  }
  const record = entry as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!SOURCE_KEYS.has(key)) throw new TypeError(`${label(index)} has an unknown field "${key}"`);
  }
  const text = (key: string, required: boolean): string | undefined => {
    const value = record[key];
    if (value === undefined || value === null || value === '') {
      if (required) throw new TypeError(`${label(index, key)} is required`);
      return undefined;
    }
    if (typeof value !== 'string') throw new TypeError(`${label(index, key)} must be a string`);
    return value;
  };
  const name = text('name', true) as string;
  if (!isSourceName(name)) throw new TypeError(`${label(index, 'name')} must be ${SOURCE_NAME_RULE}`);
  const forge = text('forge', false) ?? 'generic';
  if (!(Forges as readonly string[]).includes(forge)) {
    throw new TypeError(`${label(index, 'forge')} must be one of ${forgeList()}`);
  }
  const secretParameter = text('secretParameter', false);
  if (secretParameter !== undefined && !secretParameter.startsWith('/')) {
    throw new TypeError(`${label(index, 'secretParameter')} must be a parameter name starting with "/"`);
  }
  const secretEnv = text('secretEnv', false) ?? sourceSecretEnv(name);
  if (!ENV_NAME.test(secretEnv)) {
    throw new TypeError(`${label(index, 'secretEnv')} must be an environment variable name`);
  }
  const headers: WebhookSourceConfig['headers'] = {};
  for (const [key, field] of [
    ['eventHeader', 'event'],
    ['deliveryHeader', 'delivery'],
  ] as const) {
    const header = text(key, false);
    if (header === undefined) continue;
    if (!HEADER_NAME.test(header)) throw new TypeError(`${label(index, key)} must be a header name`);
    headers[field] = header.toLowerCase();
  }
  const source: WebhookSourceConfig = { name, forge: forge as Forge, secretParameter, secretEnv, headers };
  if (record.hook !== undefined) {
    source.hook = parseSourceHook(record.hook, source.forge, (field) =>
      label(index, field === undefined ? 'hook' : `hook.${field}`),
    );
  }
  const tolerance = record.toleranceSeconds;
  if (tolerance !== undefined) {
    if (typeof tolerance !== 'number' || !Number.isSafeInteger(tolerance) || tolerance <= 0) {
      throw new TypeError(`${label(index, 'toleranceSeconds')} must be a positive whole number of seconds`);
    }
    if (resolvePreset(forge).standardHeaders.length === 0) {
      throw new TypeError(`${label(index, 'toleranceSeconds')} applies to a signed-timestamp forge only`);
    }
    source.toleranceSeconds = tolerance;
  }
  const dedupeTtl = record.dedupeTtlSeconds;
  if (dedupeTtl !== undefined) {
    if (typeof dedupeTtl !== 'number' || !Number.isSafeInteger(dedupeTtl) || dedupeTtl <= 0) {
      throw new TypeError(`${label(index, 'dedupeTtlSeconds')} must be a positive whole number of seconds`);
    }
    source.dedupeTtlSeconds = dedupeTtl;
  }
  const verifyWith = text('verifyWith', false);
  if (verifyWith !== undefined) {
    if (!resolvePreset(forge).signingToken)
      throw new TypeError(`${label(index, 'verifyWith')} applies to forge "gitlab" only`);
    if (verifyWith !== 'signature' && verifyWith !== 'token') {
      throw new TypeError(`${label(index, 'verifyWith')} must be "signature" or "token"`);
    }
    source.verifyWith = verifyWith;
  }
  return source;
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
