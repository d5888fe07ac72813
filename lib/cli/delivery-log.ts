/**
 * Where `deliveries`, `show` and `replay` read the delivery log: the local stack's DynamoDB Local (found the
 * way `send` finds the stack) or a deployed stage's table (`--stage`, `--region`, `--table` or the stack's
 * `DeliveriesTableName` output). AWS SDK failures become one-line `CliError`s.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { DELIVERY_ID_RULE, DeliveryLog, isDeliveryId } from '../aws/internal.js';
import { CliError, ExitCodes } from './errors.js';
import { NETWORK_REASONS as SHARED_NETWORK_REASONS } from './http.js';
import { checkUrl } from './local-stack.js';
import { readStackState, stateFile } from './state-file.js';

/** The delivery log table of the local stack (`forgebridge-<stage>-deliveries`, stage `local`). */
export const LOCAL_DELIVERIES_TABLE = 'forgebridge-local-deliveries';

/** The CloudFormation output naming a deployed stage's delivery log table. */
export const DELIVERIES_TABLE_OUTPUT = 'DeliveriesTableName';

/** The CloudFormation output naming a deployed stage's event bus. */
export const BUS_NAME_OUTPUT = 'BusName';

/** The options every delivery-log command takes. */
export interface LogOptions {
  stage?: string | undefined;
  region?: string | undefined;
  table?: string | undefined;
  stack?: string | undefined;
  endpoint?: string | undefined;
}

/** Where the log is read. */
export interface LogTarget {
  /** `local` (the local stack or `--endpoint`) or `aws` (a deployed stage). */
  readonly kind: 'local' | 'aws';
  readonly tableName: string;
  /** The DynamoDB endpoint of the local stack; `undefined` on AWS. */
  readonly endpoint: string | undefined;
  /** The AWS region; `undefined` for the local stack. */
  readonly region: string | undefined;
  /** Whether the endpoint came from the running local stack (and "npm start" is the hint). */
  readonly fromState: boolean;
  /** `local stack` or `stage "dev"`, for messages. */
  readonly label: string;
  /** A deployed stage's event bus, from its stack's `BusName` output; `undefined` when the stack was not read. */
  readonly busName?: string | undefined;
  /** A deployed stage's stack outputs, when the stack was read (`BusArchiveArn`, `SubscriberDeadLetterQueueUrl`). */
  readonly outputs?: Readonly<Record<string, string>> | undefined;
}

/** Adds the log options to a command. */
export function addLogOptions(command: Command): Command {
  return command
    .option('--stage <name>', 'read the delivery log of this deployed stage (default: the local stack)')
    .option('--region <region>', "AWS region of the stage (default: AWS_REGION / the profile's)")
    .option(
      '--table <name>',
      'delivery log table (default: the local stack\'s, or the stage stack\'s "DeliveriesTableName" output)',
    )
    .option('--stack <name>', 'CloudFormation stack of the stage (default: "forgebridge-<stage>")')
    .option('--endpoint <url>', "DynamoDB endpoint of a local log (default: the running local stack's)");
}

const STAGE = /^[a-zA-Z0-9-]{1,64}$/;

/**
 * Checks `--stage` (a name, and no `--endpoint` with it) and returns the stage's region: `--region`, else
 * AWS_REGION / AWS_DEFAULT_REGION, else `undefined` (the SDK's profile settings).
 */
export function stageRegion(options: LogOptions, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!STAGE.test(options.stage ?? '')) throw new CliError('"--stage" must be letters, digits and hyphens');
  if (options.endpoint !== undefined)
    throw new CliError('"--endpoint" and "--stage" cannot be used together');
  return nonEmpty(options.region) ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
}

/**
 * The log to read: with `--stage` a deployed stage's table, else the local stack's (its DynamoDB Local endpoint
 * from `--endpoint`, FORGEBRIDGE_DYNAMODB_ENDPOINT or the state file `npm start` writes).
 */
