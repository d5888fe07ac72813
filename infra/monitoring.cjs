// The alarms on the functions' own metrics, the alarms that depend on the configuration (one "no delivery" alarm per
// webhook source when FORGEBRIDGE_ALARM_QUIET_HOURS is set, one error alarm per subscriber function and per
// scheduled function) and the CloudWatch dashboard; infra/alarms.yml holds the topic and the alarms on AWS's
// metrics. The settings come checked from infra/config.cjs; every custom metric's name, unit and dimensions from
// lib/aws's core (MetricDefinitions), the one home of what the functions print (docs/operations.md, "Metrics").
'use strict';

const { core, load } = require('./config.cjs');

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

/**
 * The metric `key` of MetricDefinitions as a CloudWatch alarm or metric query takes it: its namespace, name and
 * exact dimension set (`service` where Powertools adds it), each dimension's value from `values`. A dimension the
 * metric is not printed under, or one left without a value, stops the package: no alarm can watch a metric that is
 * never printed.
 */
function metric(context, key, values = {}) {
  const definition = context.metrics[key];
  if (definition === undefined) throw new TypeError(`"${key}" is not a metric of MetricDefinitions`);
  const names = Object.keys(values).sort();
  if (names.join() !== [...definition.dimensions].sort().join()) {
    throw new TypeError(
      `metric "${definition.name}" is printed under the dimensions [${definition.dimensions.join(', ')}], not [${names.join(', ')}]`,
    );
  }
  const dimensions = [
    ...(definition.service ? [{ Name: context.dimensions.service, Value: context.service }] : []),
    ...definition.dimensions.map((name) => ({ Name: name, Value: values[name] })),
  ];
  return {
    Namespace: context.namespace,
    MetricName: definition.name,
    ...(dimensions.length === 0 ? {} : { Dimensions: dimensions }),
  };
}

/** A Metrics Insights query over one metric of MetricDefinitions, with its exact dimension set. */
function insights(context, key, rest = '') {
  const definition = context.metrics[key];
  const keys = [...definition.dimensions].sort();
  if (definition.service) keys.push(context.dimensions.service);
  const schema = [`"${context.namespace}"`, ...keys].join(', ');
  return `SELECT SUM(${definition.name}) FROM SCHEMA(${schema})${rest}`;
}

/** An alarm of this stage: its name, what it means, where it notifies; `properties` say what it watches. */
function alarm(context, name, description, properties) {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: `${context.prefix}-${name}`,
      AlarmDescription: description,
      AlarmActions: [{ Ref: 'AlarmTopic' }],
      OKActions: [{ Ref: 'AlarmTopic' }],
      ...properties,
    },
  };
}

/** Above `threshold` in one period of `period` seconds; no data is no trouble. */
const above = (threshold, period) => ({
  Period: period,
  EvaluationPeriods: 1,
  Threshold: threshold,
  ComparisonOperator: 'GreaterThanThreshold',
  TreatMissingData: 'notBreaching',
});

/** One Metrics Insights query as an alarm's only metric. */
function insightsAlarm(context, name, description, { id, label, key, where, threshold, period }) {
  const { Period, ...rest } = above(threshold, period);
  return alarm(context, name, description, {
    Metrics: [{ Id: id, Label: label, Expression: insights(context, key, where), Period, ReturnData: true }],
    ...rest,
  });
}

