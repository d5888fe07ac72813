// MetricDefinitions is the one home of the custom metrics: what ForgebridgeMetrics prints (captured from stdout, as
// CloudWatch Logs reads it) and the log-line metrics lib/aws writes are exactly its entries, each under its unit and
// its one dimension set; docs/operations.md's table lists the same.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MetricDefinitions, MetricNames, VERIFIED_DELIVERY_OUTCOMES } from '../../../lib/aws/core/index.js';
import { DeliveryOutcomes } from '../../../lib/aws/index.js';
import { ForgebridgeMetrics, logLineMetric } from '../../../lib/aws/metrics.js';

const root = new URL('../../../', import.meta.url).pathname;

/** One metric as an EMF line declares it: namespace, name, unit and its dimension set (sorted). */
interface Printed {
  namespace: string;
  name: string;
  unit: string;
  dimensions: string[];
}

/** The metrics declared by the EMF lines `run` writes to stdout. */
function printed(run: () => void): Printed[] {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return chunks
    .join('')
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => fromLine(JSON.parse(line)));
}

function fromLine(line: Record<string, unknown>): Printed[] {
  const aws = line._aws as {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  return aws.CloudWatchMetrics.flatMap((directive) => {
    expect(directive.Dimensions).toHaveLength(1);
    return directive.Metrics.map((metric) => {
      expect(line[metric.Name], metric.Name).toEqual(expect.any(Number));
      return {
        namespace: directive.Namespace,
        name: metric.Name,
        unit: metric.Unit,
        dimensions: [...(directive.Dimensions[0] ?? [])].sort(),
      };
    });
  });
}

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** What the definitions say is printed, in the shape of {@link Printed}. */
function defined(namespace: string): Printed[] {
  return Object.values(MetricDefinitions).map((definition) => ({
    namespace,
    name: definition.name,
    unit: definition.unit,
    dimensions: [...definition.dimensions, ...(definition.service ? ['service'] : [])].sort(),
  }));
}

const byName = (a: Printed, b: Printed) => a.name.localeCompare(b.name);

describe('MetricDefinitions', () => {
  it('is exactly what the functions print: every metric under its unit and its one dimension set', () => {
    const metrics = new ForgebridgeMetrics({ namespace: 'fb/test', service: 'forgebridge', env: {} });
    const all = printed(() => {
      metrics.delivery({
        source: 'default',
        verdict: 'verified',
        outcome: 'published',
        bodyBytes: 10,
        durationMs: 3,
      });
      metrics.queue({ depth: 1, oldestAgeSeconds: 5, published: 1 });
      metrics.queue({ statsFailed: true, published: 0 });
      metrics.reconcile({ source: 'github', failedAtForge: 1, redelivered: 1, recovered: 0 });
      metrics.subscriber({ function: 'forgebridge-ci-onPush', outcome: 'ok', durationMs: 2 });
      metrics.governor({ type: 'waited', ms: 120, limit: 'concurrency' });
      metrics.governor({ type: 'refused', limit: 'writes:80/60s' });
      metrics.governor({ type: 'limit-answer', status: 403, limit: 'retry-after' });
      metrics.governor({ type: 'unavailable' });
      metrics.governor({ type: 'malformed-header', header: 'retry-after' });
    });
    // The log-line metrics: each one lib/aws writes, found in its sources, as it writes it.
    const logLine = sources('lib/aws')
      .filter((file) => file !== 'lib/aws/metrics.ts')
      .flatMap((file) =>
        [...readFileSync(join(root, file), 'utf8').matchAll(/logLineMetric\('(\w+)'/g)].map(
          ([, key]) => key as keyof typeof MetricDefinitions,
        ),
      );
    expect(logLine.sort()).toEqual(['deadLetteredDeliveries', 'reconcileGaveUpDeliveries']);
    const lines = logLine.flatMap((key) =>
      fromLine(logLineMetric(key as 'deadLetteredDeliveries', 'fb/test', 1)),
    );
    const seen = new Map([...all, ...lines].map((metric) => [metric.name, metric]));
    expect([...seen.values()].sort(byName)).toEqual(defined('fb/test').sort(byName));
  });

  it('names each metric once', () => {
    const names = Object.values(MetricNames);
    expect(new Set(names).size).toBe(names.length);
    expect(MetricNames.deadLetteredDeliveries).toBe('DeadLetteredDeliveries');
  });

  it("counts as a verified delivery's outcomes those of the delivery log but a refusal and the reconciler's", () => {
    expect(VERIFIED_DELIVERY_OUTCOMES.every((outcome) => DeliveryOutcomes.includes(outcome))).toBe(true);
    expect(VERIFIED_DELIVERY_OUTCOMES).not.toContain('rejected');
  });

  it('is the table of docs/operations.md, "Metrics": name, unit and dimensions of each', () => {
    const doc = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const table = [...doc.matchAll(/^\| `(\w+)` \| (\w+) \| ([^|]+) \|/gm)].map(([, name, unit, cell]) => {
      const dimensions = [...(cell as string).matchAll(/`(\w+)`/g)].map(([, dim]) => dim as string);
      const service = !(cell as string).includes('not even');
      return {
        namespace: 'doc',
        name: name as string,
        unit: unit as string,
        dimensions: [
          ...dimensions.filter((dim) => dim !== 'service'),
          ...(service ? ['service'] : []),
        ].sort(),
      };
    });
    expect(table.sort(byName)).toEqual(defined('doc').sort(byName));
  });
});
