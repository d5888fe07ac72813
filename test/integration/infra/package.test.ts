// `osls package` builds the CloudFormation template offline (no AWS credentials, HOME in a temp dir); this
// test reads that template and checks every resource, rule pattern, IAM statement, alarm and the dashboard in it,
// and runs cfn-lint on it. `osls print` shows that the local stage's recording subscriber is declared for that
// stage and for no other, and what the alarm variables (FORGEBRIDGE_ALARM_*) change. A second package turns the
// HTTP API on (FORGEBRIDGE_HTTP_API=true): its routes and its place in the ingest's 5xx alarm.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricDefinitions, MetricNames } from '../../../lib/aws/core/index.js';
import { subscriberNames } from '../../../lib/cli/commands/replay-bulk.js';
import { oslsEnv, packagedTemplate } from '../../helpers/packaged-template.js';

const root = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface Template {
  Resources: Record<string, Resource>;
  Parameters?: Record<string, Record<string, unknown>>;
  Conditions?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown }>;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** The alarm variables of the configured print: an email, the quiet-source alarm on, two sources. */
const CONFIGURED = {
  FORGEBRIDGE_ALARM_EMAIL: 'ops@example.com',
  FORGEBRIDGE_ALARM_QUIET_HOURS: '6',
  FORGEBRIDGE_ALARM_SIGNATURE_FAILURES: '3',
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
    { name: 'github', forge: 'github', secretParameter: '/forgebridge/ci/github' },
    { name: 'gitlab-acme', forge: 'gitlab', secretParameter: '/forgebridge/ci/gitlab-acme' },
  ]),
};

let dir: string;
let workFolder: string;
let home: string;
/** Runs the project's osls with the test's environment (and `extra`). */
let osls: (args: string[], extra?: NodeJS.ProcessEnv) => Promise<{ stdout: string; stderr: string }>;
let template: Template;
/** The `ci` stage's package folder: the template and each function's zip. */
let out: string;
let resources: Record<string, Resource>;
/** The template packaged with the HTTP API on (FORGEBRIDGE_HTTP_API=true). */
let withHttpApi: Template;
/** `resources` as `osls print` resolves them with the alarm variables set (see {@link CONFIGURED}). */
let configured: Template;
/** `resources` of the default stage (no ordered subscriber), as `osls print` resolves them. */
let defaultResources: unknown;
/** `functions` as `osls print` resolves them, for the default stage and for `local`. */
let printed: {
  default: Record<string, { handler: string; events?: unknown[] }>;
  local: typeof printed.default;
};

function ofType(type: string): [string, Resource][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

function functionNamed(name: string): Resource {
  const resource = resources[`${name[0]?.toUpperCase()}${name.slice(1)}LambdaFunction`];
  if (resource === undefined) throw new Error(`no function ${name}`);
  return resource;
}

function ruleOf(functionName: string): Resource {
  const rule = ofType('AWS::Events::Rule').find(([, resource]) =>
    JSON.stringify(resource.Properties.Targets).includes(
      `${functionName[0]?.toUpperCase()}${functionName.slice(1)}LambdaFunction`,
    ),
  );
  if (rule === undefined) throw new Error(`no rule targets ${functionName}`);
  return rule[1];
}

function statementsOf(roleName: string): Statement[] {
  const role = resources[roleName];
  const policies = (role?.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((policy) => policy.PolicyDocument.Statement);
}

function actions(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-package-'));
  workFolder = `.esbuild/package-${basename(dir)}`;
  home = join(dir, 'home');
  const env = oslsEnv(home, workFolder);
  osls = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    run(join(root, 'node_modules/.bin/osls'), args, {
      cwd: root,
      env: { ...env, ...extra },
      timeout: 150_000,
    });
  const print = async (stageArgs: string[]) =>
    JSON.parse((await osls(['print', ...stageArgs, '--path', 'functions', '--format', 'json'])).stdout);
  // The default stage (dev): no config file, so no ordered subscriber; its functions and its resources in one print.
  const printAll = async () => JSON.parse((await osls(['print', '--format', 'json'])).stdout);
  // The `ci` stage's package is the run's one (test/helpers/packaged-template.ts): cdk-nag and the IAM test read it too.
  const [packaged, defaultStage, localStage, printedResources] = await Promise.all([
    packagedTemplate('ci'),
    printAll(),
    print(['--stage', 'local']),
    osls(['print', '--stage', 'ci', '--path', 'resources', '--format', 'json'], CONFIGURED),
  ]);
  printed = { default: defaultStage.functions, local: localStage };
  defaultResources = defaultStage.resources;
  configured = JSON.parse(printedResources.stdout);
  out = packaged.dir;
  template = packaged.template as unknown as Template;
  resources = template.Resources;
  // After the others: two packages at once on a small machine run into osls' timeout.
  await osls(['package', '--package', join(dir, 'out-http-api'), '--stage', 'ci'], {
    FORGEBRIDGE_HTTP_API: 'true',
    FORGEBRIDGE_ESBUILD_WORK_FOLDER: `${workFolder}-http-api`,
  });
  withHttpApi = JSON.parse(
    readFileSync(join(dir, 'out-http-api/cloudformation-template-update-stack.json'), 'utf8'),
  );
}, 330_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  if (workFolder !== undefined) {
    rmSync(join(root, workFolder), { recursive: true, force: true });
    rmSync(join(root, `${workFolder}-http-api`), { recursive: true, force: true });
  }
});

const XRAY_WRITE = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];

