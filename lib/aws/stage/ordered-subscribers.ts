/**
 * The ordered subscribers of a stage (`FORGEBRIDGE_ORDERED_SUBSCRIBERS`, docs/ordering.md): each a function of
 * serverless.yml fed by the ordered stream through a Kinesis event-source mapping, with the mapping's settings
 * checked against the ranges Lambda and Kinesis accept, so that a wrong value stops `osls package`, not the deploy.
 * No AWS SDK here: infra/ordered.cjs and `forgebridge config` load it.
 */
import { type Env, optionalEnv } from '../env.js';
import { type OrderBy, orderByText, parseOrderBy } from '../order-by.js';

/** One ordered subscriber, as {@link readOrderedSubscribers} reads it, every default filled in. */
export interface OrderedSubscriberConfig {
  /** The function's key in serverless.yml (`onPullRequestOrdered`). */
  function: string;
  /** Its handler (`functions/ordered/handler.handler`). */
  handler: string;
  /**
   * The EventBridge pattern of the events it gets, as a rule's (`{ "detail": { "event": ["pull_request"] } }`);
   * the mapping's filter criteria match it against each record's data. Default: every event.
   */
  pattern: Record<string, unknown>;
  /** What it needs kept in order: each resource's deliveries (default), each repository's, or a path's key. */
  orderBy: OrderBy;
  /** Concurrent batches per shard, 1 to 10 (Lambda's range); records of one partition key stay in one. Default 10. */
  parallelizationFactor: number;
  /** Records per invocation, 1 to 10000. Default 10. */
  batchSize: number;
  /** Retries of a failing record before it goes to the failure destination, 0 to 10000. Default 3. */
  maximumRetryAttempts: number;
  /** Oldest record still handed over, in seconds: 60 to 604800, or -1 for as long as the stream keeps it. Default -1. */
  maximumRecordAgeInSeconds: number;
}

/**
 * The key of a serverless.yml function, as the Serverless Framework and a CloudFormation logical id take it, short
 * enough for its SDK app id (`forgebridge-<key>`, at most 50 characters).
 */
const FUNCTION_KEY = /^[A-Za-z][A-Za-z0-9]{0,37}$/;
/** A handler: a file path without extension, a dot, the export. */
const HANDLER = /^[\w./-]+\.[A-Za-z_$][\w$]*$/;
/**
 * serverless.yml's own functions: an ordered subscriber may not take one of their keys. A unit test reads
 * serverless.yml and holds this list to it.
 */
const RESERVED = new Set([
  'ingest',
  'redrive',
  'reconcile',
  'refresh',
  'onIssuesOpened',
  'onIssues',
  'onIssuesPrefix',
  'onPush',
  'onEverything',
  'recorder',
  'onPullRequestOnBus',
  'onPullRequestOpened',
]);
const FIELDS = new Set([
  'function',
  'handler',
  'pattern',
  'orderBy',
  'parallelizationFactor',
  'batchSize',
  'maximumRetryAttempts',
  'maximumRecordAgeInSeconds',
]);

const NAME = 'FORGEBRIDGE_ORDERED_SUBSCRIBERS';

function whole(
  at: string,
  field: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  also?: number,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    ((value < min || value > max) && value !== also)
  ) {
    throw new TypeError(
      `"${NAME}"${at}: "${field}" must be a whole number from ${min} to ${max}${also === undefined ? '' : ` or ${also}`}`,
    );
  }
  return value;
}

/**
 * Reads `FORGEBRIDGE_ORDERED_SUBSCRIBERS` (a JSON list; a YAML list in a stage file): `[]` when empty. A
 * `TypeError` naming the entry and the field for anything Lambda or the stack would refuse: an unknown field, a
 * function key taken twice or by one of the stack's own functions, a parallelization factor outside 1 to 10, a batch
 * size outside 1 to 10000, unbounded retries, a record age outside 60 to 604800 s, a pattern that is not an object.
 */
