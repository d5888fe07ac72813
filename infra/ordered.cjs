// The ordered stream and its subscribers for serverless.yml (docs/ordering.md), from the stage's
// FORGEBRIDGE_ORDERED_SUBSCRIBERS as lib/aws/stage/ordered-subscribers.ts checked it (infra/config.cjs `load`):
// - `functions.<key>`: each ordered subscriber's function, its Kinesis event-source mapping included; serverless.yml
//   names each under its key (`onPullRequestOrdered: ${file(infra/ordered.cjs):functions.onPullRequestOrdered, null}`),
//   and a key the setting does not list resolves to null, which osls drops;
// - `resources`: the stream, the failure queue, its alarm and the write grant of the functions that publish; empty
//   when no ordered subscriber is configured, so a stage without one has no stream and pays for none;
// - `streamName`, `orderBy`: what the ingest and the retrier write to ('' when there is no stream).
'use strict';

const { load } = require('./config.cjs');

/** `osls offline` (the local stack): the names are the configured ones, not the stack's. */
const offline = process.argv.slice(2).includes('offline');

/** The functions that write to the stream (their roles get kinesis:PutRecord on it, and nothing else of it). */
const WRITERS = ['Ingest', 'Redrive'];

/** The mapping's filter: the rule's pattern, matched against the record's data (the EventBridge event's JSON). */
function filterPatterns(pattern) {
  return Object.keys(pattern).length === 0 ? undefined : [{ data: pattern }];
}

function streamArn() {
  return { 'Fn::GetAtt': ['OrderedStream', 'Arn'] };
}