describe('osls package (offline, no credentials)', () => {
  it('turns active tracing on for every function, each role holding the X-Ray write actions only on "*"', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(7);
    for (const [name, fn] of functions) {
      expect(fn.Properties.TracingConfig, name).toEqual({ Mode: 'Active' });
      const role = name.replace('LambdaFunction', 'IamRoleLambdaExecution');
      const xray = statementsOf(role).filter((statement) =>
        actions(statement).some((action) => action.startsWith('xray:')),
      );
      expect(xray, role).toEqual([{ Effect: 'Allow', Action: XRAY_WRITE, Resource: '*' }]);
    }
  });

  it('creates the custom event bus with an archive of every delivery', () => {
    const bus = resources.Bus;
    expect(bus?.Type).toBe('AWS::Events::EventBus');
    expect(bus?.Properties.Name).toBe('forgebridge-ci');
    const archive = resources.BusArchive;
    expect(archive?.Type).toBe('AWS::Events::Archive');
    expect(archive?.Properties.SourceArn).toEqual({ 'Fn::GetAtt': ['Bus', 'Arn'] });
    expect(archive?.Properties.RetentionDays).toBeGreaterThan(0);
  });

  it('gives every subscriber target a retry policy and the dead-letter queue', () => {
    expect(resources.SubscriberDeadLetterQueue?.Type).toBe('AWS::SQS::Queue');
    const rules = ofType('AWS::Events::Rule').filter(
      ([, rule]) => rule.Properties.EventPattern !== undefined,
    );
    expect(rules).toHaveLength(5);
    for (const [, rule] of rules) {
      expect(rule.Properties.EventBusName).toEqual({ 'Fn::GetAtt': ['Bus', 'Name'] });
      const [target] = rule.Properties.Targets as Record<string, unknown>[];
      expect(target?.DeadLetterConfig).toEqual({
        Arn: { 'Fn::GetAtt': ['SubscriberDeadLetterQueue', 'Arn'] },
      });
      expect(target?.RetryPolicy).toMatchObject({ MaximumRetryAttempts: expect.any(Number) });
    }
    const policy = resources.SubscriberDeadLetterQueuePolicy?.Properties.PolicyDocument as {
      Statement: { Effect: string; Principal: unknown; Condition?: unknown }[];
    };
    const allow = policy.Statement.find((statement) => statement.Effect === 'Allow');
    expect(allow?.Principal).toEqual({ Service: 'events.amazonaws.com' });
    expect(JSON.stringify(allow?.Condition)).toContain(':rule/forgebridge-ci/*');
  });

  it('creates the dedupe and token tables keyed on pk with TTL on', () => {
    for (const [name, tableName] of [
      ['DedupeTable', 'forgebridge-ci-dedupe'],
      ['TokenTable', 'forgebridge-ci-tokens'],
    ] as const) {
      const table = resources[name];
      expect(table?.Type).toBe('AWS::DynamoDB::Table');
      expect(table?.Properties.TableName).toBe(tableName);
      expect(table?.Properties.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
      expect(table?.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table?.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expiresAt',
        Enabled: true,
      });
    }
  });

  it('creates the claim-check bucket private, encrypted, with lifecycle expiry', () => {
    const bucket = resources.ClaimCheckBucket;
    expect(bucket?.Type).toBe('AWS::S3::Bucket');
    const lifecycle = bucket?.Properties.LifecycleConfiguration as
      | { Rules: Record<string, unknown>[] }
      | undefined;
    const rules = lifecycle?.Rules;
    expect(rules).toEqual([expect.objectContaining({ Status: 'Enabled', ExpirationInDays: 14 })]);
    expect(bucket?.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket?.Properties.BucketEncryption).toBeDefined();
  });

  it("names nothing that is global across accounts or regions: the bucket is CloudFormation's, the dashboard has the region", () => {
    // S3 bucket names are global to every AWS account of a partition: a fixed name fails every deploy but the first.
    expect(resources.ClaimCheckBucket?.Properties.BucketName).toEqual({ Ref: 'AWS::NoValue' });
    for (const [name, fn] of ofType('AWS::Lambda::Function')) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      if ('FORGEBRIDGE_BUCKET' in variables) {
        expect(variables.FORGEBRIDGE_BUCKET, name).toEqual({ Ref: 'ClaimCheckBucket' });
      }
    }
    expect(template.Outputs?.ClaimCheckBucketName?.Value).toEqual({ Ref: 'ClaimCheckBucket' });
    // CloudWatch dashboards are global to an account.
    expect(resources.OperationsDashboard?.Properties.DashboardName).toEqual({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub placeholder
      'Fn::Sub': 'forgebridge-ci-${AWS::Region}',
    });
  });

  it('keeps what holds deliveries and tokens when the stack is removed or a table replaced', () => {
    for (const name of ['DedupeTable', 'DeliveriesTable', 'TokenTable', 'ClaimCheckBucket']) {
      const resource = resources[name] as Resource & {
        DeletionPolicy?: string;
        UpdateReplacePolicy?: string;
      };
      expect(resource.DeletionPolicy, name).toBe('Retain');
      expect(resource.UpdateReplacePolicy, name).toBe('Retain');
    }
    // The queue and its dead letters: recoverable to any second of 35 days, and no DeleteTable by mistake.
    expect(resources.DedupeTable?.Properties).toMatchObject({
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('runs every function on nodejs22.x with its own role', () => {
    // osls's default role, used by no function once each has its own, is left out (infra/drop-default-role.cjs).
    expect(resources.IamRoleLambdaExecution).toBeUndefined();
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.map(([name]) => name).sort()).toEqual(
      [
        'IngestLambdaFunction',
        'OnEverythingLambdaFunction',
        'OnIssuesLambdaFunction',
        'OnIssuesOpenedLambdaFunction',
        'OnIssuesPrefixLambdaFunction',
        'OnPushLambdaFunction',
        // config/ci.yml's ordered subscriber.
        'OnPullRequestOrderedLambdaFunction',
        'ReconcileLambdaFunction',
        'RedriveLambdaFunction',
        'RefreshLambdaFunction',
      ].sort(),
    );
    for (const [name, fn] of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Handler).toMatch(/handler\.handler$/);
      const role = name.replace('LambdaFunction', 'IamRoleLambdaExecution');
      expect(fn.Properties.Role).toEqual({ 'Fn::GetAtt': [role, 'Arn'] });
      expect(resources[role]?.Type).toBe('AWS::IAM::Role');
    }
  });

  it('leaves the local recording subscriber out of every stage but local', () => {
    const deployed = [
      'ingest',
      'onEverything',
      'onIssues',
      'onIssuesOpened',
      'onIssuesPrefix',
      'onPush',
      'reconcile',
      'redrive',
      'refresh',
    ];
    expect(Object.keys(printed.default).sort()).toEqual(deployed);
    // The local stage also has config/local.yml's ordered subscriber, its twin on the bus and the example commenter
    // (local only).
    expect(Object.keys(printed.local).sort()).toEqual(
      [...deployed, 'recorder', 'onPullRequestOrdered', 'onPullRequestOnBus', 'onPullRequestOpened'].sort(),
    );
    expect(printed.local.recorder?.handler).toBe('local-stack/recorder.handler');
    expect(printed.local.recorder?.events).toEqual([
      { eventBridge: expect.objectContaining({ pattern: { source: ['forge.webhooks'] } }) },
    ]);
    // The packaged template (stage ci): no function, rule target, role or code of the recorder.
    const template = JSON.stringify(resources);
    expect(Object.keys(resources).filter((name) => name.startsWith('Recorder'))).toEqual([]);
    expect(template).not.toMatch(/recorder/i);
    expect(template).not.toContain('local-stack');
  });

  it('deploys no HTTP API by default: the Function URL is the only door', () => {
    const apiGateway = Object.entries(resources).filter(([, resource]) =>
      resource.Type.startsWith('AWS::ApiGatewayV2::'),
    );
    expect(apiGateway).toEqual([]);
    expect(JSON.stringify(template)).not.toContain('HttpApi');
  });

  it('routes POST /webhooks of an HTTP API (payload 2.0) to the ingest with FORGEBRIDGE_HTTP_API=true', () => {
    expect(withHttpApi.Resources.HttpApi?.Type).toBe('AWS::ApiGatewayV2::Api');
    expect(withHttpApi.Resources.HttpApiRoutePostWebhooks?.Properties.RouteKey).toBe('POST /webhooks');
    expect(withHttpApi.Resources.HttpApiIntegrationIngest?.Properties.PayloadFormatVersion).toBe('2.0');
    // The same Function URL beside it.
    expect(
      Object.values(withHttpApi.Resources).filter((resource) => resource.Type === 'AWS::Lambda::Url'),
    ).toHaveLength(1);
  });

  it('also gives the ingest a Function URL (payload 2.0), open to the forge, answered by the same handler', () => {
    const urls = ofType('AWS::Lambda::Url');
    expect(urls).toHaveLength(1);
    const [, url] = urls[0]!;
    expect(url.Properties.TargetFunctionArn).toEqual({ 'Fn::GetAtt': ['IngestLambdaFunction', 'Arn'] });
    // The forge cannot sign AWS requests: the URL is public and the webhook signature is the authentication.
    expect(url.Properties.AuthType).toBe('NONE');
    const permissions = ofType('AWS::Lambda::Permission').filter(
      ([, permission]) => permission.Properties.Action === 'lambda:InvokeFunctionUrl',
    );
    expect(permissions).toHaveLength(1);
    expect(permissions[0]?.[1].Properties.FunctionUrlAuthType).toBe('NONE');
  });

  it('schedules the token refresh every 5 minutes, the retrier of queued deliveries every minute and the reconciler every 10 minutes', () => {
    const schedules = ofType('AWS::Events::Rule').filter(([, rule]) => rule.Properties.ScheduleExpression);
    const targeting = (fn: string) =>
      schedules.filter(([, rule]) => JSON.stringify(rule.Properties.Targets).includes(fn));
    expect(schedules).toHaveLength(3);
    expect(targeting('ReconcileLambdaFunction').map(([, r]) => r.Properties.ScheduleExpression)).toEqual([
      'rate(10 minutes)',
    ]);
    expect(targeting('RefreshLambdaFunction').map(([, r]) => r.Properties.ScheduleExpression)).toEqual([
      'rate(5 minutes)',
    ]);
    expect(targeting('RedriveLambdaFunction').map(([, r]) => r.Properties.ScheduleExpression)).toEqual([
      'rate(1 minute)',
    ]);
  });

  it('routes POST /webhooks/{source} to the ingest beside the default /webhooks (HTTP API on)', () => {
    expect(withHttpApi.Resources.HttpApiRoutePostWebhooksSourceVar?.Properties.RouteKey).toBe(
      'POST /webhooks/{source}',
    );
  });

  it('stops osls with the variable named when FORGEBRIDGE_HTTP_API is neither true nor false', async () => {
    await expect(
      osls(['print', '--stage', 'ci', '--path', 'functions'], { FORGEBRIDGE_HTTP_API: 'yes' }),
    ).rejects.toMatchObject({
      stdout: expect.stringContaining('"FORGEBRIDGE_HTTP_API" must be "true" or "false"'),
    });
  });

  it('alarms on one delivery the reconciler gave up', () => {
    expect(resources.ReconcileGaveUpDeliveriesAlarm?.Properties).toMatchObject({
      MetricName: 'ReconcileGaveUpDeliveries',
      Namespace: 'forgebridge/ci',
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: 'AlarmTopic' }],
    });
  });

  it('writes one rule per rule form with the documented pattern', () => {
    expect(ruleOf('onIssuesOpened').Properties.EventPattern).toEqual({
      source: ['forge.webhooks'],
      'detail-type': ['issues.opened'],
    });
    expect(ruleOf('onIssues').Properties.EventPattern).toEqual({
      source: ['forge.webhooks'],
      detail: { event: ['issues'] },
    });
    expect(ruleOf('onIssuesPrefix').Properties.EventPattern).toEqual({
      source: ['forge.webhooks'],
      'detail-type': [{ prefix: 'issues.' }],
    });
    expect(ruleOf('onPush').Properties.EventPattern).toEqual({
      source: ['forge.webhooks'],
      'detail-type': ['push'],
    });
    expect(ruleOf('onEverything').Properties.EventPattern).toEqual({ source: ['forge.webhooks'] });
  });

  it('scopes every IAM statement of every role to named resources', () => {
    const roles = ofType('AWS::IAM::Role');
    expect(roles.length).toBeGreaterThanOrEqual(7);
    for (const [name] of roles) {
      const statements = statementsOf(name);
      expect(statements.length, name).toBeGreaterThan(0);
      for (const statement of statements) {
        // X-Ray takes no resource-level permissions: its two write actions alone may name "*".
        if (actions(statement).every((action) => XRAY_WRITE.includes(action))) continue;
        const targets = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
        for (const target of targets) {
          expect(target, `${name} ${actions(statement).join(',')}`).not.toBe('*');
          const text = JSON.stringify(target);
          expect(text, name).not.toMatch(/"\*"|:\*"$|^"arn:aws:[a-z0-9-]+:::?\*"$/);
          // A wildcard may only end a named prefix (a log group, an object key prefix, a parameter path).
          expect(text.replace(/\\"/g, ''), name).toMatch(/forgebridge|Arn"|"Ref"/);
        }
        for (const action of actions(statement)) expect(action, name).not.toMatch(/^\*$|:\*$/);
      }
    }
  });

  it('grants each function only the actions its code makes', () => {
    const grants = (role: string) =>
      statementsOf(role)
        .flatMap(actions)
        .filter((action) => !action.startsWith('logs:') && !XRAY_WRITE.includes(action))
        .sort();
    // PutItem twice: the dedupe table's and the delivery log's, each its own statement (checked below).
    expect(grants('IngestIamRoleLambdaExecution')).toEqual(
      [
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        's3:PutObject',
        'ssm:GetParameter',
      ].sort(),
    );
    expect(grants('RedriveIamRoleLambdaExecution')).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        's3:GetObject',
        's3:PutObject',
      ].sort(),
    );
    // The reconciler reads dedupe records, keeps its own items beside them, writes its log rows, reads tokens,
    // and publishes a delivery too large for the ingest through the claim check.
    expect(grants('ReconcileIamRoleLambdaExecution')).toEqual(
      [
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:PutItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        's3:PutObject',
        'ssm:GetParameter',
      ].sort(),
    );
    expect(grants('RefreshIamRoleLambdaExecution')).toEqual(
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'ssm:GetParameter'].sort(),
    );
    // UpdateItem twice: the token table's and the delivery log's (its report).
    expect(grants('OnIssuesOpenedIamRoleLambdaExecution')).toEqual(
      [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:UpdateItem',
        's3:GetObject',
        'ssm:GetParameter',
      ].sort(),
    );
    for (const role of [
      'OnIssuesIamRoleLambdaExecution',
      'OnIssuesPrefixIamRoleLambdaExecution',
      'OnPushIamRoleLambdaExecution',
    ]) {
      expect(grants(role)).toEqual(['s3:GetObject']);
    }
    // The catch-all reports every delivery's outcome: what `replay --since --subscriber` selects from.
    expect(grants('OnEverythingIamRoleLambdaExecution')).toEqual(['dynamodb:UpdateItem', 's3:GetObject']);
    const ingest = statementsOf('IngestIamRoleLambdaExecution');
    const put = ingest.find((statement) => actions(statement).includes('events:PutEvents'));
    expect(put?.Resource).toEqual({ 'Fn::GetAtt': ['Bus', 'Arn'] });
    const ssm = ingest.find((statement) => actions(statement).includes('ssm:GetParameter'));
    expect(JSON.stringify(ssm?.Resource)).toContain(':parameter/forgebridge/ci/webhook-secret');
  });

  it('grants the delivery log by name: PutItem to the ingest, UpdateItem to the reporting subscribers, nothing else', () => {
    const logTable = { 'Fn::GetAtt': ['DeliveriesTable', 'Arn'] };
    const onLog = (role: string) =>
      statementsOf(role).filter((statement) =>
        JSON.stringify(statement.Resource).includes('DeliveriesTable'),
      );
    const ingest = onLog('IngestIamRoleLambdaExecution');
    expect(ingest).toHaveLength(1);
    expect(actions(ingest[0] as Statement)).toEqual(['dynamodb:PutItem']);
    expect(ingest[0]?.Resource).toEqual(logTable);
    for (const role of ['OnIssuesOpenedIamRoleLambdaExecution', 'OnEverythingIamRoleLambdaExecution']) {
      const subscriber = onLog(role);
      expect(subscriber, role).toHaveLength(1);
      expect(actions(subscriber[0] as Statement)).toEqual(['dynamodb:UpdateItem']);
      expect(subscriber[0]?.Resource).toEqual(logTable);
    }
    const reconciler = onLog('ReconcileIamRoleLambdaExecution');
    expect(reconciler).toHaveLength(1);
    expect(actions(reconciler[0] as Statement)).toEqual(['dynamodb:PutItem']);
    for (const role of [
      'RedriveIamRoleLambdaExecution',
      'RefreshIamRoleLambdaExecution',
      'OnIssuesIamRoleLambdaExecution',
      'OnPushIamRoleLambdaExecution',
    ]) {
      expect(onLog(role), role).toEqual([]);
    }
    expect(resources.DeliveriesTable?.Properties.TableName).toBe('forgebridge-ci-deliveries');
  });

  it('turns the delivery log on with the payload off and 14 days, for the ingest and the reporting subscriber', () => {
    const variables = (name: string) =>
      (functionNamed(name).Properties.Environment as { Variables: Record<string, string> }).Variables;
    // Every name the functions get is the stack's own (Ref), never a naming rule.
    expect(variables('ingest')).toMatchObject({
      FORGEBRIDGE_DELIVERIES_TABLE: { Ref: 'DeliveriesTable' },
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
      FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'false',
    });
    expect(variables('onIssuesOpened')).toMatchObject({
      FORGEBRIDGE_DELIVERIES_TABLE: { Ref: 'DeliveriesTable' },
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
    });
    expect(variables('onIssuesOpened').FORGEBRIDGE_DELIVERY_LOG_PAYLOAD).toBeUndefined();
    expect(variables('onEverything')).toMatchObject({
      FORGEBRIDGE_DELIVERIES_TABLE: { Ref: 'DeliveriesTable' },
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
    });
    expect(variables('onPush').FORGEBRIDGE_DELIVERIES_TABLE).toBe('');
  });

  it('replay --since --stage ci --subscriber <key> invokes the function the template names for that key', () => {
    for (const key of ['onIssuesOpened', 'onEverything']) {
      // The name a subscriber reports under by default (its AWS_LAMBDA_FUNCTION_NAME) and the one invoked.
      expect(subscriberNames(key, 'ci')).toContain(functionNamed(key).Properties.FunctionName);
    }
  });

  it('keeps secrets out of the environment: only SSM parameter names', () => {
    const functions = ofType('AWS::Lambda::Function');
    for (const [, fn] of functions) {
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      for (const name of Object.keys(variables)) expect(name).not.toMatch(/SECRET$|PASSWORD|TOKEN$/);
    }
    const ingest = functionNamed('ingest').Properties.Environment as { Variables: Record<string, string> };
    expect(ingest.Variables.FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER).toBe('/forgebridge/ci/webhook-secret');
  });
});

