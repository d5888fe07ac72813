// IAM proven, not assumed. DynamoDB Local, s3rver and serverless-offline check no IAM, so while the end-to-end
// suites run, a recording proxy in front of each endpoint the functions reach writes down every AWS call each
// function makes: the IAM action and the resource ARN as the request names them (local-stack/aws-call-recorder.ts),
// attributed by the app id each function puts in the SDK's User-Agent. This file, in the last vitest project, reads
// those calls, packages the template (`osls package --stage ci`, as a deploy would build it), resolves each
// function's role with the ARNs the local stack used (each logical id mapped onto the local stack's resource of the
// same role, never by name: the names differ by stage), and evaluates every distinct (function, action, resource)
// with @cloud-copilot/iam-simulate: any call its role would deny fails here, naming function, action and resource.
// It prints a report: the calls checked, and every granted action no call used, each kept in KEPT_GRANTS with its
// reason.
//
// A partial run (`npm test -- <files>`, vitest alone) evaluates whatever calls it recorded, but only a full run
// (`npm test` with no arguments, which sets FORGEBRIDGE_TEST_SCOPE=full) also requires a call of every function and
// judges the unused grants: a partial run leaves functions and paths out by design. With no call recorded at all
// (the e2e project did not run in this run, and FORGEBRIDGE_TEST_RUN_DIR names no earlier run's folder), it fails.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AwsCallLogLine, AwsCallRecord, AwsStackRecord } from '../../local-stack/aws-call-recorder.js';
import {
  type IntrinsicContext,
  type ResolvedResource,
  resolveIntrinsics,
} from '../helpers/cfn-intrinsics.js';
import {
  type FunctionRole,
  functionRoles,
  listOf,
  type PolicyDocument,
  type PolicyStatement,
  statementsOf,
} from '../helpers/function-roles.js';
import { type CfnTemplate, packagedTemplate } from '../helpers/packaged-template.js';
import { awsCallLogOf } from '../helpers/stack.js';

/** The stage packaged: any but `local` (whose template adds the recorder). */
const STAGE = 'ci';
const FULL_RUN = process.env.FORGEBRIDGE_TEST_SCOPE === 'full';
/**
 * Functions of the local stage only (local-stack/recorder.yml, bus-twin.yml, commenter.yml): never packaged, so their
 * calls are not evaluated.
 */
const LOCAL_ONLY = new Set(['recorder', 'onPullRequestOnBus', 'onPullRequestOpened']);

/** The template's logical ids that the local stack has a counterpart of, by the key of its `names`. */
const COUNTERPARTS: Readonly<Record<string, string>> = {
  Bus: 'bus',
  DedupeTable: 'dedupeTable',
  TokenTable: 'tokenTable',
  DeliveriesTable: 'deliveriesTable',
  ClaimCheckBucket: 'bucket',
  OrderedStream: 'orderedStream',
};

/** A granted action that no recorded call uses, kept on purpose. */
interface KeptGrant {
  action: string;
  /** The functions it is kept for; every function when left out. */
  functions?: readonly string[];
  /** The granted resource (as resolved); any when left out. */
  resource?: RegExp;
  reason: string;
  /**
   * The suites reach it in some runs and not in others (timing): a run that used it does not make the entry stale.
   * Without it, an entry a call used fails the run, so the table holds no exception that is not one.
   */
  sometimes?: true;
}

