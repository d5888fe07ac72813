/**
 * A stage's deploy-time settings, as code: `config/<stage>.yml` holds them under the names of the variables the
 * functions read (`FORGEBRIDGE_FORGE: github`, `FORGEBRIDGE_WEBHOOK_SOURCES` as a YAML list), a variable set in the
 * environment of the machine running `osls` overrides the file's value, and what neither sets is the default
 * below. serverless.yml reads the result (infra/config.cjs), `forgebridge config --stage <name>` prints it, and
 * both check it with the same readers the functions run at their cold start, so a wrong value stops the package,
 * not the first delivery. No AWS SDK here: infra/ and the light CLI commands load this file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { type Env, numberEnv } from './env.js';
import { readGovernorConfig } from './governor/limits.js';
import { readReconcileConfig } from './reconcile/config.js';
import { type AlarmSettings, readAlarmSettings, whole } from './stage/alarm-settings.js';
import { readDeliveryLogConfig, readRedriveConfig } from './stage/function-config.js';
import { type OrderedStreamSettings, readOrderedStreamSettings } from './stage/ordered-subscribers.js';
import { readWebhookSources, type WebhookSourceConfig } from './stage/webhook-source.js';
import { readForgeApiConfig, readOAuthClients, readTokenConfig } from './tokens/config.js';

export { type AlarmSettings, type OrderedStreamSettings, readAlarmSettings, readOrderedStreamSettings };

/** The service name every resource name starts with (serverless.yml's `service`). */
export const SERVICE = 'forgebridge';

/** Where the stage files live, relative to the project: `config/<stage>.yml`. */
export const STAGE_CONFIG_DIR = 'config';

/** A stage name: letters, digits and hyphens, as the Serverless Framework takes it (and a file name). */
const STAGE_NAME = /^[A-Za-z0-9-]{1,64}$/;

/** The settings whose value is JSON for the functions: a YAML list in the file. */
const LIST_SETTINGS = new Set([
  'FORGEBRIDGE_WEBHOOK_SOURCES',
  'FORGEBRIDGE_OAUTH_CLIENTS',
  'FORGEBRIDGE_ORDERED_SUBSCRIBERS',
]);

/**
 * Every deploy-time setting and its default for a stage. An empty default leaves the library's own default in
 * force (docs/configuration.md has each one's meaning).
 */