const NAMESPACE = 'forgebridge/ci';

interface MetricQuery {
  Id: string;
  Expression?: string;
  Period?: number;
  ReturnData?: boolean;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
    Stat: string;
    Period: number;
  };
}

function alarm(name: string, from: Record<string, Resource> = resources): Record<string, unknown> {
  const resource = from[name];
  if (resource?.Type !== 'AWS::CloudWatch::Alarm') throw new Error(`no alarm ${name}`);
  return resource.Properties;
}

function queries(name: string, from?: Record<string, Resource>): MetricQuery[] {
  return (alarm(name, from).Metrics ?? []) as MetricQuery[];
}

/** The one query an alarm reads (ReturnData), flattened to one line. */
function expressionOf(name: string, from?: Record<string, Resource>): string {
  const returned = queries(name, from).filter((query) => query.ReturnData !== false);
  expect(returned, name).toHaveLength(1);
  return (returned[0]?.Expression ?? '').replace(/\s+/g, ' ');
}

/** The dashboard's body, parsed, and the text of its `Fn::Sub`. */
function dashboard(): { text: string; body: { widgets: Record<string, unknown>[] } } {
  const resource = resources.OperationsDashboard;
  if (resource === undefined) throw new Error('no dashboard');
  const sub = (resource.Properties.DashboardBody as { 'Fn::Sub': string })['Fn::Sub'];
  return { text: sub, body: JSON.parse(sub) };
}