/** Every grant no recorded call of a full run uses, with the reason it stays. */
const KEPT_GRANTS: readonly KeptGrant[] = [
  ...[
    'kinesis:GetRecords',
    'kinesis:GetShardIterator',
    'kinesis:DescribeStream',
    'kinesis:DescribeStreamSummary',
    'kinesis:ListShards',
    'kinesis:ListStreams',
  ].map((action) => ({
    action,
    functions: ['onPullRequestOrdered'],
    reason:
      "Lambda's poller of the event-source mapping reads the stream with the ordered subscriber's role; the " +
      "function's code never calls Kinesis, and locally the stack's poller reads kinesalite instead",
  })),
  {
    action: 'sqs:SendMessage',
    functions: ['onPullRequestOrdered'],
    reason:
      "the event-source mapping sends a failed record's batch details to its on-failure destination with the " +
      "function's role; locally the stack's poller appends them to a file",
  },
  {
    action: 's3:GetObject',
    functions: ['onPullRequestOrdered'],
    reason:
      'a claim-checked pull request delivery (over the record limit) is read back from the bucket; the ordered ' +
      'suite sends none that large',
  },
  {
    action: 'logs:CreateLogGroup',
    reason:
      "the Lambda service writes the function's logs with its role; no function code calls CloudWatch Logs",
  },
  {
    action: 'logs:CreateLogStream',
    reason:
      "the Lambda service writes the function's logs with its role; no function code calls CloudWatch Logs",
  },
  {
    action: 'logs:PutLogEvents',
    reason:
      "the Lambda service writes the function's logs with its role; no function code calls CloudWatch Logs",
  },
  {
    action: 'xray:PutTraceSegments',
    reason:
      'active tracing: the Lambda runtime sends the trace segments with the role; offline there is no tracing',
  },
  {
    action: 'xray:PutTelemetryRecords',
    reason:
      'active tracing: the Lambda runtime sends its telemetry with the role; offline there is no tracing',
  },
  {
    action: 'ssm:GetParameter',
    reason:
      'secrets are read from SSM Parameter Store at a cold start on AWS; offline they come from the environment ' +
      '(FORGEBRIDGE_WEBHOOK_SECRET*, FORGEBRIDGE_OAUTH_CLIENT_SECRET), so no call is recorded',
  },
  {
    action: 'dynamodb:GetItem',
    functions: ['ingest'],
    resource: /:table\/[^/]+-dedupe$/,
    reason:
      'Powertools Idempotency reads a dedupe record with GetItem only when a refused conditional write comes back ' +
      'without the existing item; DynamoDB returns it with the refusal',
  },
  {
    action: 'dynamodb:DeleteItem',
    functions: ['ingest'],
    resource: /:table\/[^/]+-dedupe$/,
    reason:
      'Powertools Idempotency deletes the in-progress record when the handler throws: a delivery neither published ' +
      'nor queued (a 5xx), which the stack suites never cause (test/integration/aws/ingest does, in process)',
  },
  {
    action: 'dynamodb:PutItem',
    functions: ['redrive'],
    resource: /:table\/[^/]+-dedupe$/,
    reason:
      'the retrier writes a completed dedupe record only for a queued delivery whose ingest record is gone (its TTL ' +
      'ran out while it waited); the suites publish queued deliveries within seconds',
  },
  {
    action: 's3:GetObject',
    functions: ['redrive'],
    reason:
      "the retrier reads a queued delivery's body from the claim-check bucket when it was too large for the queue " +
      'record; the suites queue small pushes',
  },
  {
    action: 's3:PutObject',
    functions: ['redrive'],
    reason:
      'the retrier claim-checks a queued delivery too large for one bus entry; the suites queue small pushes',
  },
  {
    action: 'dynamodb:DeleteItem',
    functions: ['reconcile'],
    resource: /:table\/[^/]+-dedupe$/,
    reason:
      'the reconciler publishes only a delivery too large for the ingest itself, taking and completing its dedupe ' +
      "record as the ingest does (DeleteItem when that publish fails); the stand-ins' lost deliveries are small",
  },
  {
    action: 'events:PutEvents',
    functions: ['reconcile'],
    reason:
      'the reconciler publishes only a delivery too large for the ingest itself; the rest are redelivered by the ' +
      "forge and published by the ingest, as the stand-ins' are",
  },
  {
    action: 's3:PutObject',
    functions: ['reconcile'],
    reason:
      'the reconciler claim-checks the deliveries too large for the ingest it publishes itself; the suites have none',
  },
  {
    action: 'dynamodb:PutItem',
    functions: ['onIssuesOpened', 'reconcile', 'refresh'],
    resource: /:table\/[^/]+-tokens$/,
    reason:
      'a token is written by whichever function finds it missing or within its refresh window first: in the ' +
      'suites usually the example subscriber, but when the refresh or the reconciler got there first it only reads',
    sometimes: true,
  },
  {
    action: 'dynamodb:UpdateItem',
    functions: ['onIssuesOpened', 'reconcile', 'refresh'],
    resource: /:table\/[^/]+-tokens$/,
    reason:
      "a token's refresh lease is taken by whichever function finds it within its refresh window first: in the " +
      'suites usually the example subscriber, but when the refresh or the reconciler got there first it only reads',
    sometimes: true,
  },
];

/** One distinct call to evaluate, with the stack whose names resolve its role. */
interface DistinctCall {
  function: string;
  action: string;
  resource: string;
  stack: AwsStackRecord;
  /** How many times it was recorded. */
  count: number;
}

/** A granted (action, resource) pair of a function's role, resolved. */
interface Grant {
  function: string;
  action: string;
  resource: string;
}