export function stageDefaults(stage: string): Record<StageSettingName, string> {
  const prefix = `${SERVICE}-${stage}`;
  return {
    FORGEBRIDGE_SOURCE: 'forge.webhooks',
    FORGEBRIDGE_FORGE: '',
    FORGEBRIDGE_WEBHOOK_SOURCES: '',
    FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: `/${SERVICE}/${stage}/webhook-secret`,
    FORGEBRIDGE_EVENT_HEADER: '',
    FORGEBRIDGE_DELIVERY_HEADER: '',
    FORGEBRIDGE_ALLOW_SHA1: 'true',
    FORGEBRIDGE_MAX_BODY_BYTES: '',
    FORGEBRIDGE_BUS_NAME: prefix,
    FORGEBRIDGE_DEDUPE_TABLE: `${prefix}-dedupe`,
    FORGEBRIDGE_TOKEN_TABLE: `${prefix}-tokens`,
    FORGEBRIDGE_DELIVERIES_TABLE: `${prefix}-deliveries`,
    // Empty: CloudFormation names the bucket (bucket names are global across every AWS account).
    FORGEBRIDGE_BUCKET: '',
    FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
    FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'false',
    FORGEBRIDGE_MAX_ENTRY_BYTES: '983040',
    FORGEBRIDGE_DEDUPE_TTL_SECONDS: '604800',
    FORGEBRIDGE_PUBLISH_BUDGET_MS: '',
    FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS: '',
    FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS: '86400',
    FORGEBRIDGE_QUEUE_RETRY_BASE_SECONDS: '',
    FORGEBRIDGE_OAUTH_SECRET_PATH: `/${SERVICE}/${stage}/oauth`,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
      {
        provider: 'forge',
        clientId: SERVICE,
        site: 'https://forge.example.com',
        tokenUrl: 'oauth/token',
        secretParameter: `/${SERVICE}/${stage}/oauth/${SERVICE}`,
      },
    ]),
    FORGEBRIDGE_OAUTH_PROVIDER: '',
    FORGEBRIDGE_FORGE_API_URL: 'https://forge.example.com/api/v1',
    FORGEBRIDGE_REFRESH_WINDOW_SECONDS: '300',
    // The forge API governor (docs/rate-limits.md): on, on GitHub's documented limits; empty figures: the preset's.
    FORGEBRIDGE_FORGE_API_GOVERNOR: 'on',
    FORGEBRIDGE_FORGE_API_PRESET: 'github',
    FORGEBRIDGE_FORGE_API_CONCURRENCY: '',
    FORGEBRIDGE_FORGE_API_BUDGETS: '',
    FORGEBRIDGE_FORGE_API_MAX_WAIT_MS: '',
    FORGEBRIDGE_FORGE_API_LEASE_SECONDS: '',
    FORGEBRIDGE_RECONCILE_RATE: 'rate(10 minutes)',
    FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES: '',
    FORGEBRIDGE_RECONCILE_MAX_PAGES: '',
    FORGEBRIDGE_RECONCILE_BACKOFF_SECONDS: '',
    FORGEBRIDGE_RECONCILE_GITHUB_WINDOW_HOURS: '',
    FORGEBRIDGE_RECONCILE_GITLAB_WINDOW_HOURS: '',
    FORGEBRIDGE_METRIC_NAMESPACE: `${SERVICE}/${stage}`,
    FORGEBRIDGE_LOG_LEVEL: 'WARN',
    FORGEBRIDGE_HTTP_API: 'false',
    FORGEBRIDGE_INGEST_TIMEOUT: '10',
    FORGEBRIDGE_SUBSCRIBER_TIMEOUT: '10',
    FORGEBRIDGE_ARCHIVE_RETENTION_DAYS: '14',
    FORGEBRIDGE_CLAIM_CHECK_EXPIRY_DAYS: '14',
    FORGEBRIDGE_ALARM_EMAIL: '',
    FORGEBRIDGE_ALARM_QUIET_HOURS: '0',
    FORGEBRIDGE_ALARM_SIGNATURE_FAILURES: '5',
    FORGEBRIDGE_ALARM_INGEST_5XX: '0',
    FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS: '900',
    FORGEBRIDGE_ALARM_SUBSCRIBER_ERRORS: '0',
    FORGEBRIDGE_ALARM_FAILED_AT_FORGE: '0',
    // No ordered subscriber: no stream (a provisioned shard costs by the hour, used or not).
    FORGEBRIDGE_ORDERED_SUBSCRIBERS: '',
    FORGEBRIDGE_STREAM_SHARDS: '1',
    // Empty: CloudFormation names the stream (unique to the stack in its account and region).
    FORGEBRIDGE_STREAM_NAME: '',
    FORGEBRIDGE_STREAM_RETENTION_HOURS: '24',
    FORGEBRIDGE_ALARM_ORDERED_FAILURES: '0',
  };
}

/** The names of the deploy-time settings, in the order {@link stageDefaults} lists them. */
export const StageSettingNames = Object.keys(stageDefaults('dev')) as StageSettingName[];