export function readOrderedSubscribers(env: Env = process.env): OrderedSubscriberConfig[] {
  const text = optionalEnv(NAME, env);
  if (text === undefined) return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    throw new TypeError(`"${NAME}" must be a JSON list`);
  }
  if (!Array.isArray(list)) throw new TypeError(`"${NAME}" must be a list`);
  const seen = new Set<string>();
  return list.map((entry, index) => {
    const at = `[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new TypeError(`"${NAME}"${at} must be a mapping`);
    }
    const fields = entry as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (!FIELDS.has(key)) {
        throw new TypeError(`"${NAME}"${at}: "${key}" is not a field (${[...FIELDS].join(', ')})`);
      }
    }
    const name = fields.function;
    if (typeof name !== 'string' || !FUNCTION_KEY.test(name)) {
      throw new TypeError(
        `"${NAME}"${at}: "function" must be a serverless.yml function key: a letter, then letters and digits (at most 38)`,
      );
    }
    if (RESERVED.has(name))
      throw new TypeError(`"${NAME}"${at}: "${name}" is one of the stack's own functions`);
    if (seen.has(name)) throw new TypeError(`"${NAME}"${at}: "${name}" is listed twice`);
    seen.add(name);
    if (typeof fields.handler !== 'string' || !HANDLER.test(fields.handler)) {
      throw new TypeError(
        `"${NAME}"${at}: "handler" must be a handler path ("functions/ordered/handler.handler")`,
      );
    }
    const pattern = fields.pattern ?? {};
    if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern)) {
      throw new TypeError(`"${NAME}"${at}: "pattern" must be an EventBridge pattern (a mapping)`);
    }
    let orderBy: OrderBy;
    try {
      orderBy = parseOrderBy(fields.orderBy === undefined ? 'resource' : String(fields.orderBy));
    } catch (error) {
      throw new TypeError(`"${NAME}"${at}: "orderBy" ${(error as Error).message}`);
    }
    return {
      function: name,
      handler: fields.handler,
      pattern: pattern as Record<string, unknown>,
      orderBy,
      parallelizationFactor: whole(at, 'parallelizationFactor', fields.parallelizationFactor, 10, 1, 10),
      batchSize: whole(at, 'batchSize', fields.batchSize, 10, 1, 10_000),
      // Lambda takes -1 (until the record expires); a poison record would then hold its keys for a day: bounded only.
      maximumRetryAttempts: whole(at, 'maximumRetryAttempts', fields.maximumRetryAttempts, 3, 0, 10_000),
      maximumRecordAgeInSeconds: whole(
        at,
        'maximumRecordAgeInSeconds',
        fields.maximumRecordAgeInSeconds,
        -1,
        60,
        604_800,
        -1,
      ),
    };
  });
}

/**
 * What the stream is partitioned by, for every ordered subscriber at once: the coarsest grouping any of them asks
 * for (a repository's deliveries in order keeps each of its resources' in order too). Subscribers grouping by a
 * path must all name the same path, and none may group by a forge's resource or repository beside them: a path's
 * key and a forge's key order different things. `resource` when there is no subscriber.
 */
export function streamOrderBy(subscribers: readonly OrderedSubscriberConfig[]): OrderBy {
  const texts = new Set(subscribers.map(({ orderBy }) => orderByText(orderBy)));
  const paths = [...texts].filter((text) => text.startsWith('$'));
  if (paths.length > 0) {
    if (texts.size > 1) {
      throw new TypeError(
        `"${NAME}": the ordered subscribers group by ${[...texts].map((t) => `"${t}"`).join(' and ')}; one stream is partitioned one way: give them all the same "orderBy"`,
      );
    }
    return { path: paths[0] as string };
  }
  return texts.has('repository') ? 'repository' : 'resource';
}

/** The ordered stream and its subscribers (docs/ordering.md). */
export interface OrderedStreamSettings {
  subscribers: OrderedSubscriberConfig[];
  /** What the stream's partition key is: the coarsest grouping a subscriber asks for. */
  orderBy: OrderBy;
  /** Provisioned shards: 1 to 500. */
  shards: number;
  /** How long the stream keeps a record, in hours: 24 to 8760. */
  retentionHours: number;
}

/** A whole-number setting from `min` to `max`: a `TypeError` naming it otherwise. */
function setting(settings: Env, name: string, min: number, max: number): number {
  const text = settings[name] ?? '';
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`"${name}" must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/**
 * The ordered subscribers and their stream's settings, each checked against what Kinesis takes: a `TypeError`
 * naming the setting.
 */
export function readOrderedStreamSettings(settings: Env): OrderedStreamSettings {
  const subscribers = readOrderedSubscribers(settings);
  const name = settings.FORGEBRIDGE_STREAM_NAME ?? '';
  // Kinesis's stream names: 1 to 128 of letters, digits, `_`, `.`, `-`.
  if (name !== '' && !/^[A-Za-z0-9_.-]{1,128}$/.test(name)) {
    throw new TypeError(
      '"FORGEBRIDGE_STREAM_NAME" must be 1 to 128 letters, digits, "_", "." or "-" (Kinesis\'s stream names), or empty',
    );
  }
  return {
    subscribers,
    orderBy: streamOrderBy(subscribers),
    // 500: the default shard quota of the larger regions (200 elsewhere); AWS refuses more than the account's quota.
    shards: setting(settings, 'FORGEBRIDGE_STREAM_SHARDS', 1, 500),
    retentionHours: setting(settings, 'FORGEBRIDGE_STREAM_RETENTION_HOURS', 24, 8760),
  };
}
