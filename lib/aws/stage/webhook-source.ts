/**
 * A webhook source as the configuration declares it (an element of `FORGEBRIDGE_WEBHOOK_SOURCES`, or the one
 * `default` source of `FORGEBRIDGE_FORGE`): its schema and its one parser. The ingest, the reconciler, the CLI,
 * `forgebridge config` and the deployment (infra/config.cjs, through this entry) all read sources through
 * {@link readWebhookSources}. SDK-free.
 */
import {
  DEFAULT_TOLERANCE_SECONDS,
  type DeliveryOptions,
  type Forge,
  Forges,
  resolvePreset,
} from '../../webhooks/index.js';
import { AwsDefaults } from '../constants.js';
import { type Env, numberEnv, optionalEnv } from '../env.js';
import { DEFAULT_SOURCE, isSourceName, SOURCE_NAME_RULE } from '../rules.js';
import { parseSourceHook, type SourceHook } from './source-hook.js';

/**
 * How a source's deliveries are verified: `readDelivery`'s options but the secret, as lib/webhooks takes them. The
 * parser builds it once per source, the deployment-wide settings (`FORGEBRIDGE_ALLOW_SHA1`,
 * `FORGEBRIDGE_MAX_BODY_BYTES`) in it; the ingest hands it on unchanged, with the secret, to `forgeWebhook` and
 * `readDelivery`.
 */
export type SourceDeliveryOptions = Omit<DeliveryOptions, 'secret'> & { readonly forge: Forge };

/**
 * One webhook source: a door `/webhooks/{name}` (`/webhooks` for `default`) with its forge preset and its own
 * secret.
 */
export interface WebhookSourceConfig {
  /** A source name (`SOURCE_NAME_RULE`): a path segment and part of keys. */
  name: string;
  /** SSM parameter holding the source's secret(s). Required unless running offline. */
  secretParameter: string | undefined;
  /** Offline only: the environment variable holding the secret(s) (`FORGEBRIDGE_WEBHOOK_SECRET[_<NAME>]`). */
  secretEnv: string;
  /** What verifies its deliveries: the forge preset, header names over the preset's (lowercase), and the rest. */
  deliveryOptions: SourceDeliveryOptions;
  /** The forge preset: `deliveryOptions.forge`, read through (one value, not a copy). */
  readonly forge: Forge;
  /** The forge-side hook whose delivery log the reconciler reads, when the source names one. */
  hook?: SourceHook;
  /** How long this source's dedupe records live (its replay window without a timestamp), in seconds. */
  dedupeTtlSeconds?: number | undefined;
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

/** The verification settings of every source: `FORGEBRIDGE_ALLOW_SHA1`, `FORGEBRIDGE_MAX_BODY_BYTES`. */
type SharedOptions = Pick<DeliveryOptions, 'allowSha1' | 'maxBodyBytes'>;

/** The entries of `FORGEBRIDGE_WEBHOOK_SOURCES` as written (a non-empty JSON array), before each is checked. */
function sourceEntries(raw: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new TypeError(`environment variable "${SOURCES_VAR}" must be a non-empty json array`);
  }
  return parsed;
}

/**
 * `FORGEBRIDGE_WEBHOOK_SOURCES` of `env` with a forge-side `hook` set on the sources `hooks` names (the local
 * stack's forge stand-ins, whose addresses are known only once they run), checked by {@link readWebhookSources}
 * as the functions will read it: a `TypeError` naming the variable or the field otherwise.
 *
 * @example
 * ```ts
 * env.FORGEBRIDGE_WEBHOOK_SOURCES = withSourceHooks(settings, { github: { kind: 'repo', repo: 'o/r', id: 1 } });
 * ```
 */
export function withSourceHooks(env: Env, hooks: Readonly<Record<string, unknown>>): string {
  const raw = optionalEnv(SOURCES_VAR, env);
  if (raw === undefined)
    throw new TypeError(`environment variable "${SOURCES_VAR}" is required to set a hook`);
  const entries = sourceEntries(raw).map((entry) => {
    const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
    return typeof name === 'string' && Object.hasOwn(hooks, name)
      ? { ...(entry as object), hook: hooks[name] }
      : entry;
  });
  const value = JSON.stringify(entries);
  readWebhookSources({ ...env, [SOURCES_VAR]: value });
  return value;
}

/**
 * Reads the webhook sources: `FORGEBRIDGE_WEBHOOK_SOURCES` (a JSON array), or without it the one `default` source
 * of `FORGEBRIDGE_FORGE` (default `generic`), `FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER` and the header variables. A
 * `TypeError` naming the variable or the entry's field when one is invalid, so a misconfigured ingest fails at its
 * cold start and a misconfigured stage at its package.
 *
 * @example
 * ```ts
 * const [source] = readWebhookSources({ FORGEBRIDGE_FORGE: 'github', FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/s' });
 * source.deliveryOptions; // { allowSha1: true, forge: 'github' }
 * ```
 */