let lines: AwsCallLogLine[] = [];
let calls: AwsCallRecord[] = [];
let distinct: DistinctCall[] = [];
let roles: FunctionRole[] = [];
let template: CfnTemplate;
const logFile = awsCallLogOf(process.env.FORGEBRIDGE_TEST_RUN_DIR ?? join('.tmp', 'no-test-run-dir'));

beforeAll(async () => {
  if (existsSync(logFile)) {
    lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AwsCallLogLine);
  }
  calls = lines.filter((line): line is AwsCallRecord => line.kind === 'call');
  const stacks = new Map(
    lines.filter((line): line is AwsStackRecord => line.kind === 'stack').map((line) => [line.stack, line]),
  );
  const byKey = new Map<string, DistinctCall>();
  for (const call of calls) {
    if (call.function === null || LOCAL_ONLY.has(call.function)) continue;
    const key = `${call.function} ${call.action} ${call.resource}`;
    const seen = byKey.get(key);
    if (seen !== undefined) {
      seen.count += 1;
      continue;
    }
    const stack = stacks.get(call.stack);
    if (stack === undefined)
      throw new Error(`call of stack ${call.stack} without its stack line in ${logFile}`);
    byKey.set(key, {
      function: call.function,
      action: call.action,
      resource: call.resource,
      stack,
      count: 1,
    });
  }
  distinct = [...byKey.values()].sort((a, b) =>
    `${a.function} ${a.action} ${a.resource}`.localeCompare(`${b.function} ${b.action} ${b.resource}`),
  );
  ({ template } = await packagedTemplate(STAGE));
  roles = functionRoles(template);
}, 180_000);

/** The template resolved against one local stack: each counterpart's name and ARN as that stack made them. */
function contextOf(stack: AwsStackRecord): IntrinsicContext {
  const resources: Record<string, ResolvedResource> = {};
  for (const [id, key] of Object.entries(COUNTERPARTS)) {
    const name = stack.names[key];
    const type = template.Resources[id]?.Type;
    if (name === undefined || type === undefined) continue;
    const arn = {
      'AWS::DynamoDB::Table': `arn:aws:dynamodb:${stack.region}:${stack.account}:table/${name}`,
      'AWS::Events::EventBus': `arn:aws:events:${stack.region}:${stack.account}:event-bus/${name}`,
      'AWS::S3::Bucket': `arn:aws:s3:::${name}`,
      'AWS::Kinesis::Stream': `arn:aws:kinesis:${stack.region}:${stack.account}:stream/${name}`,
    }[type];
    if (arn === undefined) throw new Error(`no ARN rule for ${id} (${type})`);
    resources[id] = { ref: name, attributes: { Arn: arn, Name: name } };
  }
  // The failure queue has no local counterpart (the local mapping writes a file): its ARN as AWS would make it.
  const failures = `forgebridge-${STAGE}-ordered-failures`;
  resources.OrderedFailureQueue = {
    ref: `https://sqs.${stack.region}.amazonaws.com/${stack.account}/${failures}`,
    attributes: { Arn: `arn:aws:sqs:${stack.region}:${stack.account}:${failures}`, QueueName: failures },
  };
  return {
    partition: 'aws',
    region: stack.region,
    account: stack.account,
    stackName: `forgebridge-${STAGE}`,
    resources,
  };
}

function roleOf(name: string): FunctionRole {
  const role = roles.find((candidate) => candidate.key === name);
  if (role === undefined) throw new Error(`no packaged function "${name}"`);
  return role;
}

/** The role's inline policies, resolved against the stack. */
function policiesOf(role: FunctionRole, stack: AwsStackRecord): { name: string; policy: PolicyDocument }[] {
  const context = contextOf(stack);
  return role.policies.map((policy, index) => ({
    name: String(resolveIntrinsics(policy.name, context) ?? `${role.roleId}-${index}`),
    policy: resolveIntrinsics(policy.document, context) as PolicyDocument,
  }));
}

