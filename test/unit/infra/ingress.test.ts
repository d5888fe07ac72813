// infra/ingress.cjs as osls calls each of its exports: `({ options, resolveConfigurationProperty, resolveVariable })`,
// resolving `self:` variables of serverless.yml (here from a map: the stage's region and the HTTP API switch).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

interface Context {
  options: Record<string, unknown>;
  resolveConfigurationProperty: (path: string[]) => Promise<unknown>;
  resolveVariable: (name: string) => Promise<unknown>;
}
interface MetricQuery {
  Id: string;
  MetricStat?: { Metric: { MetricName: string } };
  Expression?: string;
}
const ingress = createRequire(import.meta.url)('../../../infra/ingress.cjs') as {
  REGIONS_WITHOUT_FUNCTION_URLS: readonly string[];
  url(context: Context): Promise<boolean>;
  events(context: Context): Promise<unknown[]>;
  ingest5xxMetrics(context: Context): Promise<MetricQuery[]>;
};

/** What osls hands the file for `--region <region>` with FORGEBRIDGE_HTTP_API resolved to `httpApi`. */
function stage(region: string, httpApi: unknown): Context {
  const variables: Record<string, unknown> = {
    'self:provider.region': region,
    'self:custom.forgebridge.httpApi': httpApi,
  };
  return {
    options: { stage: 'dev', region },
    resolveConfigurationProperty: async () => undefined,
    resolveVariable: async (name) => {
      if (!(name in variables)) throw new Error(`unexpected variable ${name}`);
      return variables[name];
    },
  };
}

const metricsOf = async (context: Context) =>
  (await ingress.ingest5xxMetrics(context)).map(
    (query) => query.MetricStat?.Metric.MetricName ?? query.Expression,
  );

describe('infra/ingress.cjs', () => {
  it('lists the regions the Lambda developer guide names, and none that offers Function URLs', () => {
    const list = ingress.REGIONS_WITHOUT_FUNCTION_URLS;
    expect(list).toEqual(
      expect.arrayContaining(['ap-south-2', 'ap-southeast-4', 'eu-central-2', 'me-central-1']),
    );
    for (const offered of ['us-east-1', 'eu-west-1', 'ap-south-1', 'ap-southeast-2', 'eu-central-1']) {
      expect(list).not.toContain(offered);
    }
    expect(new Set(list).size).toBe(list.length);
    for (const region of list) expect(region).toMatch(/^[a-z]{2}-[a-z]+-\d$/);
    expect(Object.isFrozen(list)).toBe(true);
  });

  it('keeps the Function URL where the region offers it, with its 5xx in the alarm, and no HTTP API unless asked', async () => {
    const plain = stage('us-east-1', 'false');
    expect(await ingress.url(plain)).toBe(true);
    expect(await ingress.events(plain)).toEqual([]);
    expect(await metricsOf(plain)).toEqual(['Url5xxCount', 'Errors', 'FILL(url, 0) + FILL(errors, 0)']);

    const both = stage('eu-west-1', true);
    expect(await ingress.url(both)).toBe(true);
    expect(await ingress.events(both)).toHaveLength(2);
    expect(await metricsOf(both)).toEqual([
      '5xx',
      'Url5xxCount',
      'Errors',
      'FILL(api, 0) + FILL(url, 0) + FILL(errors, 0)',
    ]);
  });

  it('stops the package in a region without Function URLs, in one line naming FORGEBRIDGE_HTTP_API=true', async () => {
    const error = await ingress.url(stage('ap-south-2', 'false')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    const message =
      'lambda offers no function urls in region "ap-south-2": set FORGEBRIDGE_HTTP_API=true (config/<stage>.yml or the environment) so the ingest gets an http api instead';
    expect((error as Error).message).toBe(message);
    // osls prints the stack of an error thrown here: it is the one line.
    expect((error as Error).stack).toBe(`TypeError: ${message}`);
    for (const region of ingress.REGIONS_WITHOUT_FUNCTION_URLS) {
      await expect(ingress.url(stage(region, 'false'))).rejects.toThrow(`region "${region}"`);
    }
  });

  it('leaves only the other references in such a region: they resolve, so osls prints that one error alone', async () => {
    const alone = stage('ap-south-2', 'false');
    expect(await ingress.events(alone)).toEqual([]);
    expect(await metricsOf(alone)).toEqual(['Errors', 'FILL(errors, 0)']);
  });

  it('turns the URL off there with FORGEBRIDGE_HTTP_API=true: the HTTP API routes, its 5xx, and no Url5xxCount', async () => {
    const httpOnly = stage('ap-south-2', 'true');
    expect(await ingress.url(httpOnly)).toBe(false);
    expect(await ingress.events(httpOnly)).toEqual([
      { httpApi: { method: 'POST', path: '/webhooks' } },
      { httpApi: { method: 'POST', path: '/webhooks/{source}' } },
    ]);
    expect(await metricsOf(httpOnly)).toEqual(['5xx', 'Errors', 'FILL(api, 0) + FILL(errors, 0)']);
  });

  it('refuses an HTTP API switch that is neither true nor false, in one line', async () => {
    const error = await ingress.events(stage('us-east-1', 'yes')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      message: 'environment variable "FORGEBRIDGE_HTTP_API" must be "true" or "false"',
      stack: 'TypeError: environment variable "FORGEBRIDGE_HTTP_API" must be "true" or "false"',
    });
  });
});