export function readWebhookSources(env: Env = process.env): WebhookSourceConfig[] {
  const maxBodyBytes = numberEnv('FORGEBRIDGE_MAX_BODY_BYTES', env);
  const shared: SharedOptions = {
    allowSha1: optionalEnv('FORGEBRIDGE_ALLOW_SHA1', env) !== 'false',
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
  };
  const raw = optionalEnv(SOURCES_VAR, env);
  if (raw === undefined) {
    const forge = optionalEnv('FORGEBRIDGE_FORGE', env) ?? 'generic';
    if (!(Forges as readonly string[]).includes(forge)) {
      throw new TypeError(`environment variable "FORGEBRIDGE_FORGE" must be one of ${forgeList()}`);
    }
    const headers: NonNullable<DeliveryOptions['headers']> = {};
    for (const [field, name] of [
      ['event', 'FORGEBRIDGE_EVENT_HEADER'],
      ['delivery', 'FORGEBRIDGE_DELIVERY_HEADER'],
    ] as const) {
      const header = optionalEnv(name, env);
      if (header !== undefined) headers[field] = header.toLowerCase();
    }
    const only = withForge({
      name: DEFAULT_SOURCE,
      secretParameter: optionalEnv('FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER', env),
      secretEnv: AwsDefaults.secretsEnvVar,
      deliveryOptions: {
        ...shared,
        forge: forge as Forge,
        ...(Object.keys(headers).length === 0 ? {} : { headers }),
      },
    });
    checkReplayWindows([only], env, () => '"FORGEBRIDGE_FORGE"');
    return [only];
  }
  for (const name of ['FORGEBRIDGE_FORGE', 'FORGEBRIDGE_EVENT_HEADER', 'FORGEBRIDGE_DELIVERY_HEADER']) {
    // Each source sets its own: a deployment-wide one would silently apply to some sources only.
    if (optionalEnv(name, env) !== undefined) {
      throw new TypeError(`environment variable "${name}" cannot be combined with "${SOURCES_VAR}"`);
    }
  }
  const sources = sourceEntries(raw).map((entry, index) => parseSource(entry, index, shared));
  const seen = new Set<string>();
  for (const [index, source] of sources.entries()) {
    if (seen.has(source.name)) throw new TypeError(`${label(index, 'name')} "${source.name}" is repeated`);
    seen.add(source.name);
  }
  checkReplayWindows(sources, env, (index) => label(index));
  return sources;
}

/**
 * A signed timestamp is accepted for `toleranceSeconds`; the dedupe record is what refuses the same delivery
 * within that time. A record that expires first lets the same signed delivery in again: refused here, at cold
 * start and at package time alike.
 */
function checkReplayWindows(
  sources: readonly WebhookSourceConfig[],
  env: Env,
  name: (index: number) => string,
): void {
  const deploymentTtl = numberEnv('FORGEBRIDGE_DEDUPE_TTL_SECONDS', env) ?? AwsDefaults.dedupeTtlSeconds;
  for (const [index, source] of sources.entries()) {
    const { forge, verifyWith, toleranceSeconds } = source.deliveryOptions;
    if (resolvePreset(forge).standardHeaders.length === 0 || verifyWith === 'token') continue;
    const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const ttl = source.dedupeTtlSeconds ?? deploymentTtl;
    if (tolerance >= ttl) {
      throw new TypeError(
        `${name(index)} accepts a signed timestamp for ${tolerance} s but keeps its dedupe record ${ttl} s: the timestamp tolerance ("toleranceSeconds") must be shorter than the dedupe lifetime ("dedupeTtlSeconds" or "FORGEBRIDGE_DEDUPE_TTL_SECONDS"), or a replay is accepted once the record expires`,
      );
    }
  }
}

/** A source with its `forge` read through from its delivery options. */
function withForge(source: Omit<WebhookSourceConfig, 'forge'>): WebhookSourceConfig {
  return Object.defineProperty(source, 'forge', {
    get(this: WebhookSourceConfig) {
      return this.deliveryOptions.forge;
    },
    enumerable: true,
  }) as WebhookSourceConfig;
}

function label(index: number, field?: string): string {
  return `"${SOURCES_VAR}[${index}]${field === undefined ? '' : `.${field}`}"`;
}

function forgeList(): string {
  return Forges.map((forge) => `"${forge}"`).join(', ');
}

function parseSource(entry: unknown, index: number, shared: SharedOptions): WebhookSourceConfig {
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
  const options: Omit<DeliveryOptions, 'secret'> & { forge: Forge } = { ...shared, forge: forge as Forge };
  const headers: NonNullable<DeliveryOptions['headers']> = {};
  for (const [key, field] of [
    ['eventHeader', 'event'],
    ['deliveryHeader', 'delivery'],
  ] as const) {
    const header = text(key, false);
    if (header === undefined) continue;
    if (!HEADER_NAME.test(header)) throw new TypeError(`${label(index, key)} must be a header name`);
    headers[field] = header.toLowerCase();
  }
  if (Object.keys(headers).length > 0) options.headers = headers;
  const source = withForge({ name, secretParameter, secretEnv, deliveryOptions: options });
  if (record.hook !== undefined) {
    source.hook = parseSourceHook(record.hook, options.forge, (field) =>
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
    options.toleranceSeconds = tolerance;
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
    options.verifyWith = verifyWith;
  }
  return source;
}
