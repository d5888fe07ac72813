// cdk-nag's AwsSolutions pack over the packaged template: `osls package --stage ci` (test/helpers/packaged-template.ts,
// shared with the IAM test in one run), read into a CDK app with CfnInclude, the pack added as a validation plugin
// (cdk-nag 3: `Validations.of(app).addPlugins(...)`), `app.synth()` into a temp dir. Every finding must be one that
// SUPPRESSIONS below names, with its reason, or a defect OPEN_DEFECTS lists as reported and not yet fixed; an entry
// of either that no finding matches any more fails too, so neither table keeps an exception that is not one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { CfnInclude } from 'aws-cdk-lib/cloudformation-include';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagedTemplate } from '../../helpers/packaged-template.js';

/** One kind of finding accepted, with the reason. */
interface Suppression {
  /** The rule, and for IAM5 the finding (`AwsSolutions-IAM5[Resource::…]`), as cdk-nag names it. */
  rule: RegExp;
  /** The logical ids of the template it covers. */
  resources: RegExp;
  reason: string;
}

/** Every function's own role (serverless-iam-roles-per-function), not osls's default one. */
const FUNCTION_ROLES = /^.+IamRoleLambdaExecution$/;

const SUPPRESSIONS: readonly Suppression[] = [
  {
    rule: /^AwsSolutions-IAM5\[Resource::\*\]$/,
    resources: FUNCTION_ROLES,
    reason:
      'X-Ray: xray:PutTraceSegments and xray:PutTelemetryRecords take no resource-level permissions; granted on "*" ' +
      'or not at all (active tracing)',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:\/aws\/lambda\/[^*]+:\*:\*\]$/,
    resources: FUNCTION_ROLES,
    reason:
      "the function's own log group, and in it the log streams Lambda creates per execution environment (their names " +
      'are not known before), as osls writes the statement',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::<ClaimCheckBucket\.Arn>\/deliveries\/\*\]$/,
    resources: FUNCTION_ROLES,
    reason:
      "claim checks: one object per delivery, named by the delivery, under the deliveries/ prefix of the stack's own " +
      'bucket; the grant is scoped to that prefix',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter\/[^*]+\/oauth\/\*\]$/,
    resources: FUNCTION_ROLES,
    reason:
      "the OAuth clients' secrets: each client of config/<stage>.yml names its own SecureString parameter under the " +
      "stage's oauth path, and the grant is scoped to that path (GetParameter only)",
  },
  {
    rule: /^AwsSolutions-S1$/,
    resources: /^ServerlessDeploymentBucket$/,
    reason:
      "osls's deployment bucket holds the packaged artifacts only, written by the deploying principal (CloudTrail " +
      'records that); server access logs would need a bucket of their own',
  },
  {
    rule: /^AwsSolutions-S1$/,
    resources: /^ClaimCheckBucket$/,
    reason:
      "claim checks are private, encrypted, written and read only by the functions' roles and expire within days; " +
      "server access logs would need a second bucket; CloudTrail data events are the account owner's choice",
  },
  {
    rule: /^AwsSolutions-L1$/,
    resources: /LambdaFunction$/,
    reason:
      'nodejs22.x is the Node the project pins, builds for and tests on (the node@22 dev dependency, DESIGN.md); a ' +
      'newer runtime is an upgrade of both, tested, not a template edit',
  },
  {
    rule: /^AwsSolutions-SQS3$/,
    resources: /^SubscriberDeadLetterQueue$/,
    reason:
      "it is the dead-letter queue of every subscriber rule's target (EventBridge DeadLetterConfig); cdk-nag only " +
      'recognises an SQS redrive policy as such',
  },
  {
    rule: /^AwsSolutions-SQS3$/,
    resources: /^OrderedFailureQueue$/,
    reason:
      "it is the ordered subscribers' failure destination (the Kinesis event-source mapping's DestinationConfig " +
      'OnFailure): what lands there is the end of the line, alarmed on, not retried; cdk-nag only recognises an SQS ' +
      'redrive policy as a dead-letter queue',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::\*\]$/,
    resources: /^ReplayOperatorPolicy$/,
    reason:
      "events:ListRuleNamesByTarget (how replay --since finds a subscriber's rules by their target) takes no " +
      'resource-level permission: "*" or nothing; it lists rule names only',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::<DeliveriesTable\.Arn>\/index\/\*\]$/,
    resources: /^ReplayOperatorPolicy$/,
    reason: "the delivery log's own indexes (by-day), read by the log commands: scoped to the stage's table",
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:replay\/forgebridge-\*\]$/,
    resources: /^ReplayOperatorPolicy$/,
    reason:
      'the archive replays the CLI starts and follows: each named when it starts (forgebridge-<subscriber or ' +
      'delivery>-<time>), so only the prefix is known',
  },
  {
    rule: /^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:forgebridge-[a-z0-9-]+-\*\]$/,
    resources: /^ReplayOperatorPolicy$/,
    reason:
      "the stage's own functions (forgebridge-<stage>-*): any subscriber may be the one an operator replays to; " +
      'no other stage and no other service is matched',
  },
  {
    rule: /^AwsSolutions-DDB3$/,
    resources: /^DeliveriesTable$/,
    reason:
      'the delivery log is an operational record with a TTL (14 days), kept on stack removal; losing it loses ' +
      'history, never a delivery; the queue (DedupeTable) and the tokens have point-in-time recovery',
  },
];