/** The alarms on the functions' own metrics (docs/operations.md, "Alarms"), under their logical ids. */
function metricAlarms(context) {
  const { settings } = context;
  return {
    // A rotated or wrong secret: deliveries whose signature does not match, from every source together.
    SignatureFailuresAlarm: insightsAlarm(
      context,
      'signature-failures',
      `More than ${settings.signatureFailures} deliveries failed their signature check in 5 minutes (docs/operations.md, "Signature failures")`,
      {
        id: 'badSignatures',
        label: 'deliveries with a bad signature',
        key: 'deliveries',
        where: ` WHERE ${context.dimensions.verdict} = 'bad_signature'`,
        threshold: settings.signatureFailures,
        period: 300,
      },
    ),
    // The retrier reports the oldest queued delivery's age on every run (every minute).
    QueueOldestAgeAlarm: alarm(
      context,
      'queue-oldest-age',
      `A queued delivery has waited more than ${settings.queueAgeSeconds} seconds for the bus (docs/operations.md, "Queue age")`,
      {
        ...metric(context, 'queueOldestAgeSeconds'),
        Statistic: 'Maximum',
        ...above(settings.queueAgeSeconds, 300),
      },
    ),
    // A queued delivery the retrier gave up on (older than FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS), counted on its
    // dead-letter log line; its record stays in the dedupe table (`dead: true`) for a manual replay. One is enough.
    DeadLetteredDeliveriesAlarm: alarm(
      context,
      'dead-lettered-deliveries',
      'A queued forge delivery could not be published within the maximum age and was dead-lettered (docs/operations.md, "Dead letters")',
      { ...metric(context, 'deadLetteredDeliveries'), Statistic: 'Sum', ...above(0, 300) },
    ),
    // The retrier could not read the queue's depth and oldest age (`queue.stats()` denied, throttled or failing):
    // the queue-age alarm then has no data and stays OK whatever waits, so a blind queue is an alarm of its own.
    QueueStatsFailedAlarm: alarm(
      context,
      'queue-stats-failed',
      `The retrier could not read the queue's depth and age in 15 minutes, so the queue-age alarm is blind (docs/operations.md, "Queue stats failed")`,
      { ...metric(context, 'queueStatsFailed'), Statistic: 'Sum', ...above(0, 900) },
    ),
    // A delivery the reconciler gave up on: still failed at the forge and never ours, past the forge's window,
    // counted on its log line; redeliver it by hand while the forge keeps it.
    ReconcileGaveUpDeliveriesAlarm: alarm(
      context,
      'reconcile-gave-up-deliveries',
      `A forge delivery that never reached the ingest could not be recovered within the forge's window (docs/operations.md, "Reconciler gave up")`,
      { ...metric(context, 'reconcileGaveUpDeliveries'), Statistic: 'Sum', ...above(0, 600) },
    ),
    // The forge answered a call with a rate limit (403/429): the governor exists to keep this at 0, so one is enough.
    ForgeApiLimitAnswersAlarm: alarm(
      context,
      'forge-api-limit-answers',
      'The forge answered a forge API call with a rate limit (docs/operations.md, "Forge API limit answers")',
      { ...metric(context, 'forgeApiLimitAnswers'), Statistic: 'Sum', ...above(0, 300) },
    ),
    // The reconciler found deliveries that the forge counts as failed and that our side never took.
    FailedAtForgeAlarm: insightsAlarm(
      context,
      'failed-at-forge',
      `More than ${settings.failedAtForge} deliveries failed at the forge in 15 minutes (docs/operations.md, "Failed at the forge")`,
      {
        id: 'failedAtForge',
        label: 'deliveries failed at the forge',
        key: 'reconcileFailedAtForge',
        threshold: settings.failedAtForge,
        period: 900,
      },
    ),
  };
}