export async function resolveLogTarget(
  options: LogOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LogTarget> {
  if (options.stage !== undefined) {
    const region = stageRegion(options, env);
    const stack = options.stack ?? `forgebridge-${options.stage}`;
    // The stack's own names (its outputs), never a naming rule: a stage may name its table or bus otherwise.
    const outputs = nonEmpty(options.table) === undefined ? await stackOutputs(stack, region) : undefined;
    const tableName =
      nonEmpty(options.table) ?? requiredOutput(outputs ?? {}, stack, DELIVERIES_TABLE_OUTPUT);
    return {
      kind: 'aws',
      tableName,
      busName: nonEmpty(outputs?.[BUS_NAME_OUTPUT]),
      ...(outputs === undefined ? {} : { outputs }),
      endpoint: undefined,
      region,
      fromState: false,
      label: `stage "${options.stage}"`,
    };
  }
  const state = readStackState(stateFile(env));
  const given = nonEmpty(options.endpoint) ?? nonEmpty(env.FORGEBRIDGE_DYNAMODB_ENDPOINT);
  const endpoint = given ?? state.endpoints?.dynamodb;
  if (endpoint === undefined) {
    throw new CliError(
      'the local stack is not running (no DynamoDB endpoint in .tmp/local-stack.json): start it with "npm start", or pass "--endpoint" or "--stage"',
      ExitCodes.unreachable,
    );
  }
  checkUrl(endpoint, options.endpoint !== undefined ? '--endpoint' : 'FORGEBRIDGE_DYNAMODB_ENDPOINT');
  const tableName =
    nonEmpty(options.table) ??
    nonEmpty(env.FORGEBRIDGE_DELIVERIES_TABLE) ??
    state.names?.deliveriesTable ??
    LOCAL_DELIVERIES_TABLE;
  return {
    kind: 'local',
    tableName,
    endpoint,
    region: undefined,
    fromState: given === undefined,
    label: 'local stack',
  };
}

/** A DynamoDB client for the target: DynamoDB Local takes any credentials; one attempt, short timeouts. */
export function dynamoDbClient(target: LogTarget): DynamoDBClient {
  if (target.kind === 'local') {
    return new DynamoDBClient({
      ...(target.endpoint === undefined ? {} : { endpoint: target.endpoint }),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
      requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
    });
  }
  return new DynamoDBClient({
    ...(target.region === undefined ? {} : { region: target.region }),
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 20_000 },
  });
}

/** The delivery log of the target (with the library's default index shards, as the ingest writes). */
export function openLog(target: LogTarget): { log: DeliveryLog; client: DynamoDBClient } {
  const client = dynamoDbClient(target);
  return { log: new DeliveryLog({ client, tableName: target.tableName }), client };
}

/**
 * An AWS SDK (or network) failure as one line with its exit code: missing credentials or region are bad
 * input (2), an endpoint that does not answer or a missing table is unreachable (3).
 */
