import { Metrics } from '@aws-lambda-powertools/metrics';
import { AwsDefaults, MetricDefinitions, MetricDimensions } from './constants.js';
import type { DeliveryOutcome, DeliveryVerdict } from './delivery-log/index.js';
import type { Env } from './env.js';
import type { GovernorEvent } from './governor/governor.js';

/** The `Source` of a request to a source that is not configured: no source name can be it. */
export const UNKNOWN_SOURCE = '_unknown';

/** Options of {@link ForgebridgeMetrics}. */
export interface ForgebridgeMetricsOptions {
  /** CloudWatch namespace. Default `FORGEBRIDGE_METRIC_NAMESPACE`, else `forgebridge`. */
  namespace?: string | undefined;
  /** The `service` dimension. Default `POWERTOOLS_SERVICE_NAME`, else `forgebridge`. */
  service?: string | undefined;
  /** The configured webhook sources: any other `Source` counts as `_unknown`. */
  sources?: Iterable<string> | undefined;
  /** Where the defaults are read from. Default `process.env`. */
  env?: Env | undefined;
}

/** One answered ingest request, as the delivery log sees it. */
export interface DeliveryMetric {
  source: string | undefined;
  verdict: DeliveryVerdict;
  outcome: DeliveryOutcome;
  bodyBytes: number;
  durationMs: number;
}

/** What one retrier run saw and did. */
export interface QueueMetric {
  /** Left out when the queue could not be read. */
  depth?: number | undefined;
  oldestAgeSeconds?: number | undefined;
  /** The queue's depth and age could not be read (denied, throttled): `QueueStatsFailed` 1 stands in for them. */
  statsFailed?: boolean | undefined;
  published: number;
}

/** What one reconciler run found and did for one source. */
export interface ReconcileMetric {
  source: string;
  /** Failed at the forge and never ours. */
  failedAtForge: number;
  redelivered: number;
  recovered: number;
}

/** One event a reporting subscriber handled. */
export interface SubscriberMetric {
  /** The subscriber's function name. */
  function: string;
  outcome: 'ok' | 'error';
  durationMs: number;
}

/**
 * The functions' custom metrics, printed to stdout in the CloudWatch embedded metric format through Powertools
 * Metrics (CloudWatch Logs turns each line into metrics: no API call). Every metric carries `service`, plus the
 * low-cardinality dimensions docs/operations.md lists for it; each call prints its lines at once.
 */
export class ForgebridgeMetrics {
  readonly #metrics: Metrics;
  /**
   * The `Deliveries` line, with its own dimensions: a second instance kept for the function's life rather than
   * a `singleMetric()` per delivery, which builds a new `Metrics` (and a new `Console`) each time.
   */
  readonly #deliveries: Metrics;
  readonly #sources: ReadonlySet<string> | undefined;

  constructor(options: ForgebridgeMetricsOptions = {}) {
    const env = options.env ?? process.env;
    const settings = {
      namespace: options.namespace || env.FORGEBRIDGE_METRIC_NAMESPACE || AwsDefaults.metricNamespace,
      serviceName: options.service || env.POWERTOOLS_SERVICE_NAME || 'forgebridge',
    };
    this.#metrics = new Metrics(settings);
    this.#deliveries = new Metrics(settings);
    this.#sources = options.sources === undefined ? undefined : new Set(options.sources);
  }