/** A deploy-time setting's name. */
export type StageSettingName =
  | 'FORGEBRIDGE_SOURCE'
  | 'FORGEBRIDGE_FORGE'
  | 'FORGEBRIDGE_WEBHOOK_SOURCES'
  | 'FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER'
  | 'FORGEBRIDGE_EVENT_HEADER'
  | 'FORGEBRIDGE_DELIVERY_HEADER'
  | 'FORGEBRIDGE_ALLOW_SHA1'
  | 'FORGEBRIDGE_MAX_BODY_BYTES'
  | 'FORGEBRIDGE_BUS_NAME'
  | 'FORGEBRIDGE_DEDUPE_TABLE'
  | 'FORGEBRIDGE_TOKEN_TABLE'
  | 'FORGEBRIDGE_DELIVERIES_TABLE'
  | 'FORGEBRIDGE_BUCKET'
  | 'FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS'
  | 'FORGEBRIDGE_DELIVERY_LOG_PAYLOAD'
  | 'FORGEBRIDGE_MAX_ENTRY_BYTES'
  | 'FORGEBRIDGE_DEDUPE_TTL_SECONDS'
  | 'FORGEBRIDGE_PUBLISH_BUDGET_MS'
  | 'FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS'
  | 'FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS'
  | 'FORGEBRIDGE_QUEUE_RETRY_BASE_SECONDS'
  | 'FORGEBRIDGE_OAUTH_SECRET_PATH'
  | 'FORGEBRIDGE_OAUTH_CLIENTS'
  | 'FORGEBRIDGE_OAUTH_PROVIDER'
  | 'FORGEBRIDGE_FORGE_API_URL'
  | 'FORGEBRIDGE_REFRESH_WINDOW_SECONDS'
  | 'FORGEBRIDGE_FORGE_API_GOVERNOR'
  | 'FORGEBRIDGE_FORGE_API_PRESET'
  | 'FORGEBRIDGE_FORGE_API_CONCURRENCY'
  | 'FORGEBRIDGE_FORGE_API_BUDGETS'
  | 'FORGEBRIDGE_FORGE_API_MAX_WAIT_MS'
  | 'FORGEBRIDGE_FORGE_API_LEASE_SECONDS'
  | 'FORGEBRIDGE_RECONCILE_RATE'
  | 'FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES'
  | 'FORGEBRIDGE_RECONCILE_MAX_PAGES'
  | 'FORGEBRIDGE_RECONCILE_BACKOFF_SECONDS'
  | 'FORGEBRIDGE_RECONCILE_GITHUB_WINDOW_HOURS'
  | 'FORGEBRIDGE_RECONCILE_GITLAB_WINDOW_HOURS'
  | 'FORGEBRIDGE_METRIC_NAMESPACE'
  | 'FORGEBRIDGE_LOG_LEVEL'
  | 'FORGEBRIDGE_HTTP_API'
  | 'FORGEBRIDGE_INGEST_TIMEOUT'
  | 'FORGEBRIDGE_SUBSCRIBER_TIMEOUT'
  | 'FORGEBRIDGE_ARCHIVE_RETENTION_DAYS'
  | 'FORGEBRIDGE_CLAIM_CHECK_EXPIRY_DAYS'
  | 'FORGEBRIDGE_ALARM_EMAIL'
  | 'FORGEBRIDGE_ALARM_QUIET_HOURS'
  | 'FORGEBRIDGE_ALARM_SIGNATURE_FAILURES'
  | 'FORGEBRIDGE_ALARM_INGEST_5XX'
  | 'FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS'
  | 'FORGEBRIDGE_ALARM_SUBSCRIBER_ERRORS'
  | 'FORGEBRIDGE_ALARM_FAILED_AT_FORGE'
  | 'FORGEBRIDGE_ORDERED_SUBSCRIBERS'
  | 'FORGEBRIDGE_STREAM_SHARDS'
  | 'FORGEBRIDGE_STREAM_NAME'
  | 'FORGEBRIDGE_STREAM_RETENTION_HOURS'
  | 'FORGEBRIDGE_ALARM_ORDERED_FAILURES';

/** Where a setting's value came from. */
export type SettingOrigin = 'default' | 'file' | 'environment';

/** A stage's settings, resolved. */
export interface StageConfig {
  stage: string;
  /** The stage file's path, `undefined` when the stage has none (every value is then a default or the environment's). */
  file: string | undefined;
  /** Every setting's value as the functions read it (a list as JSON text; empty: the library default). */
  settings: Record<StageSettingName, string>;
  /** Where each value came from. */
  origins: Record<StageSettingName, SettingOrigin>;
  /** The alarm thresholds and address, checked. */
  alarms: AlarmSettings;
  /** The webhook sources the ingest serves, as it reads them (each with the SSM parameter its secret is read from). */
  sources: WebhookSourceConfig[];
  /** The ordered subscribers, checked; none: no ordered stream. */
  ordered: OrderedStreamSettings;
}