/** MetricDefinitions by metric name: dimensions besides `service`, whether `service` too. */
function metricContract(): Map<string, { dimensions: string[]; service: boolean }> {
  return new Map(
    Object.values(MetricDefinitions).map((definition) => [
      definition.name as string,
      { dimensions: [...definition.dimensions].sort(), service: definition.service },
    ]),
  );
}

/** One metric an alarm watches: its namespace, name and dimensions (values where the alarm gives them). */
interface Watched {
  namespace: string;
  name: string;
  dimensions: { Name: string; Value?: unknown }[];
}

/** Every metric an alarm watches: its own, each of its metric queries, each Metrics Insights query's. */
function watchedBy(properties: Record<string, unknown>): Watched[] {
  const watched: Watched[] = [];
  if (typeof properties.MetricName === 'string') {
    watched.push({
      namespace: properties.Namespace as string,
      name: properties.MetricName,
      dimensions: (properties.Dimensions ?? []) as Watched['dimensions'],
    });
  }
  for (const query of (properties.Metrics ?? []) as MetricQuery[]) {
    const metric = query.MetricStat?.Metric;
    if (metric !== undefined) {
      watched.push({
        namespace: metric.Namespace,
        name: metric.MetricName,
        dimensions: metric.Dimensions ?? [],
      });
    }
    for (const [, name, namespace, keys] of (query.Expression ?? '').matchAll(
      /SELECT \w+\((\w+)\) FROM SCHEMA\("([^"]+)"([^)]*)\)/g,
    )) {
      const dimensions = (keys as string)
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean);
      watched.push({
        namespace: namespace as string,
        name: name as string,
        dimensions: dimensions.map((Name) => ({ Name })),
      });
    }
  }
  return watched;
}

