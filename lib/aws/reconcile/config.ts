/**
 * The reconciler's configuration, read from the environment only (serverless.yml sets every variable; each is
 * documented in docs/configuration.md). A malformed value is a `TypeError` naming the variable or the source,
 * thrown at cold start.
 */
import { type DeliveryLogForge, DeliveryLogForges, deliveryLogOf } from '../../webhooks/index.js';
import { type Env, numberEnv, optionalEnv, requireEnv } from '../env.js';
import { isOffline } from '../rules.js';
import {
  type DeliveryLogConfig,
  type IngestConfig,
  readDeliveryLogConfig,
  readIngestConfig,
} from '../stage/function-config.js';
import type { SourceHook } from '../stage/source-hook.js';
import { readOAuthClients, type TokenSourceConfig } from '../tokens/config.js';

/** One source the reconciler reads the forge's delivery log of. */
export interface ReconcileSourceConfig {
  name: string;
  /** A forge whose preset has a delivery-log API (the hook parser ties each hook kind to one). */
  forge: DeliveryLogForge;
  hook: SourceHook;
  /** The token entry of `hook.provider`. */
  token: TokenSourceConfig;
  /** How far back the forge's log is read, in seconds. */
  windowSeconds: number;
}

/** What {@link readReconcileConfig} reads. */
export interface ReconcileConfig {
  /** The sources of `FORGEBRIDGE_WEBHOOK_SOURCES` that name a `hook`. */
  sources: ReconcileSourceConfig[];
  /** The ingest's dedupe table (`FORGEBRIDGE_DEDUPE_TABLE`), also holding the reconciler's per-delivery items. */
  dedupeTableName: string;
  /** `FORGEBRIDGE_DEDUPE_TTL_SECONDS`; `undefined` for the library default (7 days). */
  dedupeTtlSeconds: number | undefined;
  /** The publisher of deliveries too large for the ingest, as the ingest's. */
  publisher: IngestConfig['publisher'];
  /** The token table (`FORGEBRIDGE_TOKEN_TABLE`) and refresh window. */
  tokenTableName: string;
  refreshWindowSeconds: number | undefined;
  /** The delivery log, when `FORGEBRIDGE_DELIVERIES_TABLE` is set. */
  deliveryLog: DeliveryLogConfig | undefined;
  /** `FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES`: redeliveries per run. Default 100. */
  maxRedeliveries: number;
  /** `FORGEBRIDGE_RECONCILE_MAX_PAGES`: pages listed per source per run. Default 10. */
  maxPages: number;
  /** `FORGEBRIDGE_RECONCILE_BACKOFF_SECONDS`: wait after a redelivery before the next of the same one. Default 600. */
  backoffSeconds: number;
  /** `FORGEBRIDGE_RECONCILE_MAX_BACKOFF_SECONDS`. Default 21600 (6 h). */
  maxBackoffSeconds: number;
  /** `FORGEBRIDGE_RECONCILE_API_TIMEOUT_MS`: per forge API request. Default 10000. */
  apiTimeoutMs: number;
  /** `FORGEBRIDGE_METRIC_NAMESPACE`. Default `forgebridge`. */
  metricNamespace: string | undefined;
  /** `FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS`. Default 2000. */
  requestTimeoutMs: number;
  /** `IS_OFFLINE`: secrets and private keys come from the environment. */
  offline: boolean;
}

const HOUR = 60 * 60;

/**
 * How far back each forge's log is read, in seconds: `FORGEBRIDGE_RECONCILE_<FORGE>_WINDOW_HOURS`, else how long
 * the forge keeps it (its preset's `deliveryLog.windowHours`: GitHub 3 days, GitLab 7).
 */
function readWindows(env: Env): Record<DeliveryLogForge, number> {
  const windows = {} as Record<DeliveryLogForge, number>;
  for (const forge of DeliveryLogForges) {
    const variable = `FORGEBRIDGE_RECONCILE_${forge.toUpperCase()}_WINDOW_HOURS`;
    windows[forge] = (numberEnv(variable, env) ?? deliveryLogOf(forge).windowHours) * HOUR;
  }
  return windows;
}

/** Reads the reconciler's configuration; a `TypeError` naming what is wrong. */
export function readReconcileConfig(env: Env = process.env): ReconcileConfig {
  const ingest = readIngestConfig(env);
  const clients = readOAuthClients(env);
  const windows = readWindows(env);
  const sources: ReconcileSourceConfig[] = [];
  for (const source of ingest.sources) {
    if (source.hook === undefined) continue;
    // The hook parser already tied each kind to its forge.
    const forge = source.forge as DeliveryLogForge;
    sources.push({
      name: source.name,
      forge,
      hook: source.hook,
      token: hookTokenEntry(source.hook, clients, source.name),
      windowSeconds: windows[forge],
    });
  }
  return {
    sources,
    dedupeTableName: requireEnv('FORGEBRIDGE_DEDUPE_TABLE', env),
    dedupeTtlSeconds: numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS', env),
    publisher: ingest.publisher,
    tokenTableName: requireEnv('FORGEBRIDGE_TOKEN_TABLE', env),
    refreshWindowSeconds: numberEnv('FORGEBRIDGE_REFRESH_WINDOW_SECONDS', env),
    deliveryLog: readDeliveryLogConfig(env),
    maxRedeliveries: Math.floor(numberEnv('FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES', env) ?? 100),
    maxPages: Math.floor(numberEnv('FORGEBRIDGE_RECONCILE_MAX_PAGES', env) ?? 10),
    backoffSeconds: numberEnv('FORGEBRIDGE_RECONCILE_BACKOFF_SECONDS', env) ?? 600,
    maxBackoffSeconds: numberEnv('FORGEBRIDGE_RECONCILE_MAX_BACKOFF_SECONDS', env) ?? 6 * HOUR,
    apiTimeoutMs: numberEnv('FORGEBRIDGE_RECONCILE_API_TIMEOUT_MS', env) ?? 10_000,
    metricNamespace: optionalEnv('FORGEBRIDGE_METRIC_NAMESPACE', env),
    requestTimeoutMs: numberEnv('FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS', env) ?? 2_000,
    offline: isOffline(env),
  };
}

/**
 * Finds the token entry a hook names; a `TypeError` naming the source when there is none, or when an `app` hook
 * names an entry that is not a GitHub App.
 */
export function hookTokenEntry(
  hook: SourceHook,
  clients: readonly TokenSourceConfig[],
  source: string,
): TokenSourceConfig {
  const entry = clients.find((client) => client.provider === hook.provider);
  if (entry === undefined) {
    throw new TypeError(
      `source "${source}": "hook.provider" "${hook.provider}" names no entry of "FORGEBRIDGE_OAUTH_CLIENTS"`,
    );
  }
  if (hook.kind === 'app' && entry.kind !== 'github_app') {
    throw new TypeError(
      `source "${source}": an "app" hook's "provider" must name a "github_app" entry of "FORGEBRIDGE_OAUTH_CLIENTS"`,
    );
  }
  return entry;
}
