// `replay --since … --subscriber X --stage ci` on AWS, with mocked SDK clients answering as a deployed `ci` stage
// would: every name and ARN comes from the packaged template (`osls package --stage ci`), never typed here. The
// archive path: DescribeArchive of the template's archive, ListRuleNamesByTarget with the ARN of the function the
// template names, StartReplay from that archive into that bus filtered to that rule. The direct path: what the
// archive no longer holds is invoked on that function. A stage whose stack has no archive output is refused, exit 2.
import { randomUUID } from 'node:crypto';
import {
  DescribeArchiveCommand,
  DescribeReplayCommand,
  EventBridgeClient,
  ListRuleNamesByTargetCommand,
  PutEventsCommand,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import { GetRecordsCommand, GetShardIteratorCommand, KinesisClient } from '@aws-sdk/client-kinesis';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../lib/aws/internal.js';
import { archiveReplay, busArnOf, replayName } from '../../../lib/cli/aws-replay.js';
import { replayToFunction, type SelectedDelivery } from '../../../lib/cli/bulk-replay.js';
import { replayToBus } from '../../../lib/cli/bus-replay.js';
import { runBulkReplay, subscriberNames } from '../../../lib/cli/commands/replay-bulk.js';
import { busOf } from '../../../lib/cli/commands/replay-bus.js';
import { planOnStage } from '../../../lib/cli/commands/replay-stage.js';
import type { LogTarget } from '../../../lib/cli/delivery-log.js';
import { letGo } from '../../../lib/cli/dlq.js';
import { CliError } from '../../../lib/cli/errors.js';
import { readOrderedFailures } from '../../../lib/cli/ordered-failures.js';
import { resolveIntrinsics } from '../../helpers/cfn-intrinsics.js';
import { packagedTemplate } from '../../helpers/packaged-template.js';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const DAY = 86_400_000;

let resources: Record<string, Resource>;
let busName: string;
let archiveName: string;
let retentionDays: number;
let functionName: string;
let ruleName: string;

beforeAll(async () => {
  const { template } = await packagedTemplate('ci');
  resources = template.Resources as unknown as Record<string, Resource>;
  busName = resources.Bus?.Properties.Name as string;
  archiveName = resources.BusArchive?.Properties.ArchiveName as string;
  retentionDays = Number(resources.BusArchive?.Properties.RetentionDays);
  functionName = resources.OnEverythingLambdaFunction?.Properties.FunctionName as string;
  const rule = Object.values(resources).find(
    (resource) =>
      resource.Type === 'AWS::Events::Rule' &&
      JSON.stringify(resource.Properties.Targets).includes('"OnEverythingLambdaFunction"'),
  );
  ruleName = rule?.Properties.Name as string;
  // Each a name of the template's own: a test against undefined would prove nothing.
  for (const name of [busName, archiveName, functionName, ruleName])
    expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
  expect(retentionDays).toBeGreaterThan(0);
  console.info(`ci stage: bus ${busName}, archive ${archiveName}, ${functionName}'s rule ${ruleName}`);
  expect(template.Outputs).toHaveProperty('BusArchiveArn', {
    Value: { 'Fn::GetAtt': ['BusArchive', 'Arn'] },
  });
}, 200_000);

// The classes' prototypes are stubbed while this file runs, and restored after it: the integration files share one
// module context (isolate: false), and the next file of this worker talks to real servers.
const eventBridge = mockClient(EventBridgeClient);
const lambda = mockClient(LambdaClient);
afterAll(() => {
  eventBridge.restore();
  lambda.restore();
});
/** Every call the tests made, as IAM sees it: the action and each resource it names. */
const calls: { action: string; resources: string[] }[] = [];
afterEach(() => {
  const arn = (kind: string, name: string) => `arn:aws:events:${REGION}:${ACCOUNT}:${kind}/${name}`;
  for (const call of eventBridge.calls()) {
    const command = call.args[0] as unknown as {
      constructor: { name: string };
      input: Record<string, unknown>;
    };
    const input = command.input;
    const name = command.constructor.name.replace(/Command$/, '');
    const resources =
      name === 'DescribeArchive'
        ? [arn('archive', input.ArchiveName as string)]
        : name === 'StartReplay'
          ? [
              input.EventSourceArn as string,
              (input.Destination as { Arn: string }).Arn,
              arn('replay', input.ReplayName as string),
            ]
          : name === 'DescribeReplay'
            ? [arn('replay', input.ReplayName as string)]
            : name === 'PutEvents'
              ? [
                  ...new Set(
                    (input.Entries as { EventBusName: string }[]).map((entry) =>
                      arn('event-bus', entry.EventBusName),
                    ),
                  ),
                ]
              : ['*'];
    calls.push({ action: `events:${name}`, resources });
  }
  for (const call of lambda.commandCalls(InvokeCommand)) {
    const fn = call.args[0].input.FunctionName as string;
    calls.push({
      action: 'lambda:InvokeFunction',
      resources: [`arn:aws:lambda:${REGION}:${ACCOUNT}:function:${fn}`],
    });
  }
  eventBridge.reset();
  lambda.reset();
});

const archiveArn = () => `arn:aws:events:${REGION}:${ACCOUNT}:archive/${archiveName}`;

function delivery(receivedAt: number): SelectedDelivery {
  return {
    deliveryId: randomUUID(),
    event: 'push',
    receivedAt,
    outcome: 'error',
    error: 'Error: bad deploy',
  };
}

/** A log holding what the subscriber reported in the window: `records`, one page. */
function logOf(records: Partial<DeliveryRecord>[]) {
  return { list: async () => ({ records: records as DeliveryRecord[] }) };
}

describe('replay --since --subscriber on a stage, against the packaged template', () => {
  it('replays the archive into the bus, only to the rule whose target is the subscriber', async () => {
    expect(subscriberNames('onEverything', 'ci')).toContain(functionName);
    const now = Date.now();
    const selected = [delivery(now - 3 * 3_600_000), delivery(now - 2 * 3_600_000)];
    eventBridge.on(DescribeArchiveCommand, { ArchiveName: archiveName }).resolves({
      ArchiveName: archiveName,
      State: 'ENABLED',
      RetentionDays: retentionDays,
      CreationTime: new Date(now - 60 * DAY),
    });
    eventBridge
      .on(ListRuleNamesByTargetCommand, {
        TargetArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
        EventBusName: busName,
      })
      .resolves({ RuleNames: [ruleName] });
    const client = new EventBridgeClient({ region: REGION });
    const tookOk = {
      deliveryId: 'ok-1',
      event: 'push',
      outcome: 'published',
      receivedAt: now - 2.5 * 3_600_000,
    };
    const stage = await planOnStage({
      log: logOf([
        { ...tookOk, subscribers: { [functionName]: { outcome: 'ok' } } } as never,
        ...selected.map((d) => ({
          deliveryId: d.deliveryId,
          event: 'push',
          outcome: 'published',
          receivedAt: d.receivedAt,
          subscribers: { [functionName]: { outcome: 'error' } },
        })),
      ] as never),
      selection: { since: now - 4 * 3_600_000, subscriber: functionName, outcome: 'error' },
      selected,
      subscriber: functionName,
      archiveArn: archiveArn(),
      eventBridge: client,
      target: { busName, label: 'stage "ci"' },
      options: { stage: 'ci' },
      now,
    });
    const ruleArn = `arn:aws:events:${REGION}:${ACCOUNT}:rule/${busName}/${ruleName}`;
    expect(stage).toMatchObject({ busName, ruleArns: [ruleArn], alsoTaken: 1 });
    expect(stage.plan.archived).toHaveLength(2);
    expect(stage.plan.direct).toHaveLength(0);

    eventBridge.on(StartReplayCommand).resolves({ ReplayArn: 'arn:replay', State: 'STARTING' });
    eventBridge.on(DescribeReplayCommand).resolves({ State: 'COMPLETED' });
    const result = await archiveReplay({
      eventBridge: client,
      archiveArn: stage.archiveArn,
      busArn: busArnOf(stage.busName, stage.archiveArn),
      ruleArns: stage.ruleArns,
      receivedAt: stage.plan.start as number,
      beforeMs: 0,
      afterMs: (stage.plan.end as number) - (stage.plan.start as number),
      name: replayName('onEverything'),
      wait: true,
      pollMs: 1,
      now: () => now,
    });
    expect(result.state).toBe('COMPLETED');
    const input = eventBridge.commandCalls(StartReplayCommand)[0]?.args[0].input;
    expect(input).toMatchObject({
      EventSourceArn: `arn:aws:events:${REGION}:${ACCOUNT}:archive/${archiveName}`,
      Destination: { Arn: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${busName}`, FilterArns: [ruleArn] },
    });
    // The window: a minute before the oldest selected receipt to a minute after the newest.
    expect(input?.EventStartTime?.getTime()).toBe((selected[0] as SelectedDelivery).receivedAt - 60_000);
    expect(input?.EventEndTime?.getTime()).toBe((selected[1] as SelectedDelivery).receivedAt + 60_000);
  });

  it('sends what the archive no longer holds to the function the template names, directly', async () => {
    const now = Date.now();
    const old = delivery(now - (retentionDays + 1) * DAY);
    const recent = delivery(now - DAY);
    eventBridge.on(DescribeArchiveCommand).resolves({
      State: 'ENABLED',
      RetentionDays: retentionDays,
      CreationTime: new Date(now - 400 * DAY),
    });
    eventBridge.on(ListRuleNamesByTargetCommand).resolves({ RuleNames: [ruleName] });
    const stage = await planOnStage({
      log: logOf([]),
      selection: { since: now - 400 * DAY, subscriber: functionName, outcome: 'error' },
      selected: [old, recent],
      subscriber: functionName,
      archiveArn: archiveArn(),
      eventBridge: new EventBridgeClient({ region: REGION }),
      target: { busName, label: 'stage "ci"' },
      options: { stage: 'ci' },
      now,
    });
    expect(stage.plan.archived.map((d) => d.deliveryId)).toEqual([recent.deliveryId]);
    expect(stage.plan.direct.map((d) => d.deliveryId)).toEqual([old.deliveryId]);

    lambda.on(InvokeCommand).resolves({ StatusCode: 200 });
    const run = await replayToFunction({
      lambda: new LambdaClient({ region: REGION }),
      functionName,
      deliveries: stage.plan.direct,
      ratePerSecond: 100,
      eventOf: async (d) => ({ id: d.deliveryId }),
    });
    expect(run).toMatchObject({ sent: 1, failed: 0 });
    expect(lambda.commandCalls(InvokeCommand)[0]?.args[0].input).toMatchObject({
      FunctionName: functionName,
      InvocationType: 'RequestResponse',
    });
  });

  it('refuses a subscriber no rule targets, and an archive that is not enabled', async () => {
    const now = Date.now();
    eventBridge.on(DescribeArchiveCommand).resolvesOnce({ State: 'DISABLED' });
    const plan = () =>
      planOnStage({
        log: logOf([]),
        selection: { since: now - DAY, subscriber: functionName, outcome: 'error' },
        selected: [delivery(now - 1_000)],
        subscriber: functionName,
        archiveArn: archiveArn(),
        eventBridge: new EventBridgeClient({ region: REGION }),
        target: { busName, label: 'stage "ci"' },
        options: { stage: 'ci' },
        now,
      });
    await expect(plan()).rejects.toThrow(`archive "${archiveName}" is DISABLED`);
    eventBridge.on(DescribeArchiveCommand).resolves({ State: 'ENABLED', CreationTime: new Date(now - DAY) });
    eventBridge.on(ListRuleNamesByTargetCommand).resolves({ RuleNames: [] });
    await expect(plan()).rejects.toThrow(`no rule of bus "${busName}" targets function "${functionName}"`);
  });

  it('refuses a stage whose stack has no archive in one line, exit 2, before reading anything', async () => {
    const target: LogTarget = {
      kind: 'aws',
      tableName: 'forgebridge-ci-deliveries',
      endpoint: undefined,
      region: REGION,
      fromState: false,
      label: 'stage "ci"',
      busName,
      outputs: { BusName: busName },
    };
    const refused = runBulkReplay(
      { since: '2h', subscriber: 'onEverything', outcome: 'error', rate: 10, stage: 'ci', dryRun: true },
      target,
    );
    await expect(refused).rejects.toBeInstanceOf(CliError);
    await expect(refused).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(
        /^stage "ci" has no archive \(its stack has no "BusArchiveArn" output\)/,
      ),
    });
    expect(eventBridge.calls()).toHaveLength(0);
  });
});

describe('replay --since without --subscriber on a stage, against the packaged template', () => {
  it("puts the deliveries on the stack's bus again, marked, each once", async () => {
    // The stage's bus as resolveLogTarget reads it: the stack's BusName output.
    const target: LogTarget = {
      kind: 'aws',
      tableName: 'forgebridge-ci-deliveries',
      endpoint: undefined,
      region: REGION,
      fromState: false,
      label: 'stage "ci"',
      busName,
      outputs: { BusName: busName },
    };
    const bus = busOf({ stage: 'ci' }, target);
    expect(bus.busName).toBe(busName);
    eventBridge.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({
      FailedEntryCount: 0,
      Entries: input.Entries.map(() => ({ EventId: randomUUID() })),
    }));
    const client = bus.client();
    expect(await client.config.region()).toBe(REGION);
    const deliveries = Array.from({ length: 12 }, (_, n) => ({
      deliveryId: `d-${n}`,
      event: 'push',
      receivedAt: n,
      ok: [functionName],
      failed: ['forgebridge-ci-onIssuesOpened'],
    }));
    const run = await replayToBus({
      eventBridge: client,
      busName: bus.busName,
      deliveries,
      run: 'run-ci',
      ratePerSecond: 1_000,
      entryOf: async (delivery) => ({
        Source: 'forge.webhooks',
        DetailType: 'push',
        Detail: JSON.stringify({ delivery: delivery.deliveryId, event: 'push', payload: {} }),
        EventBusName: 'the-ingest-bus',
      }),
    });
    client.destroy();
    expect(run).toMatchObject({ sent: 12, failed: 0 });
    const entries = eventBridge
      .commandCalls(PutEventsCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(entries).toHaveLength(12);
    for (const entry of entries) {
      expect(entry.EventBusName).toBe(busName);
      expect(JSON.parse(entry.Detail as string).replay).toMatchObject({ run: 'run-ci', ok: [functionName] });
    }
  });
});

describe('the operator policy (ReplayOperatorPolicy) allows every call of the recovery commands', () => {
  it('each call the tests above made, and the dead-letter queue and log calls, on the ci stage', async () => {
    const policy = resources.ReplayOperatorPolicy;
    expect(policy?.Type).toBe('AWS::IAM::ManagedPolicy');
    const stackName = 'forgebridge-ci';
    const queue = resources.SubscriberDeadLetterQueue?.Properties.QueueName as string;
    const table = resources.DeliveriesTable?.Properties.TableName as string | undefined;
    const tableName = table ?? `${stackName}-DeliveriesTable-ABC`;
    const context = {
      partition: 'aws',
      region: REGION,
      account: ACCOUNT,
      stackName,
      stackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stackName}/6a2f0c10-0000-11f0-9000-0a1b2c3d4e5f`,
      resources: {
        Bus: {
          ref: busName,
          attributes: { Arn: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/${busName}`, Name: busName },
        },
        BusArchive: { ref: archiveName, attributes: { Arn: archiveArn() } },
        DeliveriesTable: {
          ref: tableName,
          attributes: { Arn: `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${tableName}` },
        },
        SubscriberDeadLetterQueue: {
          ref: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queue}`,
          attributes: { Arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${queue}`, QueueName: queue },
        },
      },
    };
    const document = resolveIntrinsics(policy?.Properties.PolicyDocument, context);
    const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${queue}`;
    const tableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${tableName}`;
    const all = [
      ...calls,
      { action: 'cloudformation:DescribeStacks', resources: [context.stackId] },
      { action: 'dynamodb:Query', resources: [tableArn, `${tableArn}/index/by-day`] },
      { action: 'dynamodb:GetItem', resources: [tableArn] },
      { action: 'sqs:ReceiveMessage', resources: [queueArn] },
      { action: 'sqs:ChangeMessageVisibility', resources: [queueArn] },
      { action: 'sqs:DeleteMessage', resources: [queueArn] },
    ];
    const actions = new Set(all.map((call) => call.action));
    for (const action of [
      'events:DescribeArchive',
      'events:ListRuleNamesByTarget',
      'events:StartReplay',
      'events:DescribeReplay',
      'events:PutEvents',
      'lambda:InvokeFunction',
    ]) {
      expect(actions, action).toContain(action);
    }
    const decide = async (action: string, resource: string) => {
      const result = await runSimulation(
        {
          request: {
            principal: `arn:aws:iam::${ACCOUNT}:role/operator`,
            action,
            resource: { resource, accountId: ACCOUNT },
            contextVariables: {},
          },
          identityPolicies: [{ name: 'ReplayOperatorPolicy', policy: document as never }],
          serviceControlPolicies: [],
          resourceControlPolicies: [],
        },
        {},
      );
      return result.resultType === 'error' ? `error: ${JSON.stringify(result.errors)}` : result.overallResult;
    };
    const denied: string[] = [];
    for (const call of all) {
      for (const resource of call.resources) {
        const decision = await decide(call.action, resource);
        if (decision !== 'Allowed') denied.push(`${call.action} on ${resource}: ${decision}`);
      }
    }
    expect(denied).toEqual([]);
    // And nothing beyond the stage: another stage's function, another account's queue.
    expect(
      await decide(
        'lambda:InvokeFunction',
        `arn:aws:lambda:${REGION}:${ACCOUNT}:function:forgebridge-prod-onEverything`,
      ),
    ).not.toBe('Allowed');
    expect(await decide('sqs:DeleteMessage', `arn:aws:sqs:${REGION}:${ACCOUNT}:other-queue`)).not.toBe(
      'Allowed',
    );
    console.info(
      `operator policy: ${all.reduce((n, call) => n + call.resources.length, 0)} (action, resource) pairs allowed`,
    );
  });
});

describe('dlq --queue ordered on a stage (OrderedReplayOperatorPolicy)', () => {
  it("reads the template's failure queue and stream, and the policy allows exactly those calls", async () => {
    const policy = resources.OrderedReplayOperatorPolicy;
    expect(policy?.Type).toBe('AWS::IAM::ManagedPolicy');
    const queueName = resources.OrderedFailureQueue?.Properties.QueueName as string;
    expect(queueName).toMatch(/^forgebridge-ci-ordered-failures$/);
    const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${queueName}`;
    const queueUrl = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queueName}`;
    // Unnamed in the template: CloudFormation names it after the stack.
    const streamName = 'forgebridge-ci-OrderedStream-1A2B3C4D5E6F';
    const streamArn = `arn:aws:kinesis:${REGION}:${ACCOUNT}:stream/${streamName}`;
    const functionArn = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${resources.OnPullRequestOrderedLambdaFunction?.Properties.FunctionName as string}`;
    const sqs = mockClient(SQSClient);
    const kinesis = mockClient(KinesisClient);
    try {
      sqs
        .on(ReceiveMessageCommand)
        .resolvesOnce({
          Messages: [
            {
              MessageId: 'm-1',
              ReceiptHandle: 'r-1',
              Body: JSON.stringify({
                requestContext: {
                  functionArn,
                  condition: 'RetryAttemptsExhausted',
                  approximateInvokeCount: 3,
                },
                responseContext: { functionError: 'BatchItemFailure' },
                KinesisBatchInfo: {
                  shardId: 'shardId-000000000000',
                  startSequenceNumber: '4960',
                  endSequenceNumber: '4960',
                  batchSize: 1,
                  streamArn,
                },
              }),
            },
          ],
        })
        .resolves({ Messages: [] });
      kinesis.on(GetShardIteratorCommand).resolves({ ShardIterator: 'it' });
      kinesis.on(GetRecordsCommand).resolves({
        Records: [
          {
            SequenceNumber: '4960',
            PartitionKey: 'acme/web#7',
            Data: Buffer.from(
              JSON.stringify({ 'detail-type': 'pull_request.opened', detail: { delivery: 'd-7' } }),
            ),
          },
        ],
      });
      const sqsClient = new SQSClient({ region: REGION });
      const kinesisClient = new KinesisClient({ region: REGION });
      const [letter] = await readOrderedFailures({
        sqs: sqsClient,
        queueUrl,
        holdSeconds: 60,
        limit: 10,
        kinesis: kinesisClient,
      });
      await letGo(sqsClient, queueUrl, letter === undefined ? [] : [letter]);
      sqsClient.destroy();
      kinesisClient.destroy();
      expect(letter).toMatchObject({ deliveryId: 'd-7', subscriber: functionArn.split(':').at(-1) });
      expect(kinesis.commandCalls(GetShardIteratorCommand)[0]?.args[0].input.StreamName).toBe(streamName);
      const made = [
        ...sqs
          .calls()
          .map((call) => `sqs:${(call.args[0] as object).constructor.name.replace(/(Batch)?Command$/, '')}`),
        ...kinesis
          .calls()
          .map((call) => `kinesis:${(call.args[0] as object).constructor.name.replace(/Command$/, '')}`),
      ];
      expect(new Set(made)).toEqual(
        new Set([
          'sqs:ReceiveMessage',
          'sqs:ChangeMessageVisibility',
          'kinesis:GetShardIterator',
          'kinesis:GetRecords',
        ]),
      );
      const document = resolveIntrinsics(policy?.Properties.PolicyDocument, {
        partition: 'aws',
        region: REGION,
        account: ACCOUNT,
        stackName: 'forgebridge-ci',
        stackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/forgebridge-ci/6a2f0c10-0000-11f0-9000-0a1b2c3d4e5f`,
        resources: {
          OrderedFailureQueue: { ref: queueUrl, attributes: { Arn: queueArn, QueueName: queueName } },
          OrderedStream: { ref: streamName, attributes: { Arn: streamArn } },
        },
      });
      const decide = async (action: string, resource: string) => {
        const result = await runSimulation(
          {
            request: {
              principal: `arn:aws:iam::${ACCOUNT}:role/operator`,
              action,
              resource: { resource, accountId: ACCOUNT },
              contextVariables: {},
            },
            identityPolicies: [{ name: 'OrderedReplayOperatorPolicy', policy: document as never }],
            serviceControlPolicies: [],
            resourceControlPolicies: [],
          },
          {},
        );
        return result.resultType === 'error'
          ? `error: ${JSON.stringify(result.errors)}`
          : result.overallResult;
      };
      // What the replay adds to the reads: the delete of a message its subscriber took.
      for (const action of [...made, 'sqs:DeleteMessage']) {
        const resource = action.startsWith('sqs:') ? queueArn : streamArn;
        expect(await decide(action, resource), action).toBe('Allowed');
      }
      expect(await decide('sqs:DeleteMessage', `arn:aws:sqs:${REGION}:${ACCOUNT}:other-queue`)).not.toBe(
        'Allowed',
      );
      expect(await decide('kinesis:PutRecord', streamArn)).not.toBe('Allowed');
    } finally {
      sqs.restore();
      kinesis.restore();
    }
  });
});