  /** `Deliveries` by `Source`, `Verdict` and `Outcome`; `IngestDuration` and `BodyBytes`: two lines. */
  delivery(metric: DeliveryMetric): void {
    const known = metric.source !== undefined && (this.#sources?.has(metric.source) ?? true);
    const deliveries = this.#deliveries;
    deliveries.addDimension(MetricDimensions.source, known ? (metric.source as string) : UNKNOWN_SOURCE);
    deliveries.addDimension(MetricDimensions.verdict, metric.verdict);
    deliveries.addDimension(MetricDimensions.outcome, metric.outcome);
    add(deliveries, 'deliveries', 1);
    deliveries.publishStoredMetrics();
    add(this.#metrics, 'ingestDuration', round(metric.durationMs));
    add(this.#metrics, 'bodyBytes', metric.bodyBytes);
    this.#metrics.publishStoredMetrics();
  }

  /**
   * `QueueDepth` and `QueueOldestAgeSeconds` (or `QueueStatsFailed` when they could not be read) and
   * `RedrivePublished` of one run: one line. A dead letter is counted on its own log line ({@link logLineMetric}).
   */
  queue(metric: QueueMetric): void {
    if (metric.depth !== undefined) add(this.#metrics, 'queueDepth', metric.depth);
    if (metric.oldestAgeSeconds !== undefined)
      add(this.#metrics, 'queueOldestAgeSeconds', metric.oldestAgeSeconds);
    if (metric.statsFailed === true) add(this.#metrics, 'queueStatsFailed', 1);
    add(this.#metrics, 'redrivePublished', metric.published);
    this.#metrics.publishStoredMetrics();
  }

  /** `ReconcileFailedAtForge`, `ReconcileRedelivered` and `ReconcileRecovered` by `Source`: one line. */
  reconcile(metric: ReconcileMetric): void {
    this.#metrics.addDimension(MetricDimensions.source, metric.source);
    add(this.#metrics, 'reconcileFailedAtForge', metric.failedAtForge);
    add(this.#metrics, 'reconcileRedelivered', metric.redelivered);
    add(this.#metrics, 'reconcileRecovered', metric.recovered);
    this.#metrics.publishStoredMetrics();
  }

  /**
   * What the forge API governor saw: `ForgeApiWaits` and `ForgeApiWaitTime`, `ForgeApiRefused`,
   * `ForgeApiLimitAnswers`, `ForgeApiGovernorUnavailable` or `ForgeApiMalformedHeaders`: one line.
   */
  governor(event: GovernorEvent): void {
    if (event.type === 'waited') {
      add(this.#metrics, 'forgeApiWaits', 1);
      add(this.#metrics, 'forgeApiWaitTime', round(event.ms));
    } else if (event.type === 'refused') {
      add(this.#metrics, 'forgeApiRefused', 1);
    } else if (event.type === 'limit-answer') {
      add(this.#metrics, 'forgeApiLimitAnswers', 1);
    } else if (event.type === 'unavailable') {
      add(this.#metrics, 'forgeApiGovernorUnavailable', 1);
    } else {
      add(this.#metrics, 'forgeApiMalformedHeaders', 1);
    }
    this.#metrics.publishStoredMetrics();
  }

  /** `SubscriberOutcome` and `SubscriberDuration` by `Function` and `Outcome`: one line. */
  subscriber(metric: SubscriberMetric): void {
    this.#metrics.addDimension(MetricDimensions.function, metric.function);
    this.#metrics.addDimension(MetricDimensions.outcome, metric.outcome);
    add(this.#metrics, 'subscriberOutcome', 1);
    add(this.#metrics, 'subscriberDuration', round(metric.durationMs));
    this.#metrics.publishStoredMetrics();
  }
}

/** A metric of {@link MetricDefinitions} printed on a log line of its own: without `service`, nor any dimension. */
type LogLineMetric = {
  [K in keyof typeof MetricDefinitions]: (typeof MetricDefinitions)[K]['service'] extends false ? K : never;
}[keyof typeof MetricDefinitions];

/**
 * The fields that make a log line count 1 of `metric` in `namespace` (CloudWatch embedded metric format): for an
 * event that is alarmed on where it happens (a dead letter, a delivery given up), whatever the rest of the run does.
 *
 * @example
 * ```ts
 * logger.error('queued delivery dead-lettered', { delivery, ...logLineMetric('deadLetteredDeliveries', namespace) });
 * ```
 */
export function logLineMetric(
  metric: LogLineMetric,
  namespace: string,
  now: number = Date.now(),
): Record<string, unknown> {
  const { name, unit } = MetricDefinitions[metric];
  return {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [[]], Metrics: [{ Name: name, Unit: unit }] }],
    },
    [name]: 1,
  };
}

/** Adds one metric of {@link MetricDefinitions} under its name and unit. */
function add(metrics: Metrics, metric: keyof typeof MetricDefinitions, value: number): void {
  const { name, unit } = MetricDefinitions[metric];
  metrics.addMetric(name, unit, value);
}

function round(ms: number): number {
  return Math.max(0, Math.round(ms * 100) / 100);
}