export function awsFailure(
  error: unknown,
  target: Pick<LogTarget, 'kind' | 'endpoint' | 'label' | 'fromState'>,
  what: string,
): CliError {
  if (error instanceof CliError) return error;
  const name = errorName(error);
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    return new CliError(
      `AWS credentials not found for ${target.label}: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
      ExitCodes.usage,
      { cause: error },
    );
  }
  if (/region is missing/i.test(message)) {
    return new CliError('missing AWS region: pass "--region" (or set AWS_REGION)', ExitCodes.usage, {
      cause: error,
    });
  }
  if (name === 'ResourceNotFoundException') {
    return new CliError(`${what} not found (${target.label})`, ExitCodes.unreachable, { cause: error });
  }
  const code = networkCode(error);
  if (code !== undefined) {
    const where = target.endpoint ?? `AWS (${target.label})`;
    const hint = target.fromState ? ' (is "npm start" running?)' : '';
    return new CliError(
      `could not reach ${where}: ${NETWORK_REASONS[code] ?? code.toLowerCase()}${hint}`,
      ExitCodes.unreachable,
      {
        cause: error,
      },
    );
  }
  if (
    name === 'UnrecognizedClientException' ||
    name === 'InvalidSignatureException' ||
    name === 'ExpiredTokenException' ||
    name === 'AccessDeniedException' ||
    name === 'AccessDenied'
  ) {
    return new CliError(
      `AWS refused the request for ${what} (${name}): check the credentials and their permissions`,
      ExitCodes.usage,
      {
        cause: error,
      },
    );
  }
  return new CliError(`${what} failed: ${name}: ${message}`, ExitCodes.failed, { cause: error });
}

const NETWORK_REASONS: Record<string, string> = {
  ...SHARED_NETWORK_REASONS,
  TimeoutError: 'no answer in time',
};

function networkCode(error: unknown): string | undefined {
  for (
    let current: unknown = error, depth = 0;
    current !== undefined && current !== null && depth < 4;
    depth += 1
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in NETWORK_REASONS) return code;
    const name = (current as { name?: unknown }).name;
    if (name === 'TimeoutError') return 'TimeoutError';
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      current = errors[0];
      continue;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorName(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : 'Error';
}

/** One output of a CloudFormation stack, read with DescribeStacks. */
export async function stackOutput(
  stackName: string,
  output: string,
  region: string | undefined,
): Promise<string> {
  return requiredOutput(await stackOutputs(stackName, region), stackName, output);
}

function requiredOutput(outputs: Record<string, string>, stackName: string, output: string): string {
  const value = outputs[output];
  if (value === undefined || value === '') {
    throw new CliError(
      `stack "${stackName}" has no "${output}" output: pass "${output === BUS_NAME_OUTPUT ? '--bus' : '--table'}"`,
    );
  }
  return value;
}

/**
 * A deployed stage's event bus: `--bus`, else the stack's `BusName` output (read with the log target); with
 * `--table`, which skips the stack, the stage's default bus name (`forgebridge-<stage>`) unless `--bus` says another.
 */
export function stageBusName(bus: string | undefined, target: LogTarget, stage: string): string {
  return nonEmpty(bus) ?? target.busName ?? `forgebridge-${stage}`;
}

/** Every output of a CloudFormation stack, by key, read with one DescribeStacks. */
export async function stackOutputs(
  stackName: string,
  region: string | undefined,
): Promise<Record<string, string>> {
  const client = new CloudFormationClient(region === undefined ? {} : { region });
  const target = {
    kind: 'aws' as const,
    endpoint: undefined,
    label: `stack "${stackName}"`,
    fromState: false,
  };
  try {
    const answer = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs: Record<string, string> = {};
    for (const entry of answer.Stacks?.[0]?.Outputs ?? []) {
      if (entry.OutputKey !== undefined && entry.OutputValue !== undefined) {
        outputs[entry.OutputKey] = entry.OutputValue;
      }
    }
    return outputs;
  } catch (error) {
    if (errorName(error) === 'ValidationError' && /does not exist/i.test(String((error as Error).message))) {
      throw new CliError(`stack "${stackName}" not found: pass "--stack" or "--table"`, ExitCodes.usage, {
        cause: error,
      });
    }
    throw awsFailure(error, target, `stack "${stackName}"`);
  } finally {
    client.destroy();
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: a duration back from now (`30m`, `1h`, `2d`, `90s`, `1w`) or a date/time (`2026-11-23T08:00Z`,
 * `2026-11-23`), as epoch ms.
 */
export function parseSince(value: string, now: number = Date.now(), option = '--since'): number {
  const duration = /^(\d{1,6})([smhdw])$/.exec(value.trim());
  if (duration !== null) {
    return now - Number(duration[1]) * (UNITS[duration[2] as string] as number);
  }
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    const at = Date.parse(value.trim());
    if (Number.isFinite(at)) return at;
  }
  throw new CliError(`"${option}" must be a duration (30m, 1h, 2d) or a date and time (2026-11-23T08:00Z)`);
}

/** A delivery id as the log accepts it (`isDeliveryId`). */
export function checkDeliveryId(id: string): string {
  if (!isDeliveryId(id)) {
    throw new CliError(`"<delivery-id>" must be ${DELIVERY_ID_RULE}`);
  }
  return id;
}
