// The ingest's doors (docs/serverless.md, "Deploy"): its Function URL wherever Lambda offers Function URLs, the HTTP
// API when custom.forgebridge.httpApi is true (FORGEBRIDGE_HTTP_API=true; the local stack turns it on,
// serverless-offline serves the HTTP API routes). In a region without Function URLs the HTTP API is the only door:
// without it `osls package` stops with one line saying so. The ingest's 5xx alarm adds up the 5xx of the doors the
// template holds and the function's errors: a reference to a door that is not there would not deploy.
//
// Each export is its own function (`${file(infra/ingress.cjs):url}`), so that only `url` stops a package in such a
// region, and osls prints that one line once.
'use strict';

const ROUTES = ['/webhooks', '/webhooks/{source}'];

/**
 * The AWS Regions where Lambda offers no Function URLs, as of 2026-11-27, from the Lambda developer guide: "Creating
 * and managing Lambda function URLs", https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html ("Function
 * URLs are not supported in the following AWS Regions"). Recheck it when AWS opens a region.
 */
const REGIONS_WITHOUT_FUNCTION_URLS = Object.freeze([
  'ap-east-2', // Asia Pacific (Taipei)
  'ap-south-2', // Asia Pacific (Hyderabad)
  'ap-southeast-4', // Asia Pacific (Melbourne)
  'ap-southeast-5', // Asia Pacific (Malaysia)
  'ap-southeast-6', // Asia Pacific (New Zealand)
  'ap-southeast-7', // Asia Pacific (Thailand)
  'ca-west-1', // Canada West (Calgary)
  'eu-central-2', // Europe (Zurich)
  'eu-south-2', // Europe (Spain)
  'il-central-1', // Israel (Tel Aviv)
  'me-central-1', // Middle East (UAE)
]);

/**
 * A configuration error osls shows as one line: it prints an error thrown here by its stack, and the stack of a
 * wrong setting says nothing the message does not.
 */
function settingError(message) {
  const error = new TypeError(message);
  error.stack = `${error.name}: ${message}`;
  return error;
}

/** The doors of the stage: the HTTP API as configured, the Function URL where the region offers it. */
async function doors({ resolveVariable }) {
  const value = String(await resolveVariable('self:custom.forgebridge.httpApi'));
  if (value !== 'true' && value !== 'false') {
    throw settingError('environment variable "FORGEBRIDGE_HTTP_API" must be "true" or "false"');
  }
  const region = String(await resolveVariable('self:provider.region'));
  return { httpApi: value === 'true', url: !REGIONS_WITHOUT_FUNCTION_URLS.includes(region), region };
}

/** A 5-minute sum of one metric of the ingest's doors, as a metric query of the alarm. */
function sum(id, namespace, metricName, dimension) {
  return {
    Id: id,
    ReturnData: false,
    MetricStat: {
      Metric: { Namespace: namespace, MetricName: metricName, Dimensions: [dimension] },
      Period: 300,
      Stat: 'Sum',
    },
  };
}

module.exports = {
  REGIONS_WITHOUT_FUNCTION_URLS,

  /** The ingest's `url`: on where the region offers Function URLs; elsewhere off, and only with the HTTP API. */
  async url(context) {
    const { httpApi, url, region } = await doors(context);
    if (!url && !httpApi) {
      throw settingError(
        `lambda offers no function urls in region "${region}": set FORGEBRIDGE_HTTP_API=true (config/<stage>.yml or the environment) so the ingest gets an http api instead`,
      );
    }
    return url;
  },

  /** The ingest's HTTP API routes, with the HTTP API on. */
  async events(context) {
    const { httpApi } = await doors(context);
    return httpApi ? ROUTES.map((path) => ({ httpApi: { method: 'POST', path } })) : [];
  },

  /** The metric queries of the ingest's 5xx alarm: each door's 5xx and the function's errors, added up. */
  async ingest5xxMetrics(context) {
    const { httpApi, url } = await doors(context);
    const ingest = { Name: 'FunctionName', Value: { Ref: 'IngestLambdaFunction' } };
    const queries = [
      ...(httpApi ? [sum('api', 'AWS/ApiGateway', '5xx', { Name: 'ApiId', Value: { Ref: 'HttpApi' } })] : []),
      ...(url ? [sum('url', 'AWS/Lambda', 'Url5xxCount', ingest)] : []),
      sum('errors', 'AWS/Lambda', 'Errors', ingest),
    ];
    return [
      ...queries,
      {
        Id: 'failed',
        Label: 'ingest 5xx answers and errors',
        Expression: queries.map(({ Id }) => `FILL(${Id}, 0)`).join(' + '),
        ReturnData: true,
      },
    ];
  },
};
