// infra/monitoring.cjs as osls calls it (`${file(infra/monitoring.cjs):resources}`), with the `self:` variables of
// serverless.yml from a map: every alarm on a custom metric and every graph of the dashboard is built from lib/aws's
// MetricDefinitions (name, namespace, dimension set), and infra/alarms.yml holds none of them by hand.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MetricDefinitions, MetricNames } from '../../../lib/aws/core/index.js';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
type Monitoring = (context: {
  resolveVariable: (name: string) => Promise<unknown>;
  resolveConfigurationProperty: (path: string[]) => Promise<unknown>;
}) => Promise<{ resources: { Resources: Record<string, Resource> } }>;

const root = new URL('../../../', import.meta.url).pathname;
const monitoring = createRequire(import.meta.url)('../../../infra/monitoring.cjs') as Monitoring;

/** The resources for `stage` (no config file: the defaults, the environment over them), two functions declared. */
async function resources(stage: string): Promise<Record<string, Resource>> {
  const variables: Record<string, unknown> = {
    'sls:stage': stage,
    'self:service': 'forgebridge',
    'self:custom.forgebridge.metricNamespace': `forgebridge/${stage}`,
    'self:provider.environment.POWERTOOLS_SERVICE_NAME': 'forgebridge',
  };
  const { resources } = await monitoring({
    resolveVariable: async (name) => {
      if (!(name in variables)) throw new Error(`unexpected variable ${name}`);
      return variables[name];
    },
    resolveConfigurationProperty: async () => ({
      onPush: { events: [{ eventBridge: { pattern: {} } }] },
      redrive: { events: [{ schedule: 'rate(1 minute)' }] },
    }),
  });
  return resources.Resources;
}

/** Each metric of our namespace an alarm watches: its name and its dimensions. */
function watched(properties: Record<string, unknown>, namespace: string) {
  const found: { name: string; dimensions: { Name: string; Value?: unknown }[] }[] = [];
  if (properties.Namespace === namespace) {
    found.push({
      name: properties.MetricName as string,
      dimensions: (properties.Dimensions ?? []) as { Name: string }[],
    });
  }
  for (const query of (properties.Metrics ?? []) as {
    MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string }[] } };
    Expression?: string;
  }[]) {
    const metric = query.MetricStat?.Metric;
    if (metric?.Namespace === namespace) {
      found.push({ name: metric.MetricName, dimensions: metric.Dimensions ?? [] });
    }
    for (const [, name, keys] of (query.Expression ?? '').matchAll(
      new RegExp(`SUM\\((\\w+)\\) FROM SCHEMA\\("${namespace}"([^)]*)\\)`, 'g'),
    )) {
      const names = (keys as string).split(',').map((key) => key.trim());
      found.push({ name: name as string, dimensions: names.filter(Boolean).map((Name) => ({ Name })) });
    }
  }
  return found;
}

const definitionOf = (name: string) => Object.values(MetricDefinitions).find((entry) => entry.name === name);

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('infra/monitoring.cjs', () => {
  it('builds every alarm on a custom metric from MetricDefinitions, under its logical id of before', async () => {
    vi.stubEnv('FORGEBRIDGE_ALARM_QUIET_HOURS', '2');
    vi.stubEnv(
      'FORGEBRIDGE_WEBHOOK_SOURCES',
      JSON.stringify([{ name: 'gitlab-acme', forge: 'gitlab', secretParameter: '/forgebridge/mon/gitlab' }]),
    );
    const built = await resources('unit-monitoring');
    const alarms = Object.entries(built).filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm');
    expect(alarms.map(([id]) => id).sort()).toEqual(
      [
        'DeadLetteredDeliveriesAlarm',
        'FailedAtForgeAlarm',
        'ForgeApiLimitAnswersAlarm',
        'OnPushErrorsAlarm',
        'QueueOldestAgeAlarm',
        'QueueStatsFailedAlarm',
        'QuietSourceGitlabAcmeAlarm',
        'ReconcileGaveUpDeliveriesAlarm',
        'RedriveErrorsAlarm',
        'SignatureFailuresAlarm',
      ].sort(),
    );
    const names = new Set<string>();
    for (const [id, resource] of alarms) {
      for (const metric of watched(resource.Properties, 'forgebridge/unit-monitoring')) {
        const definition = definitionOf(metric.name);
        expect(definition, `${id}: ${metric.name}`).toBeDefined();
        const expected = [...(definition?.dimensions ?? []), ...(definition?.service ? ['service'] : [])];
        expect(metric.dimensions.map((dimension) => dimension.Name).sort(), id).toEqual(expected.sort());
        names.add(metric.name);
      }
    }
    expect([...names].sort()).toEqual(
      [
        MetricNames.deliveries,
        MetricNames.queueOldestAgeSeconds,
        MetricNames.deadLetteredDeliveries,
        MetricNames.queueStatsFailed,
        MetricNames.reconcileGaveUpDeliveries,
        MetricNames.reconcileFailedAtForge,
        MetricNames.forgeApiLimitAnswers,
      ].sort(),
    );
    expect(built.QuietSourceGitlabAcmeAlarm?.Properties).toMatchObject({
      AlarmName: 'forgebridge-unit-monitoring-quiet-source-gitlab-acme',
      EvaluationPeriods: 2,
    });
  });

  it('graphs only metrics of MetricDefinitions, each under its dimension set', async () => {
    const built = await resources('unit-monitoring-dashboard');
    const dashboard = built.OperationsDashboard;
    if (dashboard === undefined) throw new Error('no dashboard');
    const body = (dashboard.Properties.DashboardBody as { 'Fn::Sub': string })['Fn::Sub'];
    const rows = (
      JSON.parse(body) as { widgets: { properties: { metrics?: unknown[][] } }[] }
    ).widgets.flatMap((widget) => widget.properties.metrics ?? []);
    const graphed: string[] = [];
    for (const row of rows) {
      if (typeof row[0] === 'string') {
        const definition = definitionOf(row[1] as string);
        expect(definition, String(row[1])).toBeDefined();
        const pairs = row.slice(2).filter((cell) => typeof cell === 'string');
        expect(pairs.filter((_, index) => index % 2 === 0)).toEqual(definition?.service ? ['service'] : []);
        graphed.push(row[1] as string);
      }
      for (const cell of row) {
        const expression = (cell as { expression?: string }).expression ?? '';
        for (const [, name] of expression.matchAll(/SUM\((\w+)\)/g)) graphed.push(name as string);
        for (const [, name] of expression.matchAll(/MetricName="(\w+)"/g)) graphed.push(name as string);
      }
    }
    for (const name of graphed) expect(definitionOf(name), name).toBeDefined();
    expect(graphed).toContain(MetricNames.deadLetteredDeliveries);
  });

  it('leaves infra/alarms.yml no alarm on a custom metric: the topic and the alarms on AWS metrics only', () => {
    const text = readFileSync(`${root}infra/alarms.yml`, 'utf8');
    expect(text).not.toContain('metricNamespace');
    for (const { name } of Object.values(MetricDefinitions)) expect(text, name).not.toContain(name);
  });
});
