// What infra/alarms.yml cannot write by hand: the alarms that depend on the configuration (one "no delivery" alarm
// per webhook source when FORGEBRIDGE_ALARM_QUIET_HOURS is set, one error alarm per subscriber function and per
// scheduled function) and the CloudWatch dashboard. The settings come checked from infra/config.cjs.
// The metric names, units and dimensions are the contract in docs/operations.md ("Metrics").
const { load } = require('./config.cjs');

const METRICS = {
  deliveries: 'Deliveries',
  ingestDuration: 'IngestDuration',
  bodyBytes: 'BodyBytes',
  queueDepth: 'QueueDepth',
  queueOldestAge: 'QueueOldestAgeSeconds',
  queueStatsFailed: 'QueueStatsFailed',
  redrivePublished: 'RedrivePublished',
  deadLettered: 'DeadLettered',
  failedAtForge: 'ReconcileFailedAtForge',
  redelivered: 'ReconcileRedelivered',
  recovered: 'ReconcileRecovered',
  subscriberOutcome: 'SubscriberOutcome',
  subscriberDuration: 'SubscriberDuration',
};
// The outcomes of a verified delivery: the forge sent it and it was signed with the source's secret.
const ARRIVED = ['published', 'queued', 'duplicate', 'in_progress', 'failed'];

/** `gitlab-acme` -> `GitlabAcme`: a source name as part of a logical id. */
function pascal(name) {
  return name
    .split('-')
    .map((part) => `${part[0].toUpperCase()}${part.slice(1)}`)
    .join('');
}

/** The logical id prefix osls gives a function (`onIssuesOpened` -> `OnIssuesOpened`). */
function functionLogicalId(name) {
  return `${name[0].toUpperCase()}${name.slice(1)}`.replaceAll('-', 'Dash').replaceAll('_', 'Underscore');
}

/** Every function an EventBridge rule invokes: the subscribers. */
function subscriberNames(functions) {
  return Object.entries(functions ?? {})
    .filter(([, fn]) => (fn?.events ?? []).some((event) => event?.eventBridge !== undefined))
    .map(([name]) => name)
    .sort();
}

/** Every function a schedule runs: the retrier, the reconciler, the token refresh. */
function scheduledNames(functions) {
  return Object.entries(functions ?? {})
    .filter(([, fn]) => (fn?.events ?? []).some((event) => event?.schedule !== undefined))
    .map(([name]) => name)
    .sort();
}

function quietAlarm(context, source) {
  const { settings, namespace, service, prefix } = context;
  const metrics = ARRIVED.map((outcome, index) => ({
    Id: `m${index}`,
    ReturnData: false,
    MetricStat: {
      Metric: {
        Namespace: namespace,
        MetricName: METRICS.deliveries,
        Dimensions: [
          { Name: 'service', Value: service },
          { Name: 'Source', Value: source },
          { Name: 'Verdict', Value: 'verified' },
          { Name: 'Outcome', Value: outcome },
        ],
      },
      Period: 3600,
      Stat: 'Sum',
    },
  }));
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: `${prefix}-quiet-source-${source}`,
      AlarmDescription: `No verified delivery from the webhook source "${source}" for ${settings.quietHours} hour(s) (docs/operations.md, "Quiet source")`,
      AlarmActions: [{ Ref: 'AlarmTopic' }],
      OKActions: [{ Ref: 'AlarmTopic' }],
      Metrics: [
        ...metrics,
        {
          Id: 'arrived',
          Label: `verified deliveries from ${source}`,
          Expression: metrics.map((metric) => `FILL(${metric.Id}, 0)`).join(' + '),
          ReturnData: true,
        },
      ],
      EvaluationPeriods: settings.quietHours,
      DatapointsToAlarm: settings.quietHours,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      // No data at all is the quiet this alarm is for.
      TreatMissingData: 'breaching',
    },
  };
}