/**
 * Findings that are defects, reported (issue 26) and not suppressed: listed while they last so that CI stays green,
 * printed on every run; an entry whose finding is gone fails the test, so the fix removes it here too.
 */
const OPEN_DEFECTS: readonly Suppression[] = [];

/** One finding: a rule and the resource it was found on. */
interface Finding {
  rule: string;
  severity: string;
  resource: string;
  description: string;
}

let dir: string;
let findings: Finding[];

beforeAll(async () => {
  const { file } = await packagedTemplate('ci');
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-cdk-nag-'));
  const app = new App({ outdir: dir });
  const stack = new Stack(app, 'Forgebridge');
  new CfnInclude(stack, 'Template', { templateFile: file });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
  } catch {
    // A failed validation throws with the report; the report's file is read below either way.
  }
  const report = JSON.parse(readFileSync(join(dir, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      violations: {
        ruleName: string;
        severity: string;
        description: string;
        violatingConstructs: { constructPath: string }[];
      }[];
    }[];
  };
  findings = report.pluginReports.flatMap((plugin) =>
    plugin.violations.flatMap((violation) =>
      violation.violatingConstructs.map((construct) => ({
        rule: violation.ruleName,
        severity: violation.severity,
        resource: construct.constructPath.split('/').at(-1) ?? construct.constructPath,
        description: violation.description,
      })),
    ),
  );
}, 240_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const matching = (table: readonly Suppression[], finding: Finding) =>
  table.find((entry) => entry.rule.test(finding.rule) && entry.resources.test(finding.resource));
const suppressionOf = (finding: Finding) =>
  matching(OPEN_DEFECTS, finding) === undefined ? matching(SUPPRESSIONS, finding) : undefined;

/** What each entry of a table covers, one line each. */
function describeTable(table: readonly Suppression[], covers: (finding: Finding) => Suppression | undefined) {
  return table.map((entry) => {
    const covered = findings.filter((finding) => covers(finding) === entry);
    const resources = [...new Set(covered.map((finding) => finding.resource))];
    return `  ${entry.rule.source} on ${resources.join(', ')} (${covered.length}): ${entry.reason}`;
  });
}

describe('cdk-nag AwsSolutions over the packaged template', () => {
  it('finds nothing that is not suppressed here with its reason, or an open defect listed as such', () => {
    const defectOf = (finding: Finding) => matching(OPEN_DEFECTS, finding);
    console.log(
      [
        `cdk-nag AwsSolutions: ${findings.length} findings`,
        'Suppressed, with the reason:',
        ...describeTable(SUPPRESSIONS, suppressionOf),
        'NOT suppressed: open defects, reported for a fix:',
        ...describeTable(OPEN_DEFECTS, defectOf),
      ].join('\n'),
    );
    expect(findings.length).toBeGreaterThan(0);
    expect(
      findings
        .filter((finding) => suppressionOf(finding) === undefined && defectOf(finding) === undefined)
        .map(
          (finding) => `${finding.severity} ${finding.rule} on ${finding.resource}: ${finding.description}`,
        ),
    ).toEqual([]);
  });

  it('keeps no suppression and no open defect that no finding needs', () => {
    const stale = (table: readonly Suppression[]) =>
      table
        .filter((entry) => !findings.some((finding) => matching([entry], finding) !== undefined))
        .map((entry) => `${entry.rule.source} on ${entry.resources.source}`);
    expect(stale(SUPPRESSIONS), 'suppressed, but no longer found: take it out').toEqual([]);
    expect(stale(OPEN_DEFECTS), 'fixed: take it out of OPEN_DEFECTS').toEqual([]);
  });
});
