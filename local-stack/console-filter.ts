// What `npm start` shows of `osls offline`'s output: everything but the noise of the retrier the stack runs every
// few seconds (serverless-offline's duration line of each run) and the functions' metric lines, which CloudWatch
// would read on AWS; with `--metrics`, those metric lines in a readable form instead.

import { MetricNames } from '../lib/aws/core/index.js';

/** Options of {@link createConsoleFilter}. */
export interface ConsoleFilterOptions {
  /** Show the metrics the functions print (CloudWatch embedded metric format), one readable line each. */
  metrics?: boolean | undefined;
}

/** serverless-offline's line after each invocation of the retrier (`(λ: redrive) RequestId: …  Duration: …`). */
const REDRIVE_RUN = /\(λ: redrive\) RequestId: \S+\s+Duration: /;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes serverless-offline may print
const ANSI = /\u001b\[[0-9;]*m/g;
/** Metrics printed once per retrier run: shown only when one of them changed. */
const QUEUE_METRICS = new Set<string>([
  MetricNames.queueDepth,
  MetricNames.queueOldestAgeSeconds,
  MetricNames.redrivePublished,
]);
const UNITS: Readonly<Record<string, string>> = { Milliseconds: ' ms', Seconds: ' s', Bytes: ' B' };

interface Directive {
  Namespace?: unknown;
  Dimensions?: unknown;
  Metrics?: unknown;
}

/** A metric line: a JSON object with `_aws.CloudWatchMetrics` and no log `message`. */
function metricLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{') || !line.includes('"CloudWatchMetrics"')) return undefined;
  try {
    const value = JSON.parse(line) as Record<string, unknown> | null;
    const directives = (value?._aws as { CloudWatchMetrics?: unknown } | undefined)?.CloudWatchMetrics;
    if (value === null || !Array.isArray(directives) || 'message' in value) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/** `metrics  Deliveries=1  Source=default Verdict=verified Outcome=published` (the `service` dimension left out). */
function readable(line: Record<string, unknown>): { text: string; names: string[] } {
  const directives = (line._aws as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics;
  const names: string[] = [];
  const values: string[] = [];
  const dimensions = new Set<string>();
  for (const directive of directives) {
    for (const metric of Array.isArray(directive.Metrics) ? directive.Metrics : []) {
      const { Name, Unit } = metric as { Name?: unknown; Unit?: unknown };
      if (typeof Name !== 'string') continue;
      names.push(Name);
      values.push(`${Name}=${String(line[Name])}${typeof Unit === 'string' ? (UNITS[Unit] ?? '') : ''}`);
    }
    for (const set of Array.isArray(directive.Dimensions) ? directive.Dimensions : []) {
      for (const name of Array.isArray(set) ? set : []) if (name !== 'service') dimensions.add(String(name));
    }
  }
  const dims = [...dimensions].map((name) => `${name}=${String(line[name])}`).join(' ');
  return { text: `metrics  ${values.join('  ')}${dims === '' ? '' : `  ${dims}`}`, names };
}

/**
 * A filter of `osls offline`'s output lines for `npm start`: `undefined` drops a line, a string is what to print.
 * Quiet by default: the retrier's run lines and every metric line are dropped (a log line that carries a metric,
 * as the dead-letter line does, stays). With `metrics`, each metric line is printed readable instead, and the
 * retrier's queue line only when it differs from the last one printed (an idle queue shows once, not every run).
 */
export function createConsoleFilter(
  options: ConsoleFilterOptions = {},
): (line: string) => string | undefined {
  let lastQueue: string | undefined;
  return (line) => {
    const plain = line.replace(ANSI, '').trim();
    if (REDRIVE_RUN.test(plain)) return undefined;
    const metric = metricLine(plain);
    if (metric === undefined) return line;
    if (options.metrics !== true) return undefined;
    const { text, names } = readable(metric);
    if (names.some((name) => QUEUE_METRICS.has(name))) {
      if (text === lastQueue) return undefined;
      lastQueue = text;
    }
    return text;
  };
}

/** `npm start`'s own options: `--metrics`; anything else is refused with a message naming it. */
export function parseStartArgs(args: readonly string[]): { metrics: boolean } {
  let metrics = false;
  for (const arg of args) {
    if (arg === '--metrics') metrics = true;
    else throw new TypeError(`unknown option "${arg}" (npm start takes --metrics only)`);
  }
  return { metrics };
}