/** A function's `Errors` above a threshold: a subscriber's over 5 minutes, a scheduled function's over 15. */
function errorsAlarm(context, name, { scheduled }) {
  const { settings, prefix } = context;
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: scheduled ? `${prefix}-errors-${name}` : `${prefix}-subscriber-errors-${name}`,
      AlarmDescription: scheduled
        ? `The scheduled function ${name} failed (a crash, a timeout or a run that threw) in 15 minutes (docs/operations.md, "Scheduled function errors")`
        : `The subscriber ${name} failed more than ${settings.subscriberErrors} time(s) in 5 minutes (docs/operations.md, "Subscriber errors")`,
      AlarmActions: [{ Ref: 'AlarmTopic' }],
      OKActions: [{ Ref: 'AlarmTopic' }],
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${functionLogicalId(name)}LambdaFunction` } }],
      Statistic: 'Sum',
      Period: scheduled ? 900 : 300,
      EvaluationPeriods: 1,
      Threshold: scheduled ? 0 : settings.subscriberErrors,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    },
  };
}

/** A Metrics Insights query over one metric of our namespace with its exact dimension set. */
function insights(context, metric, dimensions, rest = '') {
  const schema = [`"${context.namespace}"`, ...dimensions, 'service'].join(', ');
  return `SELECT SUM(${metric}) FROM SCHEMA(${schema})${rest}`;
}

function graph(
  title,
  metrics,
  { stat = 'Sum', period = 300, stacked = false, y = 0, x = 0, width = 12 } = {},
) {
  return {
    type: 'metric',
    x,
    y,
    width,
    height: 6,
    properties: { title, region: `\${AWS::Region}`, view: 'timeSeries', stacked, stat, period, metrics },
  };
}

function dashboardBody(context, alarmIds) {
  const { namespace, service } = context;
  const own = (metric, stat, options = {}) => [
    namespace,
    metric,
    'service',
    service,
    { stat, label: `${metric} ${stat}`, ...options },
  ];
  // No label: each series of a GROUP BY query is named after its group (`published`, `bad_signature github`).
  const query = (expression, id) => [{ expression, id }];
  const search = (dimensions, metric, stat, period) =>
    `SEARCH('{${namespace},${[...dimensions, 'service'].join(',')}} MetricName="${metric}"', '${stat}', ${period})`;
  const widgets = [
    {
      type: 'alarm',
      x: 0,
      y: 0,
      width: 24,
      height: 3,
      properties: {
        title: 'Alarms',
        alarms: alarmIds.map((id) => `\${${id}.Arn}`),
      },
    },
    graph(
      'Deliveries by outcome',
      [
        query(
          insights(context, METRICS.deliveries, ['Outcome', 'Source', 'Verdict'], ' GROUP BY Outcome'),
          'byOutcome',
        ),
      ],
      { stacked: true, y: 3, x: 0 },
    ),
    graph(
      'Refused deliveries by verdict and source',
      [
        query(
          insights(
            context,
            METRICS.deliveries,
            ['Outcome', 'Source', 'Verdict'],
            " WHERE Verdict != 'verified' GROUP BY Verdict, Source",
          ),
          'byVerdict',
        ),
      ],
      { stacked: true, y: 3, x: 12 },
    ),
    graph(
      'Ingest duration (ms) and body size (bytes)',
      [
        own(METRICS.ingestDuration, 'p50'),
        own(METRICS.ingestDuration, 'p99'),
        own(METRICS.bodyBytes, 'p99', { yAxis: 'right' }),
      ],
      { y: 9, x: 0 },
    ),
    graph(
      'Queue: depth, oldest age (s), published, dead-lettered, stats not read',
      [
        own(METRICS.queueDepth, 'Maximum'),
        own(METRICS.queueOldestAge, 'Maximum', { yAxis: 'right' }),
        own(METRICS.redrivePublished, 'Sum'),
        own(METRICS.deadLettered, 'Sum'),
        own(METRICS.queueStatsFailed, 'Sum'),
      ],
      { y: 9, x: 12 },
    ),
    graph(
      'Subscriber outcomes',
      [
        query(
          insights(
            context,
            METRICS.subscriberOutcome,
            ['Function', 'Outcome'],
            ' GROUP BY Function, Outcome',
          ),
          'bySubscriber',
        ),
      ],
      { stacked: true, y: 15, x: 0 },
    ),
    graph(
      'Subscriber duration p99 (ms)',
      [
        [
          {
            expression: search(['Function', 'Outcome'], METRICS.subscriberDuration, 'p99', 300),
            id: 'duration',
          },
        ],
      ],
      { y: 15, x: 12 },
    ),
    graph(
      'Reconciler: failed at the forge, redelivered, recovered',
      [METRICS.failedAtForge, METRICS.redelivered, METRICS.recovered].map((metric, index) => [
        { expression: search(['Source'], metric, 'Sum', 900), id: `r${index}` },
      ]),
      { y: 21, x: 0, width: 24, period: 900 },
    ),
  ];
  return { widgets };
}

module.exports = async ({ resolveVariable, resolveConfigurationProperty }) => {
  const config = await load(await resolveVariable('sls:stage'));
  const settings = config.alarms;
  const context = {
    settings,
    namespace: await resolveVariable('self:custom.forgebridge.metricNamespace'),
    service: await resolveVariable('self:provider.environment.POWERTOOLS_SERVICE_NAME'),
    prefix: `${await resolveVariable('self:service')}-${await resolveVariable('sls:stage')}`,
  };
  const Resources = {};
  if (settings.quietHours > 0) {
    for (const { name } of config.sources) {
      Resources[`QuietSource${pascal(name)}Alarm`] = quietAlarm(context, name);
    }
  }
  const functions = await resolveConfigurationProperty(['functions']);
  for (const name of subscriberNames(functions)) {
    Resources[`${functionLogicalId(name)}ErrorsAlarm`] = errorsAlarm(context, name, { scheduled: false });
  }
  for (const name of scheduledNames(functions)) {
    Resources[`${functionLogicalId(name)}ErrorsAlarm`] = errorsAlarm(context, name, { scheduled: true });
  }
  const alarmIds = [
    'SignatureFailuresAlarm',
    'Ingest5xxAlarm',
    'QueueOldestAgeAlarm',
    'DeadLetteredDeliveriesAlarm',
    'BusFailedInvocationsAlarm',
    'SubscriberDeadLetterQueueAlarm',
    'QueueStatsFailedAlarm',
    'ReconcileGaveUpDeliveriesAlarm',
    'FailedAtForgeAlarm',
    ...Object.keys(Resources),
  ];
  Resources.OperationsDashboard = {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      // Dashboard names are global to an account: the region keeps one stage's in two regions apart.
      DashboardName: { 'Fn::Sub': `${context.prefix}-\${AWS::Region}` },
      DashboardBody: { 'Fn::Sub': JSON.stringify(dashboardBody(context, alarmIds)) },
    },
  };
  return {
    resources: {
      Resources,
      Outputs: {
        DashboardUrl: {
          Description: 'The CloudWatch dashboard of this stage',
          Value: {
            'Fn::Sub':
              `https://\${AWS::Region}.console.aws.amazon.com/cloudwatch/home?region=\${AWS::Region}` +
              '#dashboards/dashboard/' +
              `\${OperationsDashboard}`,
          },
        },
      },
    },
  };
};
