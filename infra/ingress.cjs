// The ingest's doors (docs/serverless.md, "Deploy"): its Function URL always, the HTTP API only when
// custom.forgebridge.httpApi is true (FORGEBRIDGE_HTTP_API=true; the local stack turns it on, serverless-offline
// serves the HTTP API routes). Off, the template holds no HTTP API at all, and the ingest's 5xx alarm adds up the
// Function URL's 5xx and the function's errors only: a reference to the API that is not there would not deploy.
const ROUTES = ['/webhooks', '/webhooks/{source}'];

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

module.exports = async ({ resolveVariable }) => {
  const value = String(await resolveVariable('self:custom.forgebridge.httpApi'));
  if (value !== 'true' && value !== 'false') {
    throw new TypeError('environment variable "FORGEBRIDGE_HTTP_API" must be "true" or "false"');
  }
  const httpApi = value === 'true';
  const ingest = { Name: 'FunctionName', Value: { Ref: 'IngestLambdaFunction' } };
  const queries = [
    ...(httpApi ? [sum('api', 'AWS/ApiGateway', '5xx', { Name: 'ApiId', Value: { Ref: 'HttpApi' } })] : []),
    sum('url', 'AWS/Lambda', 'Url5xxCount', ingest),
    sum('errors', 'AWS/Lambda', 'Errors', ingest),
  ];
  return {
    events: httpApi ? ROUTES.map((path) => ({ httpApi: { method: 'POST', path } })) : [],
    ingest5xxMetrics: [
      ...queries,
      {
        Id: 'failed',
        Label: 'ingest 5xx answers and errors',
        Expression: queries.map(({ Id }) => `FILL(${Id}, 0)`).join(' + '),
        ReturnData: true,
      },
    ],
  };
};
