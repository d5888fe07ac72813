import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { AwsDefaults } from './constants.js';
import type { DeliveryOutcome, DeliveryVerdict } from './delivery-log/index.js';
import type { Env } from './env.js';

/** The metric names of docs/operations.md: the alarms and the dashboard read exactly these. */
export const MetricNames = {
  deliveries: 'Deliveries',
  ingestDuration: 'IngestDuration',
  bodyBytes: 'BodyBytes',
  queueDepth: 'QueueDepth',
  queueOldestAgeSeconds: 'QueueOldestAgeSeconds',
  /** 1 on a retrier run that could not read the queue's depth and age: a blind queue is itself an alarm. */
  queueStatsFailed: 'QueueStatsFailed',
  redrivePublished: 'RedrivePublished',
  deadLettered: 'DeadLettered',
  subscriberOutcome: 'SubscriberOutcome',
  subscriberDuration: 'SubscriberDuration',
  reconcileFailedAtForge: 'ReconcileFailedAtForge',
  reconcileRedelivered: 'ReconcileRedelivered',
  reconcileRecovered: 'ReconcileRecovered',
} as const;

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
  deadLettered: number;
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
    deliveries.addDimension('Source', known ? (metric.source as string) : UNKNOWN_SOURCE);
    deliveries.addDimension('Verdict', metric.verdict);
    deliveries.addDimension('Outcome', metric.outcome);
    deliveries.addMetric(MetricNames.deliveries, MetricUnit.Count, 1);
    deliveries.publishStoredMetrics();
    this.#metrics.addMetric(MetricNames.ingestDuration, MetricUnit.Milliseconds, round(metric.durationMs));
    this.#metrics.addMetric(MetricNames.bodyBytes, MetricUnit.Bytes, metric.bodyBytes);
    this.#metrics.publishStoredMetrics();
  }

  /**
   * `QueueDepth` and `QueueOldestAgeSeconds` (or `QueueStatsFailed` when they could not be read), `RedrivePublished`
   * and `DeadLettered` of one run: one line.
   */
  queue(metric: QueueMetric): void {
    if (metric.depth !== undefined)
      this.#metrics.addMetric(MetricNames.queueDepth, MetricUnit.Count, metric.depth);
    if (metric.oldestAgeSeconds !== undefined)
      this.#metrics.addMetric(MetricNames.queueOldestAgeSeconds, MetricUnit.Seconds, metric.oldestAgeSeconds);
    if (metric.statsFailed === true)
      this.#metrics.addMetric(MetricNames.queueStatsFailed, MetricUnit.Count, 1);
    this.#metrics.addMetric(MetricNames.redrivePublished, MetricUnit.Count, metric.published);
    this.#metrics.addMetric(MetricNames.deadLettered, MetricUnit.Count, metric.deadLettered);
    this.#metrics.publishStoredMetrics();
  }

  /** `ReconcileFailedAtForge`, `ReconcileRedelivered` and `ReconcileRecovered` by `Source`: one line. */
  reconcile(metric: ReconcileMetric): void {
    this.#metrics.addDimension('Source', metric.source);
    this.#metrics.addMetric(MetricNames.reconcileFailedAtForge, MetricUnit.Count, metric.failedAtForge);
    this.#metrics.addMetric(MetricNames.reconcileRedelivered, MetricUnit.Count, metric.redelivered);
    this.#metrics.addMetric(MetricNames.reconcileRecovered, MetricUnit.Count, metric.recovered);
    this.#metrics.publishStoredMetrics();
  }

  /** `SubscriberOutcome` and `SubscriberDuration` by `Function` and `Outcome`: one line. */
  subscriber(metric: SubscriberMetric): void {
    this.#metrics.addDimension('Function', metric.function);
    this.#metrics.addDimension('Outcome', metric.outcome);
    this.#metrics.addMetric(MetricNames.subscriberOutcome, MetricUnit.Count, 1);
    this.#metrics.addMetric(
      MetricNames.subscriberDuration,
      MetricUnit.Milliseconds,
      round(metric.durationMs),
    );
    this.#metrics.publishStoredMetrics();
  }
}

function round(ms: number): number {
  return Math.max(0, Math.round(ms * 100) / 100);
}