/** Every use of a metric of our namespace: by an alarm (metric, query) or by the dashboard (metric, query, search). */
function metricUses(): { where: string; name: string; dimensions: string[] }[] {
  const uses: { where: string; name: string; dimensions: string[] }[] = [];
  const fromText = (where: string, text: string) => {
    for (const [, name, schema] of text.matchAll(
      /SELECT \w+\((\w+)\) FROM SCHEMA\(\\?"([^"\\]+)\\?"([^)]*)\)/g,
    )) {
      if (schema !== NAMESPACE) continue;
      const dimensions = (text.match(/SCHEMA\([^)]*\)/)?.[0] ?? '').split(',').slice(1);
      uses.push({
        where,
        name: name as string,
        dimensions: dimensions.map((dim) => dim.replace(')', '').trim()),
      });
    }
    for (const [, keys, name] of text.matchAll(/SEARCH\('\{([^}]+)\} MetricName=\\?"(\w+)\\?"/g)) {
      const [namespace, ...dimensions] = (keys as string).split(',');
      if (namespace === NAMESPACE) uses.push({ where, name: name as string, dimensions });
    }
  };
  for (const [id, resource] of ofType('AWS::CloudWatch::Alarm')) {
    const properties = resource.Properties;
    if (properties.Namespace === NAMESPACE) {
      const dimensions = (properties.Dimensions ?? []) as { Name: string }[];
      uses.push({
        where: id,
        name: properties.MetricName as string,
        dimensions: dimensions.map((d) => d.Name),
      });
    }
    for (const query of (properties.Metrics ?? []) as MetricQuery[]) {
      const metric = query.MetricStat?.Metric;
      if (metric?.Namespace === NAMESPACE) {
        uses.push({
          where: id,
          name: metric.MetricName,
          dimensions: (metric.Dimensions ?? []).map((d) => d.Name),
        });
      }
      if (query.Expression !== undefined) fromText(id, query.Expression);
    }
  }
  for (const widget of dashboard().body.widgets) {
    const properties = widget.properties as { title: string; metrics?: unknown[][] };
    for (const row of properties.metrics ?? []) {
      if (row[0] === NAMESPACE) {
        const names = row.filter((cell) => typeof cell === 'string') as string[];
        uses.push({
          where: properties.title,
          name: names[1] as string,
          dimensions: names.slice(2).filter((_, i) => i % 2 === 0),
        });
      }
      for (const cell of row) {
        if (typeof cell === 'object' && cell !== null && 'expression' in cell) {
          fromText(properties.title, String((cell as { expression: string }).expression));
        }
      }
    }
  }
  return uses;
}

interface LintMatch {
  Filename: string;
  Level: string;
  Message: string;
  Rule: { Id: string };
  Location: { Path: unknown[] };
}

/**
 * cfn-lint's findings on each template file, from one cfn-lint process: most of a run is loading its resource specs,
 * so the templates share one (its exit code is a bit set: 2 errors, 4 warnings, 8 informational).
 */
async function cfnLint(files: readonly string[]): Promise<LintMatch[][]> {
  let stdout: string;
  try {
    ({ stdout } = await run('cfn-lint', ['--format', 'json', ...files], {
      env: { PATH: process.env.PATH, HOME: home },
      timeout: 120_000,
    }));
  } catch (error) {
    const { code, stdout: output } = error as { code?: number | string; stdout?: string };
    if (code === 'ENOENT')
      throw new Error('cfn-lint is not installed (pip install cfn-lint; .ci/run does it)');
    if (typeof code !== 'number' || (code & 1) !== 0 || !output) throw error;
    stdout = output;
  }
  const matches = JSON.parse(stdout || '[]') as LintMatch[];
  const unknown = matches.filter((match) => !files.includes(match.Filename));
  if (unknown.length > 0) throw new Error(`cfn-lint named a file it was not given: ${unknown[0]?.Filename}`);
  return files.map((file) => matches.filter((match) => match.Filename === file));
}