/** Options of {@link readStageConfig}. */
export interface StageConfigOptions {
  stage: string;
  /** The project directory holding `config/`. Default: the working directory. */
  dir?: string;
  /** Overrides of the file's values: a set, non-empty `FORGEBRIDGE_*` variable wins. Default `process.env`. */
  env?: Env;
  /**
   * The functions run offline (`osls offline`, the local stack): each secret comes from the environment, so a
   * source needs no `secretParameter`. Default `false`.
   */
  offline?: boolean;
}

/** The path of a stage's file under `dir`. */
export function stageConfigPath(stage: string, dir = process.cwd()): string {
  if (!STAGE_NAME.test(stage)) {
    throw new TypeError(`stage "${stage}" must be letters, digits and hyphens (at most 64)`);
  }
  return join(dir, STAGE_CONFIG_DIR, `${stage}.yml`);
}

/**
 * Reads a stage file's text: a mapping of known setting names to scalars, the two list settings as YAML lists
 * (or JSON text). A `TypeError` naming the file, and the line where YAML knows it, for anything else.
 */
export function parseStageFile(text: string, file: string): Partial<Record<StageSettingName, string>> {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem !== undefined) {
    const line = problem.linePos?.[0]?.line;
    throw new TypeError(`${file}${line === undefined ? '' : `:${line}`}: not valid YAML (${problem.code})`);
  }
  const content: unknown = document.toJS();
  if (content === null || content === undefined) return {};
  if (typeof content !== 'object' || Array.isArray(content)) {
    throw new TypeError(`${file}: must be a mapping of setting names to values`);
  }
  const known = new Set<string>(StageSettingNames);
  const values: Partial<Record<StageSettingName, string>> = {};
  for (const [key, value] of Object.entries(content)) {
    if (!known.has(key)) {
      throw new TypeError(
        /SECRET$|PRIVATE_KEY$/.test(key)
          ? `${file}: "${key}" is a secret: keep it in SSM Parameter Store and name the parameter (FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER, a source's "secretParameter")`
          : `${file}: "${key}" is not a setting (the settings are listed in docs/configuration.md)`,
      );
    }
    const text = settingText(key as StageSettingName, value, file);
    if (text !== undefined) values[key as StageSettingName] = text;
  }
  return values;
}