async function decide(
  call: DistinctCall,
  policies: { name: string; policy: PolicyDocument }[],
): Promise<string> {
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${call.stack.account}:role/${roleOf(call.function).roleId}`,
        action: call.action,
        resource: { resource: call.resource, accountId: call.stack.account },
        contextVariables: {},
      },
      identityPolicies: policies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  return result.resultType === 'error' ? `error: ${JSON.stringify(result.errors)}` : result.overallResult;
}

/**
 * Whether the function's packaged environment names the resource: by a reference to its logical id, or by the name
 * the template gives it. Offline, serverless-offline hands every function the local stack's whole environment
 * (`--localEnvironment`), so a function may reach a table its deployed self is never told of; such a call cannot be
 * made on AWS, and is reported apart instead of judged.
 */
function packagedEnvironmentNames(role: FunctionRole, resource: string, stack: AwsStackRecord): boolean {
  const context = contextOf(stack);
  const id = Object.keys(context.resources).find((candidate) => {
    const arn = context.resources[candidate]?.attributes.Arn;
    return arn !== undefined && (resource === arn || resource.startsWith(`${arn}/`));
  });
  if (id === undefined) return true;
  const environment = JSON.stringify(
    (template.Resources[role.functionId]?.Properties?.Environment as { Variables?: unknown } | undefined)
      ?.Variables ?? {},
  );
  const named = template.Resources[id]?.Properties;
  const names = [named?.TableName, named?.Name, named?.BucketName].filter(
    (name): name is string => typeof name === 'string',
  );
  return (
    new RegExp(`"Ref":"${id}"|"Fn::GetAtt":\\["${id}"|\\$\\{${id}[.}]`).test(environment) ||
    names.some((name) => environment.includes(name))
  );
}

/** An IAM wildcard pattern (`*`, `?`) as a regular expression. */
function pattern(glob: string, flags = ''): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, flags);
}

/** Every (action, resource) a function's role allows, resolved. */
function grantsOf(role: FunctionRole, stack: AwsStackRecord): Grant[] {
  return policiesOf(role, stack).flatMap(({ policy }) =>
    statementsOf(policy)
      .filter((statement) => statement.Effect === 'Allow')
      .flatMap((statement) =>
        listOf(statement.Action).flatMap((action) =>
          listOf(statement.Resource).map((resource) => ({
            function: role.key ?? role.functionId,
            action: String(action),
            resource: String(resource),
          })),
        ),
      ),
  );
}

/** "1 call", "3 calls". */
function times(count: number): string {
  return `${count} call${count === 1 ? '' : 's'}`;
}

/**
 * The distinct calls one line each, a function's objects of one bucket prefix as one line (each claim check is an
 * object of its own).
 */
function summary(calls: readonly DistinctCall[]): string[] {
  const lines = new Map<string, { count: number; resources: number }>();
  for (const call of calls) {
    const resource = call.resource.replace(/^(arn:aws:s3:::[^/]+\/[^/]+\/).+$/, '$1…');
    const key = `${call.function}: ${call.action} on ${resource}`;
    const line = lines.get(key) ?? { count: 0, resources: 0 };
    lines.set(key, { count: line.count + call.count, resources: line.resources + 1 });
  }
  return [...lines].map(
    ([key, { count, resources }]) =>
      `  ${key} (${times(count)}${resources > 1 ? `, ${resources} objects` : ''})`,
  );
}

function describeGrant(grant: Grant): string {
  return `${grant.function}: ${grant.action} on ${grant.resource}`;
}

describe('IAM: the AWS calls of every function in the end-to-end suites, against its role in the packaged template', () => {
  it('has the calls the end-to-end suites recorded, each one understood', () => {
    expect(
      calls.length,
      `no AWS call recorded in ${logFile}: the e2e project records them; run it in the same run (npm test)`,
    ).toBeGreaterThan(0);
    const unknown = calls.filter((call) => call.action.startsWith('unknown:'));
    expect(unknown.map((call) => `${call.function}: ${call.operation}`)).toEqual([]);
  });

  it('attributes every call to a function of the packaged template, which names itself in the User-Agent', () => {
    expect(roles.filter((role) => role.key === undefined).map((role) => role.functionId)).toEqual([]);
    const packaged = new Set(roles.map((role) => role.key));
    const recorded = new Set(calls.flatMap((call) => (call.function === null ? [] : [call.function])));
    expect([...recorded].filter((name) => !packaged.has(name) && !LOCAL_ONLY.has(name))).toEqual([]);
  });

  it('allows every distinct (function, action, resource) recorded', async () => {
    const denied: string[] = [];
    const offlineOnly: string[] = [];
    for (const call of distinct) {
      const role = roleOf(call.function);
      const decision = await decide(call, policiesOf(role, call.stack));
      if (decision === 'Allowed') continue;
      const line = `${call.function} may not ${call.action} on ${call.resource} (${decision}, ${times(call.count)})`;
      if (packagedEnvironmentNames(role, call.resource, call.stack)) denied.push(line);
      else offlineOnly.push(line);
    }
    const recorder = calls.filter((call) => call.function !== null && LOCAL_ONLY.has(call.function)).length;
    const anonymous = calls.filter((call) => call.function === null).length;
    console.log(
      [
        `IAM: ${distinct.length} distinct (function, action, resource) calls checked against the roles of stage ` +
          `"${STAGE}": ${distinct.length - denied.length} allowed, ${denied.length} denied`,
        `  (${calls.length} calls recorded; not evaluated: ${recorder} of the local-only recorder, ${anonymous} ` +
          'without our app id)',
        ...summary(distinct),
        ...(offlineOnly.length === 0
          ? []
          : [
              'Made offline only (the packaged environment names no such resource: the local stack gives every ' +
                'function its whole environment):',
              ...offlineOnly.map((line) => `  ${line}`),
            ]),
      ].join('\n'),
    );
    expect(denied, `denied by the packaged roles:\n${denied.join('\n')}`).toEqual([]);
  });

  it('denies each of those calls once its action is taken out of the role (the evaluation can fail)', async () => {
    const stillAllowed: string[] = [];
    for (const call of distinct) {
      const without = policiesOf(roleOf(call.function), call.stack).map(({ name, policy }) => ({
        name,
        policy: {
          ...policy,
          Statement: statementsOf(policy).flatMap((statement): PolicyStatement[] => {
            const actions = listOf(statement.Action).filter(
              (action) => !pattern(String(action), 'i').test(call.action),
            );
            return actions.length === 0 ? [] : [{ ...statement, Action: actions }];
          }),
        },
      }));
      const decision = await decide(call, without);
      if (decision !== 'ImplicitlyDenied')
        stillAllowed.push(`${call.function}: ${call.action} (${decision})`);
    }
    expect(distinct.length).toBeGreaterThan(0);
    expect(stillAllowed).toEqual([]);
  });

  if (FULL_RUN) {
    it('recorded calls of every function of serverless.yml (the local recorder aside)', () => {
      const recorded = new Set(distinct.map((call) => call.function));
      expect(roles.map((role) => role.key).filter((key) => key !== undefined && !recorded.has(key))).toEqual(
        [],
      );
    });
  }

  it(
    FULL_RUN
      ? 'uses every granted action, or keeps it with its reason (a full run)'
      : 'keeps only grants the packaged roles hold (a partial run: unused grants are listed, not judged)',
    () => {
      const stack = distinct[0]?.stack;
      expect(stack, 'no evaluated call to resolve the roles with').toBeDefined();
      if (stack === undefined) return;
      const grants = roles.flatMap((role) => grantsOf(role, stack));
      const unused = grants.filter(
        (grant) =>
          !distinct.some(
            (call) =>
              call.function === grant.function &&
              pattern(grant.action, 'i').test(call.action) &&
              pattern(grant.resource).test(call.resource),
          ),
      );
      const keptFor = (grant: Grant) =>
        KEPT_GRANTS.find(
          (kept) =>
            kept.action === grant.action &&
            (kept.functions === undefined || kept.functions.includes(grant.function)) &&
            (kept.resource === undefined || kept.resource.test(grant.resource)),
        );
      const groups = new Map<KeptGrant | undefined, Grant[]>();
      for (const grant of unused) groups.set(keptFor(grant), [...(groups.get(keptFor(grant)) ?? []), grant]);
      console.log(
        [
          `Granted, used by no recorded call: ${unused.length} (function, action, resource) grants`,
          ...[...groups].map(([kept, covered]) => {
            const functions = [...new Set(covered.map((grant) => grant.function))];
            const actions = [...new Set(covered.map((grant) => grant.action))].join(', ');
            const who = functions.length === roles.length ? 'every function' : functions.join(', ');
            return `  ${actions} (${who}): ${kept?.reason ?? `NO REASON KEPT: ${covered.map(describeGrant).join('; ')}`}`;
          }),
        ].join('\n'),
      );
      // Every kept grant is one the roles still hold.
      expect(KEPT_GRANTS.filter((kept) => !grants.some((grant) => keptFor(grant) === kept))).toEqual([]);
      if (FULL_RUN) {
        expect(
          unused.filter((grant) => keptFor(grant) === undefined).map(describeGrant),
          'granted but never used: take the grant out, or keep it in KEPT_GRANTS with its reason',
        ).toEqual([]);
        // A kept grant that a call now uses is no longer an exception.
        expect(
          KEPT_GRANTS.filter(
            (kept) => kept.sometimes === undefined && !unused.some((grant) => keptFor(grant) === kept),
          ).map((kept) => `${kept.functions?.join(', ') ?? 'every function'}: ${kept.action}`),
          'kept as unused, but a recorded call used it: take it out of KEPT_GRANTS',
        ).toEqual([]);
      }
    },
  );
});
