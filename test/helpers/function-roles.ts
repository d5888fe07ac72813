// Each Lambda function of a packaged template with its execution role (serverless-iam-roles-per-function gives every
// function `<Fn>IamRoleLambdaExecution`; the function's `Role` says which), its inline policies as written, and the
// function key serverless.yml gives it, read from the app id it names itself with in the SDK's User-Agent
// (`AWS_SDK_UA_APP_ID: forgebridge-<key>`): the key the recorded calls carry.
import { functionOfAppId } from '../../local-stack/aws-calls.js';
import type { CfnTemplate } from './packaged-template.js';

/** An IAM policy document (as written in the template, or resolved). */
export interface PolicyDocument {
  Version?: string;
  Statement: PolicyStatement | PolicyStatement[];
}

/** One statement of a policy document. */
export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: unknown;
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: unknown;
}

/** A function of the template and its role. */
export interface FunctionRole {
  /** The function key in serverless.yml (`onIssuesOpened`), from its AWS_SDK_UA_APP_ID; undefined without one. */
  key: string | undefined;
  /** The function's logical id (`OnIssuesOpenedLambdaFunction`). */
  functionId: string;
  /** The role's logical id (`OnIssuesOpenedIamRoleLambdaExecution`). */
  roleId: string;
  /** The role's inline policies and the `AWS::IAM::Policy` resources attached to it by `Roles`, unresolved. */
  policies: { name: unknown; document: PolicyDocument }[];
  /** The role's managed policies (their contents are not in the template). */
  managedPolicyArns: unknown[];
}

/**
 * Every `AWS::Lambda::Function` of the template with its role.
 *
 * @example
 * ```ts
 * const redrive = functionRoles(template).find((fn) => fn.key === 'redrive');
 * ```
 */
export function functionRoles(template: CfnTemplate): FunctionRole[] {
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([functionId, resource]) => {
      const role = resource.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const roleId = role?.['Fn::GetAtt']?.[0];
      if (roleId === undefined || template.Resources[roleId]?.Type !== 'AWS::IAM::Role') {
        throw new Error(`${functionId} has no role of this template (Role: ${JSON.stringify(role)})`);
      }
      const properties = template.Resources[roleId]?.Properties ?? {};
      const variables = (
        resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
      )?.Variables;
      const appId = variables?.AWS_SDK_UA_APP_ID;
      return {
        key: (typeof appId === 'string' ? functionOfAppId(appId) : null) ?? undefined,
        functionId,
        roleId,
        policies: [
          ...((properties.Policies ?? []) as { PolicyName: unknown; PolicyDocument: PolicyDocument }[]),
          // A policy of its own that names the role (infra/ordered.cjs's stream write grant).
          ...Object.values(template.Resources)
            .filter(
              (other) =>
                other.Type === 'AWS::IAM::Policy' &&
                JSON.stringify(other.Properties?.Roles ?? []).includes(`{"Ref":"${roleId}"}`),
            )
            .map((other) => other.Properties as { PolicyName: unknown; PolicyDocument: PolicyDocument }),
        ].map((policy) => ({ name: policy.PolicyName, document: policy.PolicyDocument })),
        managedPolicyArns: (properties.ManagedPolicyArns ?? []) as unknown[],
      };
    });
}

/** A list of the value, or the value alone. */
export function listOf(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The statements of a document, as a list. */
export function statementsOf(document: PolicyDocument): PolicyStatement[] {
  return listOf(document.Statement) as PolicyStatement[];
}