function quietAlarm(context, source) {
  const { settings, dimensions } = context;
  const metrics = context.verifiedOutcomes.map((outcome, index) => ({
    Id: `m${index}`,
    ReturnData: false,
    MetricStat: {
      Metric: metric(context, 'deliveries', {
        [dimensions.source]: source,
        [dimensions.verdict]: 'verified',
        [dimensions.outcome]: outcome,
      }),
      Period: 3600,
      Stat: 'Sum',
    },
  }));
  return alarm(
    context,
    `quiet-source-${source}`,
    `No verified delivery from the webhook source "${source}" for ${settings.quietHours} hour(s) (docs/operations.md, "Quiet source")`,
    {
      Metrics: [
        ...metrics,
        {
          Id: 'arrived',
          Label: `verified deliveries from ${source}`,
          Expression: metrics.map((query) => `FILL(${query.Id}, 0)`).join(' + '),
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
  );
}

/** A function's `Errors` above a threshold: a subscriber's over 5 minutes, a scheduled function's over 15. */
function errorsAlarm(context, name, { scheduled }) {
  const { settings } = context;
  return alarm(
    context,
    scheduled ? `errors-${name}` : `subscriber-errors-${name}`,
    scheduled
      ? `The scheduled function ${name} failed (a crash, a timeout or a run that threw) in 15 minutes (docs/operations.md, "Scheduled function errors")`
      : `The subscriber ${name} failed more than ${settings.subscriberErrors} time(s) in 5 minutes (docs/operations.md, "Subscriber errors")`,
    {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${functionLogicalId(name)}LambdaFunction` } }],
      Statistic: 'Sum',
      ...above(scheduled ? 0 : settings.subscriberErrors, scheduled ? 900 : 300),
    },
  );
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
  const { metrics } = context;
  const { source, verdict, outcome, function: fn } = context.dimensions;
  // A metric printed without dimensions of its own, as a graph row: its namespace, name and dimension pairs.
  const own = (key, stat, options = {}) => {
    const { Namespace, MetricName, Dimensions = [] } = metric(context, key);
    return [
      Namespace,
      MetricName,
      ...Dimensions.flatMap(({ Name, Value }) => [Name, Value]),
      { stat, label: `${MetricName} ${stat}`, ...options },
    ];
  };
  // No label: each series of a GROUP BY query is named after its group (`published`, `bad_signature github`).
  const query = (expression, id) => [{ expression, id }];
  const search = (key, stat, period) => {
    const definition = metrics[key];
    const keys = [context.namespace, ...definition.dimensions];
    if (definition.service) keys.push(context.dimensions.service);
    return `SEARCH('{${keys.join(',')}} MetricName="${definition.name}"', '${stat}', ${period})`;
  };
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
      [query(insights(context, 'deliveries', ` GROUP BY ${outcome}`), 'byOutcome')],
      { stacked: true, y: 3, x: 0 },
    ),
    graph(
      'Refused deliveries by verdict and source',
      [
        query(
          insights(context, 'deliveries', ` WHERE ${verdict} != 'verified' GROUP BY ${verdict}, ${source}`),
          'byVerdict',
        ),
      ],
      { stacked: true, y: 3, x: 12 },
    ),
    graph(
      'Ingest duration (ms) and body size (bytes)',
      [
        own('ingestDuration', 'p50'),
        own('ingestDuration', 'p99'),
        own('bodyBytes', 'p99', { yAxis: 'right' }),
      ],
      { y: 9, x: 0 },
    ),
    graph(
      'Queue: depth, oldest age (s), published, dead-lettered, stats not read',
      [
        own('queueDepth', 'Maximum'),
        own('queueOldestAgeSeconds', 'Maximum', { yAxis: 'right' }),
        own('redrivePublished', 'Sum'),
        own('deadLetteredDeliveries', 'Sum'),
        own('queueStatsFailed', 'Sum'),
      ],
      { y: 9, x: 12 },
    ),
    graph(
      'Subscriber outcomes',
      [query(insights(context, 'subscriberOutcome', ` GROUP BY ${fn}, ${outcome}`), 'bySubscriber')],
      { stacked: true, y: 15, x: 0 },
    ),
    graph(
      'Subscriber duration p99 (ms)',
      [
        [
          {
            expression: search('subscriberDuration', 'p99', 300),
            id: 'duration',
          },
        ],
      ],
      { y: 15, x: 12 },
    ),
    graph(
      'Reconciler: failed at the forge, redelivered, recovered',
      ['reconcileFailedAtForge', 'reconcileRedelivered', 'reconcileRecovered'].map((key, index) => [
        { expression: search(key, 'Sum', 900), id: `r${index}` },
      ]),
      { y: 21, x: 0, width: 24, period: 900 },
    ),
  ];
  return { widgets };
}

module.exports = async ({ resolveVariable, resolveConfigurationProperty }) => {
  const config = await load(await resolveVariable('sls:stage'));
  const settings = config.alarms;
  const { MetricDefinitions, MetricDimensions, VERIFIED_DELIVERY_OUTCOMES } = await core();
  const context = {
    settings,
    metrics: MetricDefinitions,
    dimensions: MetricDimensions,
    verifiedOutcomes: VERIFIED_DELIVERY_OUTCOMES,
    namespace: await resolveVariable('self:custom.forgebridge.metricNamespace'),
    service: await resolveVariable('self:provider.environment.POWERTOOLS_SERVICE_NAME'),
    prefix: `${await resolveVariable('self:service')}-${await resolveVariable('sls:stage')}`,
  };
  const Resources = metricAlarms(context);
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
  // With infra/alarms.yml's, on AWS's metrics (the package test holds the widget to every alarm of the template).
  const alarmIds = [
    'Ingest5xxAlarm',
    'BusFailedInvocationsAlarm',
    'SubscriberDeadLetterQueueAlarm',
    // infra/ordered.cjs's, with an ordered subscriber.
    ...(config.ordered.subscribers.length > 0 ? ['OrderedFailureAlarm'] : []),
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