describe('osls package: alarms, their topic and the dashboard', () => {
  it('sends every alarm to one SNS topic, subscribing FORGEBRIDGE_ALARM_EMAIL only when it is set', () => {
    expect(resources.AlarmTopic?.Type).toBe('AWS::SNS::Topic');
    expect(resources.AlarmTopic?.Properties.TopicName).toBe('forgebridge-ci-alarms');
    const subscription = resources.AlarmEmailSubscription as Resource & { Condition?: string };
    expect(subscription.Type).toBe('AWS::SNS::Subscription');
    expect(subscription.Condition).toBe('AlarmEmailGiven');
    expect(subscription.Properties).toEqual({
      TopicArn: { Ref: 'AlarmTopic' },
      Protocol: 'email',
      Endpoint: { Ref: 'AlarmEmail' },
    });
    expect(template.Conditions?.AlarmEmailGiven).toEqual({
      'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'AlarmEmail' }, ''] }],
    });
    // Unset: the parameter is empty and the condition false; set: the address is the parameter's default.
    expect(template.Parameters?.AlarmEmail).toMatchObject({ Type: 'String', Default: '' });
    expect(configured.Parameters?.AlarmEmail).toMatchObject({ Type: 'String', Default: 'ops@example.com' });
    expect(template.Outputs?.AlarmTopicArn?.Value).toEqual({ Ref: 'AlarmTopic' });
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(13);
    for (const [name, resource] of alarms) {
      expect(resource.Properties.AlarmActions, name).toEqual([{ Ref: 'AlarmTopic' }]);
      expect(resource.Properties.OKActions, name).toEqual([{ Ref: 'AlarmTopic' }]);
      expect(resource.Properties.AlarmName, name).toMatch(/^forgebridge-ci-[A-Za-z0-9-]+$/);
    }
  });

  it('alarms on more than 5 bad signatures in 5 minutes over every source (FORGEBRIDGE_ALARM_SIGNATURE_FAILURES)', () => {
    expect(expressionOf('SignatureFailuresAlarm')).toBe(
      `SELECT SUM(Deliveries) FROM SCHEMA("${NAMESPACE}", Outcome, Source, Verdict, service) WHERE Verdict = 'bad_signature'`,
    );
    expect(queries('SignatureFailuresAlarm')[0]?.Period).toBe(300);
    expect(alarm('SignatureFailuresAlarm')).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(alarm('SignatureFailuresAlarm', configured.Resources).Threshold).toBe(3);
  });

  it('alarms on any ingest 5xx: the Function URL and the function errors added up, and the HTTP API when on', () => {
    const byId = Object.fromEntries(queries('Ingest5xxAlarm').map((query) => [query.Id, query]));
    expect(Object.keys(byId).sort()).toEqual(['errors', 'failed', 'url']);
    const withApi = Object.fromEntries(
      queries('Ingest5xxAlarm', withHttpApi.Resources).map((query) => [query.Id, query]),
    );
    expect(withApi.api?.MetricStat?.Metric).toEqual({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }],
    });
    expect(withApi.api?.MetricStat).toMatchObject({ Stat: 'Sum', Period: 300 });
    expect(expressionOf('Ingest5xxAlarm', withHttpApi.Resources)).toBe(
      'FILL(api, 0) + FILL(url, 0) + FILL(errors, 0)',
    );
    for (const [id, metricName] of [
      ['url', 'Url5xxCount'],
      ['errors', 'Errors'],
    ] as const) {
      expect(byId[id]?.MetricStat?.Metric).toEqual({
        Namespace: 'AWS/Lambda',
        MetricName: metricName,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'IngestLambdaFunction' } }],
      });
      expect(byId[id]?.MetricStat).toMatchObject({ Stat: 'Sum', Period: 300 });
    }
    expect(expressionOf('Ingest5xxAlarm')).toBe('FILL(url, 0) + FILL(errors, 0)');
    expect(alarm('Ingest5xxAlarm')).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms when the oldest queued delivery is older than 15 minutes', () => {
    expect(alarm('QueueOldestAgeAlarm')).toMatchObject({
      Namespace: NAMESPACE,
      MetricName: 'QueueOldestAgeSeconds',
      Dimensions: [{ Name: 'service', Value: 'forgebridge' }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 900,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it("alarms on one dead letter, counted on the retrier's dead-letter line in its namespace", () => {
    expect(alarm('DeadLetteredDeliveriesAlarm')).toMatchObject({
      Namespace: NAMESPACE,
      MetricName: MetricNames.deadLetteredDeliveries,
      Statistic: 'Sum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    // The line carries no dimension: the alarm names none.
    expect(alarm('DeadLetteredDeliveriesAlarm')).not.toHaveProperty('Dimensions');
    const redrive = functionNamed('redrive').Properties.Environment as { Variables: Record<string, string> };
    expect(redrive.Variables.FORGEBRIDGE_METRIC_NAMESPACE).toBe(NAMESPACE);
  });

  it("alarms on failed invocations of any rule on the bus and on a message in the rules' dead-letter queue", () => {
    expect(expressionOf('BusFailedInvocationsAlarm')).toBe(
      `SELECT SUM(FailedInvocations) FROM SCHEMA("AWS/Events", EventBusName, RuleName) WHERE EventBusName = 'forgebridge-ci'`,
    );
    expect(alarm('BusFailedInvocationsAlarm')).toMatchObject({ Threshold: 0 });
    expect(alarm('SubscriberDeadLetterQueueAlarm')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': ['SubscriberDeadLetterQueue', 'QueueName'] } },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('gives every function an EventBridge rule invokes its own errors alarm', () => {
    const subscribers = ofType('AWS::Events::Rule')
      .filter(([, rule]) => rule.Properties.EventPattern !== undefined)
      .map(
        ([, rule]) =>
          (rule.Properties.Targets as { Arn: { 'Fn::GetAtt': string[] } }[])[0]?.Arn['Fn::GetAtt'][0],
      )
      .sort();
    expect(subscribers).toHaveLength(5);
    const alarms = ofType('AWS::CloudWatch::Alarm').filter(([id]) => /^On\w+ErrorsAlarm$/.test(id));
    expect(alarms.map(([id]) => id.replace('ErrorsAlarm', 'LambdaFunction')).sort()).toEqual(subscribers);
    for (const [id, resource] of alarms) {
      expect(resource.Properties, id).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: id.replace('ErrorsAlarm', 'LambdaFunction') } }],
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });

  it("alarms when the retrier cannot read the queue's depth and age: a blind queue-age alarm is an alarm", () => {
    expect(alarm('QueueStatsFailedAlarm')).toMatchObject({
      Namespace: NAMESPACE,
      MetricName: MetricNames.queueStatsFailed,
      Dimensions: [{ Name: 'service', Value: 'forgebridge' }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on errors of every scheduled function and on deliveries failed at the forge', () => {
    for (const name of ['reconcile', 'redrive', 'refresh']) {
      const id = `${name[0]?.toUpperCase()}${name.slice(1)}`;
      expect(alarm(`${id}ErrorsAlarm`), name).toMatchObject({
        AlarmName: `forgebridge-ci-errors-${name}`,
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${id}LambdaFunction` } }],
        Period: 900,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
    }
    expect(expressionOf('FailedAtForgeAlarm')).toBe(
      `SELECT SUM(ReconcileFailedAtForge) FROM SCHEMA("${NAMESPACE}", Source, service)`,
    );
    expect(alarm('FailedAtForgeAlarm')).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('declares no quiet-source alarm by default, and one per source with FORGEBRIDGE_ALARM_QUIET_HOURS', () => {
    expect(Object.keys(resources).filter((id) => id.startsWith('QuietSource'))).toEqual([]);
    const quiet = Object.keys(configured.Resources).filter((id) => id.startsWith('QuietSource'));
    expect(quiet.sort()).toEqual(['QuietSourceGithubAlarm', 'QuietSourceGitlabAcmeAlarm']);
    const properties = alarm('QuietSourceGitlabAcmeAlarm', configured.Resources);
    expect(properties).toMatchObject({
      AlarmName: 'forgebridge-ci-quiet-source-gitlab-acme',
      EvaluationPeriods: 6,
      DatapointsToAlarm: 6,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    const metrics = queries('QuietSourceGitlabAcmeAlarm', configured.Resources).filter((q) => q.MetricStat);
    expect(metrics.map((query) => query.MetricStat?.Metric.Dimensions)).toEqual(
      ['published', 'queued', 'duplicate', 'in_progress', 'failed'].map((outcome) => [
        { Name: 'service', Value: 'forgebridge' },
        { Name: 'Source', Value: 'gitlab-acme' },
        { Name: 'Verdict', Value: 'verified' },
        { Name: 'Outcome', Value: outcome },
      ]),
    );
    for (const query of metrics) expect(query.MetricStat).toMatchObject({ Stat: 'Sum', Period: 3600 });
    expect(expressionOf('QuietSourceGitlabAcmeAlarm', configured.Resources)).toBe(
      'FILL(m0, 0) + FILL(m1, 0) + FILL(m2, 0) + FILL(m3, 0) + FILL(m4, 0)',
    );
  });

  it('stops osls with the variable named when an alarm setting is out of range', async () => {
    // One value through osls, from the shell: every range is held by the parser itself
    // (test/unit/aws/stage-config.test.ts), which infra/ calls at package time.
    await expect(
      osls(['print', '--stage', 'ci', '--path', 'resources'], { FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS: '30' }),
    ).rejects.toMatchObject({
      stdout: expect.stringContaining('"FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS" must be a whole number from 60'),
    });
  });

  it('builds a dashboard of deliveries, verdicts, ingest duration, queue, subscribers, reconciler and every alarm', () => {
    expect(resources.OperationsDashboard?.Type).toBe('AWS::CloudWatch::Dashboard');
    const { text, body } = dashboard();
    const titles = body.widgets.map((widget) => (widget.properties as { title: string }).title);
    expect(titles).toEqual([
      'Alarms',
      'Deliveries by outcome',
      'Refused deliveries by verdict and source',
      'Ingest duration (ms) and body size (bytes)',
      'Queue: depth, oldest age (s), published, dead-lettered, stats not read',
      'Subscriber outcomes',
      'Subscriber duration p99 (ms)',
      'Reconciler: failed at the forge, redelivered, recovered',
    ]);
    const alarmWidget = body.widgets[0]?.properties as { alarms: string[] };
    expect(alarmWidget.alarms.sort()).toEqual(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => `\${${id}.Arn}`)
        .sort(),
    );
    expect(text).toContain('GROUP BY Outcome');
    expect(text).toContain("WHERE Verdict != 'verified' GROUP BY Verdict, Source");
    for (const stat of ['p50', 'p99']) {
      expect(text).toContain(`"IngestDuration","service","forgebridge",{"stat":"${stat}"`);
    }
    // Every `${...}` of the body is a pseudo parameter or an alarm of the template.
    for (const [, name] of text.matchAll(/\$\{([^}]+)\}/g)) {
      expect(
        name === 'AWS::Region' || resources[(name as string).replace('.Arn', '')] !== undefined,
        name,
      ).toBe(true);
    }
    expect(template.Outputs?.DashboardUrl?.Value).toEqual({
      'Fn::Sub': `https://\${AWS::Region}.console.aws.amazon.com/cloudwatch/home?region=\${AWS::Region}#dashboards/dashboard/\${OperationsDashboard}`,
    });
  });

  it('watches with every alarm a metric the functions print (namespace, name, dimension set and values) or one of AWS on a resource of the template', () => {
    // Where the functions print their metrics: the namespace and service every function is given.
    const printers = ofType('AWS::Lambda::Function').map(
      ([, resource]) => (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
    );
    expect(printers.length).toBeGreaterThanOrEqual(8);
    for (const variables of printers) {
      expect(variables.POWERTOOLS_SERVICE_NAME).toBe('forgebridge');
      if ('FORGEBRIDGE_METRIC_NAMESPACE' in variables)
        expect(variables.FORGEBRIDGE_METRIC_NAMESPACE).toBe(NAMESPACE);
    }
    const contract = metricContract();
    const alarms = [...ofType('AWS::CloudWatch::Alarm'), ...Object.entries(configured.Resources)].filter(
      ([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm',
    );
    const watchedNames = new Set<string>();
    for (const [id, resource] of alarms) {
      const watched = watchedBy(resource.Properties);
      expect(watched.length, id).toBeGreaterThan(0);
      for (const metric of watched) {
        if (metric.namespace.startsWith('AWS/')) {
          // AWS's own metric of one of the stack's resources.
          const refs = JSON.stringify(metric.dimensions.map((dimension) => dimension.Value));
          for (const [, ref] of refs.matchAll(/"(?:Ref|Fn::GetAtt)":\["?(\w+)/g)) {
            expect(resources[ref as string], `${id}: ${ref}`).toBeDefined();
          }
          continue;
        }
        expect(metric.namespace, id).toBe(NAMESPACE);
        const entry = contract.get(metric.name);
        expect(entry, `${id}: ${metric.name} is not a metric of MetricDefinitions`).toBeDefined();
        const expected = [...(entry?.dimensions ?? []), ...(entry?.service ? ['service'] : [])].sort();
        expect(metric.dimensions.map((dimension) => dimension.Name).sort(), `${id}: ${metric.name}`).toEqual(
          expected,
        );
        const service = metric.dimensions.find((dimension) => dimension.Name === 'service');
        if (service !== undefined && 'Value' in service) expect(service.Value, id).toBe('forgebridge');
        watchedNames.add(metric.name);
      }
    }
    expect([...watchedNames].sort()).toEqual(
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
  });

  it('graphs on the dashboard only metrics the functions print, each under its dimension set', () => {
    const contract = metricContract();
    const uses = metricUses();
    expect(new Set(uses.map((use) => use.name)).size).toBeGreaterThanOrEqual(12);
    for (const use of uses) {
      const entry = contract.get(use.name);
      expect(entry, `${use.where}: ${use.name} is not a metric of MetricDefinitions`).toBeDefined();
      const expected = [...(entry?.dimensions ?? []), ...(entry?.service ? ['service'] : [])].sort();
      expect([...use.dimensions].sort(), `${use.where}: ${use.name}`).toEqual(expected);
    }
  });

  it('passes cfn-lint with 0 errors, as packaged, with the HTTP API on and with every alarm variable set', async () => {
    const merged: Template = structuredClone(template);
    Object.assign(merged.Resources, configured.Resources);
    merged.Parameters = { ...merged.Parameters, ...configured.Parameters };
    const configuredFile = join(dir, 'configured-template.json');
    writeFileSync(configuredFile, JSON.stringify(merged));
    const perFile = await cfnLint([
      join(out, 'cloudformation-template-update-stack.json'),
      join(dir, 'out-http-api/cloudformation-template-update-stack.json'),
      configuredFile,
    ]);
    for (const findings of perFile) {
      expect(findings.filter((finding) => finding.Level === 'Error')).toEqual([]);
      // The only warnings are the DependsOn that osls and the per-function roles plugin write beside a GetAtt.
      expect(findings.filter((finding) => finding.Rule.Id !== 'W3005')).toEqual([]);
    }
  }, 150_000);
});

/** A packaged bundle's process: a region and credentials, and every AWS endpoint a closed loopback port. */
const BUNDLE_ENV = {
  PATH: process.env.PATH,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'package-test',
  AWS_SECRET_ACCESS_KEY: 'package-test',
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
};

describe('osls package: the ordered stream (FORGEBRIDGE_ORDERED_SUBSCRIBERS)', () => {
  it('has no stream, failure queue, mapping or ordered function in a stage without an ordered subscriber', () => {
    const text = JSON.stringify(defaultResources);
    expect(text).not.toContain('AWS::Kinesis::Stream');
    expect(text).not.toContain('OrderedFailureQueue');
    expect(text).not.toContain('OrderedStreamWritePolicy');
    expect(Object.keys(printed.default)).not.toContain('onPullRequestOrdered');
    // The ingest is told of no stream.
    const ingest = (printed.default as Record<string, { environment?: Record<string, unknown> }>).ingest;
    expect(ingest?.environment?.FORGEBRIDGE_STREAM_NAME).toBe('');
  });

  it('with one (the ci stage): a provisioned, encrypted stream of one shard, named by CloudFormation', () => {
    const streams = ofType('AWS::Kinesis::Stream');
    expect(streams.map(([name]) => name)).toEqual(['OrderedStream']);
    expect(streams[0]?.[1].Properties).toEqual({
      StreamModeDetails: { StreamMode: 'PROVISIONED' },
      ShardCount: 1,
      RetentionPeriodHours: 24,
      StreamEncryption: { EncryptionType: 'KMS', KeyId: 'alias/aws/kinesis' },
    });
    // No Name: a stream name is unique per account and region only, and two stages or stacks would collide.
    expect(streams[0]?.[1].Properties).not.toHaveProperty('Name');
    expect(functionNamed('ingest').Properties).toMatchObject({
      Environment: {
        Variables: {
          FORGEBRIDGE_STREAM_NAME: { Ref: 'OrderedStream' },
          FORGEBRIDGE_STREAM_ORDER_BY: 'resource',
        },
      },
    });
    expect(functionNamed('redrive').Properties).toMatchObject({
      Environment: { Variables: { FORGEBRIDGE_STREAM_NAME: { Ref: 'OrderedStream' } } },
    });
  });

  it("maps the ordered subscriber to it: the rule's pattern on data, 10 per shard, bisect, 3 retries, the failure queue", () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(1);
    const properties = mappings[0]?.[1].Properties ?? {};
    expect(properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': ['OrderedStream', 'Arn'] },
      FunctionName: { 'Fn::GetAtt': ['OnPullRequestOrderedLambdaFunction', 'Arn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10,
      ParallelizationFactor: 10,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 3,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] } } },
    });
    const filters = (properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      { data: { detail: { event: ['pull_request'] } } },
    ]);
    // Lambda's ranges (AWS refuses what the local poller would take).
    expect(properties.ParallelizationFactor).toBeGreaterThanOrEqual(1);
    expect(properties.ParallelizationFactor).toBeLessThanOrEqual(10);
    expect(properties.BatchSize).toBeLessThanOrEqual(10_000);
    expect(properties.MaximumRetryAttempts).not.toBe(-1);
    expect(functionNamed('onPullRequestOrdered').Properties.Handler).toBe(
      'functions/ordered/handler.handler',
    );
  });

  it('grants the mapping its reads, the failure queue its one write, and the writers kinesis:PutRecord on the stream only', () => {
    const role = statementsOf('OnPullRequestOrderedIamRoleLambdaExecution');
    const onStream = role.filter((statement) => JSON.stringify(statement.Resource).includes('OrderedStream'));
    expect(onStream.flatMap(actions).sort()).toEqual(
      [
        'kinesis:DescribeStream',
        'kinesis:DescribeStreamSummary',
        'kinesis:GetRecords',
        'kinesis:GetShardIterator',
        'kinesis:ListShards',
        'kinesis:ListStreams',
      ].sort(),
    );
    expect(role.filter((statement) => actions(statement).includes('sqs:SendMessage'))).toEqual([
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage'],
        Resource: { 'Fn::GetAtt': ['OrderedFailureQueue', 'Arn'] },
      },
    ]);
    expect(JSON.stringify(role)).not.toContain('kinesis:PutRecord');
    const write = resources.OrderedStreamWritePolicy?.Properties as {
      Roles: unknown[];
      PolicyDocument: { Statement: Statement[] };
    };
    expect(write.Roles).toEqual([
      { Ref: 'IngestIamRoleLambdaExecution' },
      { Ref: 'RedriveIamRoleLambdaExecution' },
    ]);
    expect(write.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'kinesis:PutRecord', Resource: { 'Fn::GetAtt': ['OrderedStream', 'Arn'] } },
    ]);
  });

  it('alarms on the first record in the failure queue, to the alarm topic', () => {
    expect(resources.OrderedFailureAlarm?.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['OrderedFailureQueue', 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: [{ Ref: 'AlarmTopic' }],
    });
    expect(resources.OrderedFailureQueue?.Properties).toMatchObject({ SqsManagedSseEnabled: true });
  });
});

describe('osls package: a function as it is deployed', () => {
  it('runs the packaged ingest (its own minified bundle, unzipped) as Lambda would: 401 for a wrong signature, 400 without a delivery id', async () => {
    const unpacked = join(dir, 'ingest-unpacked');
    await run('python3', ['-m', 'zipfile', '-e', join(out, 'ingest.zip'), unpacked]);
    const bundle = join(unpacked, 'functions/ingest/handler.mjs');
    // No AWS call is reached: a refused delivery is answered before the dedupe table or the bus.
    const runner = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
      const context = { functionName: 'ingest', awsRequestId: 'r-1', getRemainingTimeInMillis: () => 10000 };
      const event = (headers) => ({
        version: '2.0', routeKey: '$default', rawPath: '/', rawQueryString: '',
        headers: { 'content-type': 'application/json', 'x-github-event': 'issues', ...headers },
        requestContext: { http: { method: 'POST', path: '/' } },
        body: '{"action":"opened"}', isBase64Encoded: false,
      });
      const wrong = await handler(event({ 'x-github-delivery': 'd-1', 'x-hub-signature-256': 'sha256=' + '0'.repeat(64) }), context);
      const noId = await handler(event({ 'x-hub-signature-256': 'sha256=' + '0'.repeat(64) }), context);
      console.log(JSON.stringify({ wrong, noId }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', runner], {
      cwd: unpacked,
      env: {
        ...BUNDLE_ENV,
        IS_OFFLINE: 'true',
        FORGEBRIDGE_FORGE: 'github',
        FORGEBRIDGE_BUS_NAME: 'bus',
        FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
        FORGEBRIDGE_WEBHOOK_SECRET: 'package-test-secret',
        FORGEBRIDGE_LOG_LEVEL: 'WARN',
      },
      timeout: 30_000,
    });
    const answers = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<
      'wrong' | 'noId',
      { statusCode: number; body: string }
    >;
    expect(answers.wrong.statusCode).toBe(401);
    expect(JSON.parse(answers.wrong.body).error.code).toBe('invalid_signature');
    expect(answers.noId.statusCode).toBe(400);
    // Its own bundle: nothing imported from a chunk or a package beside it.
    expect(readFileSync(bundle, 'utf8')).not.toMatch(/from\s*["']\.\.?\//);
  });

  it('loads every packaged function alone, each from its own zip, with the environment the template gives it', async () => {
    const loaded: Record<string, string> = {};
    for (const [key, definition] of Object.entries(printed.default)) {
      const resource = functionNamed(key);
      const unpacked = join(dir, `unpacked-${key}`);
      await run('python3', ['-m', 'zipfile', '-e', join(out, `${key}.zip`), unpacked]);
      const [module, exported] = [
        definition.handler.slice(0, definition.handler.lastIndexOf('.')),
        definition.handler.slice(definition.handler.lastIndexOf('.') + 1),
      ];
      const bundle = join(unpacked, `${module}.mjs`);
      // A reference to another resource (a table, the bus) is a name once deployed: any name does here.
      const variables = Object.fromEntries(
        Object.entries(
          ((resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
            ?.Variables ?? {}) as Record<string, unknown>,
        ).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : `deployed-${name.toLowerCase()}`,
        ]),
      );
      const { stdout } = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)}); console.log(typeof m[${JSON.stringify(exported)}]);`,
        ],
        {
          cwd: unpacked,
          env: {
            ...BUNDLE_ENV,
            ...variables,
          },
          timeout: 30_000,
        },
      );
      loaded[key] = stdout.trim().split('\n').at(-1) ?? '';
    }
    expect(Object.keys(loaded).length).toBeGreaterThanOrEqual(9);
    expect(loaded).toEqual(Object.fromEntries(Object.keys(loaded).map((key) => [key, 'function'])));
  });
});
