// `osls package` builds the CloudFormation template offline (no AWS credentials, HOME in a temp dir); this
// test reads that template and checks every resource, rule pattern and IAM statement in it. `osls print` shows
// that the local stage's recording subscriber is declared for that stage and for no other.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

let dir: string;
let workFolder: string;
let resources: Record<string, Resource>;
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
  const home = join(dir, 'home');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    // Its own build folder: serverless-esbuild deletes it when done, and must not touch a running stack's.
    FORGEBRIDGE_ESBUILD_WORK_FOLDER: workFolder,
  };
  const osls = (args: string[]) =>
    run(join(root, 'node_modules/.bin/osls'), args, { cwd: root, env, timeout: 150_000 });
  const print = async (stageArgs: string[]) =>
    JSON.parse((await osls(['print', ...stageArgs, '--path', 'functions', '--format', 'json'])).stdout);
  const [, defaultStage, localStage] = await Promise.all([
    osls(['package', '--package', join(dir, 'out'), '--stage', 'ci']),
    print([]),
    print(['--stage', 'local']),
  ]);
  printed = { default: defaultStage, local: localStage };
  const template = JSON.parse(
    readFileSync(join(dir, 'out/cloudformation-template-update-stack.json'), 'utf8'),
  );
  resources = template.Resources;
}, 180_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  if (workFolder !== undefined) rmSync(join(root, workFolder), { recursive: true, force: true });
});

describe('osls package (offline, no credentials)', () => {
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

  it('runs every function on nodejs22.x with its own role', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions.map(([name]) => name).sort()).toEqual(
      [
        'IngestLambdaFunction',
        'OnEverythingLambdaFunction',
        'OnIssuesLambdaFunction',
        'OnIssuesOpenedLambdaFunction',
        'OnIssuesPrefixLambdaFunction',
        'OnPushLambdaFunction',
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
    expect(Object.keys(printed.local).sort()).toEqual([...deployed, 'recorder'].sort());
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

  it('routes POST /webhooks of an HTTP API (payload 2.0) to the ingest', () => {
    expect(resources.HttpApiRoutePostWebhooks?.Properties.RouteKey).toBe('POST /webhooks');
    expect(resources.HttpApiIntegrationIngest?.Properties.PayloadFormatVersion).toBe('2.0');
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

  it('routes POST /webhooks/{source} to the ingest beside the default /webhooks', () => {
    expect(resources.HttpApiRoutePostWebhooksSourceVar?.Properties.RouteKey).toBe('POST /webhooks/{source}');
  });

  it('alarms on one dead-lettered delivery', () => {
    const alarm = resources.DeadLetteredDeliveriesAlarm;
    expect(alarm?.Type).toBe('AWS::CloudWatch::Alarm');
    expect(alarm?.Properties).toMatchObject({
      MetricName: 'DeadLetteredDeliveries',
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on one delivery the reconciler gave up', () => {
    expect(resources.ReconcileGaveUpDeliveriesAlarm?.Properties).toMatchObject({
      MetricName: 'ReconcileGaveUpDeliveries',
      Namespace: 'forgebridge/ci',
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
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
        .filter((action) => !action.startsWith('logs:'))
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
      'OnEverythingIamRoleLambdaExecution',
    ]) {
      expect(grants(role)).toEqual(['s3:GetObject']);
    }
    const ingest = statementsOf('IngestIamRoleLambdaExecution');
    const put = ingest.find((statement) => actions(statement).includes('events:PutEvents'));
    expect(put?.Resource).toEqual({ 'Fn::GetAtt': ['Bus', 'Arn'] });
    const ssm = ingest.find((statement) => actions(statement).includes('ssm:GetParameter'));
    expect(JSON.stringify(ssm?.Resource)).toContain(':parameter/forgebridge/ci/webhook-secret');
  });

  it('grants the delivery log by name: PutItem to the ingest, UpdateItem to the reporting subscriber, nothing else', () => {
    const logTable = { 'Fn::GetAtt': ['DeliveriesTable', 'Arn'] };
    const onLog = (role: string) =>
      statementsOf(role).filter((statement) =>
        JSON.stringify(statement.Resource).includes('DeliveriesTable'),
      );
    const ingest = onLog('IngestIamRoleLambdaExecution');
    expect(ingest).toHaveLength(1);
    expect(actions(ingest[0] as Statement)).toEqual(['dynamodb:PutItem']);
    expect(ingest[0]?.Resource).toEqual(logTable);
    const subscriber = onLog('OnIssuesOpenedIamRoleLambdaExecution');
    expect(subscriber).toHaveLength(1);
    expect(actions(subscriber[0] as Statement)).toEqual(['dynamodb:UpdateItem']);
    expect(subscriber[0]?.Resource).toEqual(logTable);
    const reconciler = onLog('ReconcileIamRoleLambdaExecution');
    expect(reconciler).toHaveLength(1);
    expect(actions(reconciler[0] as Statement)).toEqual(['dynamodb:PutItem']);
    for (const role of [
      'RedriveIamRoleLambdaExecution',
      'RefreshIamRoleLambdaExecution',
      'OnIssuesIamRoleLambdaExecution',
      'OnEverythingIamRoleLambdaExecution',
    ]) {
      expect(onLog(role), role).toEqual([]);
    }
    expect(resources.DeliveriesTable?.Properties.TableName).toBe('forgebridge-ci-deliveries');
  });

  it('turns the delivery log on with the payload off and 14 days, for the ingest and the reporting subscriber', () => {
    const variables = (name: string) =>
      (functionNamed(name).Properties.Environment as { Variables: Record<string, string> }).Variables;
    expect(variables('ingest')).toMatchObject({
      FORGEBRIDGE_DELIVERIES_TABLE: 'forgebridge-ci-deliveries',
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
      FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'false',
    });
    expect(variables('onIssuesOpened')).toMatchObject({
      FORGEBRIDGE_DELIVERIES_TABLE: 'forgebridge-ci-deliveries',
      FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '14',
    });
    expect(variables('onIssuesOpened').FORGEBRIDGE_DELIVERY_LOG_PAYLOAD).toBeUndefined();
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
