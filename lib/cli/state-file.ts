/**
 * The state file of a running local stack: `npm start` writes it (`.tmp/local-stack.json`, unless
 * FORGEBRIDGE_STATE_FILE names another) and the `forgebridge` commands read it to reach the stack (every webhook
 * source with its forge, URL and secret; the DynamoDB and Lambda endpoints; the delivery log's and queue's
 * tables). Its one schema, its one reader and its one writer: the CLI's second door besides `run.ts`, for the
 * local stack and scripts/ (lib never imports local-stack/).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isSourceName } from '../aws/core/index.js';
import { type Forge, Forges } from '../webhooks/index.js';
import { writePrivateFile } from './files.js';

/** The file `npm start` writes with the running stack's sources, unless FORGEBRIDGE_STATE_FILE names another. */
export const STATE_FILE = new URL('../../.tmp/local-stack.json', import.meta.url);

/** The state file to read and write: FORGEBRIDGE_STATE_FILE, else {@link STATE_FILE}. */
export function stateFile(env: NodeJS.ProcessEnv = process.env): URL | string {
  const named = env.FORGEBRIDGE_STATE_FILE;
  return named === undefined || named === '' ? STATE_FILE : named;
}

/** One webhook source of the local stack, as its state file lists it. */
export interface LocalSource {
  readonly name: string;
  readonly forge: Forge;
  /** Where this source's forge posts (`…/webhooks` for `default`, `…/webhooks/<name>` for the others). */
  readonly url: string;
  /** The secret(s) it verifies with, comma-separated. */
  readonly secret: string;
}

/** The state file's content, as the stack writes it. */
export interface LocalStackState {
  /** The `default` source's URL (generic preset). */
  readonly webhookUrl: string;
  /** The `default` source's secret(s). */
  readonly secret: string;
  /** Every webhook source: name, forge, URL and the secret(s) it verifies with. */
  readonly sources: readonly LocalSource[];
  /**
   * `lambda`: serverless-offline's Lambda API, where `forgebridge reconcile` invokes the reconcile function;
   * `eventBridge`: its EventBridge, where `forgebridge replay --since` puts deliveries on the bus again.
   */
  readonly endpoints: {
    readonly dynamodb: string;
    readonly lambda?: string;
    readonly sqs?: string;
    readonly eventBridge?: string;
    /** kinesalite, the ordered stream (with an ordered subscriber only). */
    readonly kinesis?: string;
  };
  /** `subscriberDlq`: the subscriber rules' dead-letter queue (`forgebridge dlq`), on `endpoints.sqs`; `bus`: the bus. */
  readonly names: {
    readonly deliveriesTable: string;
    readonly dedupeTable: string;
    /** The token table: the forge API governor's items (`forgebridge status`). */
    readonly tokenTable?: string;
    readonly subscriberDlq?: string;
    readonly bus?: string;
    /** The ordered subscribers' failure queue (`forgebridge dlq --queue ordered`), on `endpoints.sqs`. */
    readonly orderedFailureQueue?: string;
  };
}

/** What a reader finds in the state file: each part that is there and well-formed (nothing without a stack). */
export interface FoundStackState {
  readonly webhookUrl?: string;
  readonly secret?: string;
  readonly sources?: readonly LocalSource[];
  readonly endpoints?: Partial<LocalStackState['endpoints']>;
  readonly names?: Partial<LocalStackState['names']>;
}

/**
 * Writes `state` to `file` readable by its owner only, also over an older file with a wider mode: it holds every
 * source's secret.
 */
export function writeStackState(state: LocalStackState, file: URL | string): void {
  writePrivateFile(file instanceof URL ? fileURLToPath(file) : file, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * The running local stack's state file, part by part: a source that is not a valid name, a known forge, an
 * http(s) URL and a secret is left out, as is any field of another type; nothing from a missing or half-written
 * file.
 */
export function readStackState(file: URL | string = STATE_FILE): FoundStackState {
  let state: Record<string, unknown>;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!isObject(parsed)) return {};
    state = parsed;
  } catch {
    // No local stack running (or a half-written file): the defaults apply.
    return {};
  }
  const webhookUrl = stringAt(state, 'webhookUrl');
  const secret = stringAt(state, 'secret');
  const sources = Array.isArray(state.sources) ? state.sources.filter(isSource) : undefined;
  const endpoints = pick(state.endpoints, ['dynamodb', 'lambda', 'sqs', 'eventBridge', 'kinesis']);
  const names = pick(state.names, [
    'deliveriesTable',
    'dedupeTable',
    'tokenTable',
    'subscriberDlq',
    'bus',
    'orderedFailureQueue',
  ]);
  return {
    ...(webhookUrl === undefined ? {} : { webhookUrl }),
    ...(secret === undefined ? {} : { secret }),
    ...(sources === undefined
      ? {}
      : { sources: sources.map(({ name, forge, url, secret }) => ({ name, forge, url, secret })) }),
    ...(endpoints === undefined ? {} : { endpoints }),
    ...(names === undefined ? {} : { names }),
  };
}

function isSource(value: unknown): value is LocalSource {
  if (!isObject(value)) return false;
  const { name, forge, url, secret } = value;
  return (
    isSourceName(name) &&
    typeof forge === 'string' &&
    (Forges as readonly string[]).includes(forge) &&
    typeof url === 'string' &&
    /^https?:\/\//.test(url) &&
    typeof secret === 'string' &&
    secret.length > 0
  );
}

/** The non-empty string fields `keys` of `value`, or `undefined` when it has none. */
function pick<K extends string>(value: unknown, keys: readonly K[]): Partial<Record<K, string>> | undefined {
  if (!isObject(value)) return undefined;
  const found: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const field = stringAt(value, key);
    if (field !== undefined) found[key] = field;
  }
  return Object.keys(found).length === 0 ? undefined : found;
}

function stringAt(value: Record<string, unknown>, key: string): string | undefined {
  const field = value[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