function functionOf(subscriber, settings) {
  const timeout = Number(settings.FORGEBRIDGE_SUBSCRIBER_TIMEOUT);
  const filters = filterPatterns(subscriber.pattern);
  return {
    handler: subscriber.handler,
    description: `Ordered subscriber (${typeof subscriber.orderBy === 'object' ? subscriber.orderBy.path : subscriber.orderBy} order) on the ordered stream`,
    timeout,
    events: [
      {
        stream: {
          type: 'kinesis',
          arn: streamArn(),
          startingPosition: 'TRIM_HORIZON',
          batchSize: subscriber.batchSize,
          // Records of one partition key stay in one of the shard's concurrent batches, in order.
          parallelizationFactor: subscriber.parallelizationFactor,
          bisectBatchOnFunctionError: true,
          maximumRetryAttempts: subscriber.maximumRetryAttempts,
          ...(subscriber.maximumRecordAgeInSeconds === -1
            ? {}
            : { maximumRecordAgeInSeconds: subscriber.maximumRecordAgeInSeconds }),
          // The handler answers the first record it did not handle: Lambda retries from it, never past it.
          functionResponseType: 'ReportBatchItemFailures',
          ...(filters === undefined ? {} : { filterPatterns: filters }),
          destinations: {
            onFailure: { arn: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] }, type: 'sqs' },
          },
        },
      },
    ],
    environment: {
      AWS_SDK_UA_APP_ID: `forgebridge-${subscriber.function}`,
      FORGEBRIDGE_DELIVERIES_TABLE: offline
        ? settings.FORGEBRIDGE_DELIVERIES_TABLE
        : { Ref: 'DeliveriesTable' },
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: settings.FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS,
    },
    iamRoleStatements: [
      // The plugin grants the mapping GetRecords, GetShardIterator, DescribeStream and ListStreams on the stream;
      // Lambda's poller also lists the shards and reads the stream's summary.
      {
        Effect: 'Allow',
        Action: ['kinesis:DescribeStreamSummary', 'kinesis:ListShards'],
        Resource: streamArn(),
      },
      // The mapping's on-failure destination: a record's batch details, once its retries are used up.
      {
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Resource: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ClaimCheckBucket', 'Arn'] }, '/deliveries/*']] },
      },
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: { 'Fn::GetAtt': ['DeliveriesTable', 'Arn'] },
      },
    ],
  };
}

function resourcesOf(ordered, config) {
  const { settings, stage } = config;
  const name = settings.FORGEBRIDGE_STREAM_NAME;
  return {
    Resources: {
      OrderedStream: {
        Type: 'AWS::Kinesis::Stream',
        Properties: {
          // Unnamed: CloudFormation names it after the stack, unique in its account and region.
          ...(name === '' ? {} : { Name: name }),
          StreamModeDetails: { StreamMode: 'PROVISIONED' },
          ShardCount: ordered.shards,
          RetentionPeriodHours: ordered.retentionHours,
          StreamEncryption: { EncryptionType: 'KMS', KeyId: 'alias/aws/kinesis' },
        },
      },
      OrderedFailureQueue: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          QueueName: `forgebridge-${stage}-ordered-failures`,
          MessageRetentionPeriod: 1209600,
          SqsManagedSseEnabled: true,
        },
      },
      OrderedFailureQueuePolicy: {
        Type: 'AWS::SQS::QueuePolicy',
        Properties: {
          Queues: [{ Ref: 'OrderedFailureQueue' }],
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'DenyInsecureTransport',
                Effect: 'Deny',
                Principal: '*',
                Action: 'sqs:*',
                Resource: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] },
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              },
            ],
          },
        },
      },
      OrderedStreamWritePolicy: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          PolicyName: `forgebridge-${stage}-ordered-stream-write`,
          Roles: WRITERS.map((writer) => ({ Ref: `${writer}IamRoleLambdaExecution` })),
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [{ Effect: 'Allow', Action: 'kinesis:PutRecord', Resource: streamArn() }],
          },
        },
      },
      // What an operator needs besides ReplayOperatorPolicy for `forgebridge dlq --queue ordered`: the failure
      // queue's messages, and the records they point to read back from the stream. Attached to nothing.
      OrderedReplayOperatorPolicy: {
        Type: 'AWS::IAM::ManagedPolicy',
        Properties: {
          Description: 'forgebridge dlq list/replay --queue ordered, on this stage only',
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'TheOrderedFailureQueue',
                Effect: 'Allow',
                Action: ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'],
                Resource: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] },
              },
              {
                Sid: 'ReadTheFailedRecordsBack',
                Effect: 'Allow',
                Action: ['kinesis:GetShardIterator', 'kinesis:GetRecords'],
                Resource: streamArn(),
              },
            ],
          },
        },
      },
      // A record of the stream that an ordered subscriber gave up on (its retries used up) waits in the failure queue.
      OrderedFailureAlarm: {
        Type: 'AWS::CloudWatch::Alarm',
        Properties: {
          AlarmName: `forgebridge-${stage}-ordered-failures`,
          AlarmDescription:
            'An ordered subscriber gave up on a record of the ordered stream (docs/ordering.md, "A failing delivery")',
          AlarmActions: [{ Ref: 'AlarmTopic' }],
          OKActions: [{ Ref: 'AlarmTopic' }],
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['OrderedFailureQueue', 'QueueName'] } }],
          Statistic: 'Maximum',
          Period: 60,
          EvaluationPeriods: 1,
          Threshold: config.alarms.orderedFailures,
          ComparisonOperator: 'GreaterThanThreshold',
          TreatMissingData: 'notBreaching',
        },
      },
    },
    Outputs: {
      OrderedStreamName: { Value: { Ref: 'OrderedStream' } },
      OrderedFailureQueueUrl: { Value: { Ref: 'OrderedFailureQueue' } },
      OrderedReplayOperatorPolicyArn: { Value: { Ref: 'OrderedReplayOperatorPolicy' } },
    },
  };
}

module.exports = async ({ resolveVariable }) => {
  const config = await load(await resolveVariable('sls:stage'));
  const { ordered, settings } = config;
  const some = ordered.subscribers.length > 0;
  return {
    functions: Object.fromEntries(
      ordered.subscribers.map((subscriber) => [subscriber.function, functionOf(subscriber, settings)]),
    ),
    resources: some ? resourcesOf(ordered, config) : {},
    streamName: !some ? '' : offline ? settings.FORGEBRIDGE_STREAM_NAME : { Ref: 'OrderedStream' },
    orderBy: typeof ordered.orderBy === 'object' ? ordered.orderBy.path : ordered.orderBy,
  };
};