function settingText(name: StageSettingName, value: unknown, file: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (LIST_SETTINGS.has(name)) {
    if (Array.isArray(value)) return JSON.stringify(value);
    if (typeof value === 'string') return value;
    throw new TypeError(`${file}: "${name}" must be a list`);
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  throw new TypeError(
    `${file}: "${name}" must be a single value, not a ${Array.isArray(value) ? 'list' : 'mapping'}`,
  );
}

/**
 * A stage's settings: the defaults, the stage file's values over them, a set environment variable over both; then
 * checked with the functions' own readers ({@link checkStageSettings}). A `TypeError` saying what is wrong.
 *
 * @example
 * ```ts
 * const { settings, origins } = readStageConfig({ stage: 'prod', env: {} });
 * settings.FORGEBRIDGE_FORGE; // 'github', from config/prod.yml
 * ```
 */
export function readStageConfig(options: StageConfigOptions): StageConfig {
  const env = options.env ?? process.env;
  const path = stageConfigPath(options.stage, options.dir);
  const file = existsSync(path) ? path : undefined;
  const fromFile = file === undefined ? {} : parseStageFile(readFileSync(file, 'utf8'), file);
  const settings = stageDefaults(options.stage);
  const origins = Object.fromEntries(StageSettingNames.map((name) => [name, 'default'])) as Record<
    StageSettingName,
    SettingOrigin
  >;
  for (const name of StageSettingNames) {
    const fileValue = fromFile[name];
    if (fileValue !== undefined) {
      settings[name] = fileValue;
      origins[name] = 'file';
    }
    const envValue = env[name];
    if (envValue !== undefined && envValue !== '') {
      settings[name] = envValue;
      origins[name] = 'environment';
    }
  }
  const offline = options.offline === true;
  let alarms: AlarmSettings;
  try {
    alarms = checkStageSettings(settings, { offline });
  } catch (error) {
    throw withOrigin(error, origins, file);
  }
  const sources = readWebhookSources(settings);
  let ordered: OrderedStreamSettings;
  try {
    ordered = readOrderedStreamSettings(settings);
  } catch (error) {
    throw withOrigin(error, origins, file);
  }
  return { stage: options.stage, file, settings, origins, alarms, sources, ordered };
}

/** A reader's error, told where the value it names came from (the file, the environment or the defaults). */
function withOrigin(
  error: unknown,
  origins: Record<StageSettingName, SettingOrigin>,
  file: string | undefined,
): unknown {
  if (!(error instanceof Error)) return error;
  const name = /"(FORGEBRIDGE_[A-Z0-9_]+)/.exec(error.message)?.[1] as StageSettingName | undefined;
  const origin = name === undefined ? undefined : origins[name];
  if (origin === undefined) return error;
  const where = origin === 'file' ? file : origin === 'environment' ? 'the environment' : 'the defaults';
  return new TypeError(`${error.message} (the value from ${where})`, { cause: error });
}

/**
 * Runs every function's configuration reader over the settings, as each function's cold start would, plus what
 * only a deploy can get wrong (an OAuth secret outside the path the roles may read); returns the alarm settings.
 */
export function checkStageSettings(
  settings: Record<StageSettingName, string>,
  options: { offline?: boolean } = {},
): AlarmSettings {
  const env: Env = { ...settings, IS_OFFLINE: options.offline === true ? 'true' : '' };
  if (settings.FORGEBRIDGE_FORGE !== '' && settings.FORGEBRIDGE_WEBHOOK_SOURCES !== '') {
    throw new TypeError(
      '"FORGEBRIDGE_FORGE" sets the one default source\'s forge; with "FORGEBRIDGE_WEBHOOK_SOURCES" give each source its "forge" instead',
    );
  }
  for (const source of readWebhookSources(env)) {
    const parameter = source.secretParameter;
    if (parameter === undefined ? !options.offline : !SSM_PARAMETER.test(parameter)) {
      throw new TypeError(
        `"FORGEBRIDGE_WEBHOOK_SOURCES": source "${source.name}" needs its "secretParameter", an SSM parameter name starting with "/" (the ingest's role may read it, and only it)`,
      );
    }
  }
  readRedriveConfig(env);
  readReconcileConfig(env);
  readTokenConfig(env);
  readForgeApiConfig(env);
  readGovernorConfig(env);
  readDeliveryLogConfig(env);
  for (const name of ['FORGEBRIDGE_INGEST_TIMEOUT', 'FORGEBRIDGE_SUBSCRIBER_TIMEOUT'] as const) {
    whole(settings, name, { min: 1, max: 900 });
  }
  for (const name of ['FORGEBRIDGE_ARCHIVE_RETENTION_DAYS', 'FORGEBRIDGE_CLAIM_CHECK_EXPIRY_DAYS'] as const) {
    whole(settings, name, { min: 1, max: 36500 });
  }
  numberEnv('FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS', env);
  if (!['true', 'false'].includes(settings.FORGEBRIDGE_HTTP_API)) {
    throw new TypeError('"FORGEBRIDGE_HTTP_API" must be "true" or "false"');
  }
  if (!/^(?:rate|cron)\(.+\)$/.test(settings.FORGEBRIDGE_RECONCILE_RATE)) {
    throw new TypeError(
      '"FORGEBRIDGE_RECONCILE_RATE" must be a schedule expression: "rate(10 minutes)" or "cron(...)"',
    );
  }
  const path = settings.FORGEBRIDGE_OAUTH_SECRET_PATH.replace(/\/+$/, '');
  if (!options.offline) {
    readOAuthClients(env).forEach((client, index) => {
      const parameter = client.kind === 'github_app' ? client.privateKeyParameter : client.secretParameter;
      if (parameter !== undefined && !parameter.startsWith(`${path}/`)) {
        throw new TypeError(
          `"FORGEBRIDGE_OAUTH_CLIENTS[${index}]": its parameter "${parameter}" must sit under "FORGEBRIDGE_OAUTH_SECRET_PATH" ("${path}/"), the only path the functions may read`,
        );
      }
    });
  }
  return readAlarmSettings(settings);
}

/** An SSM parameter name as an IAM resource takes it: a full path. */
const SSM_PARAMETER = /^\/[A-Za-z0-9_.\-/]{1,2047}$/;
