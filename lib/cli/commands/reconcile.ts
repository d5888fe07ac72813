import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import type { Command } from 'commander';
import {
  createReconcileHandler,
  isSourceName,
  type ReconcileReport,
  SOURCE_NAME_RULE,
} from '../../aws/internal.js';
import { awsFailure, dynamoDbClient } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { checkUrl } from '../local-stack.js';
import { print, printJson } from '../output.js';
import { readStackState, stateFile } from '../state-file.js';

interface ReconcileCommandOptions {
  source?: string;
  dryRun?: boolean;
  json?: boolean;
  stage?: string;
  region?: string;
  function?: string;
  endpoint?: string;
}

const STAGE = /^[a-zA-Z0-9-]{1,64}$/;

/** Registers `reconcile`. */
export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .description(
      'run one reconciliation: ask the forges to redeliver what never reached the ingest (the local stack, or a deployed stage with "--stage")',
    )
    .option('--source <name>', 'only this webhook source')
    .option('--dry-run', 'report what would be redelivered; redeliver, publish and write nothing')
    .option('--json', 'print the report as JSON')
    .option('--stage <name>', 'invoke the reconcile function of this deployed stage (default: run it here)')
    .option('--region <region>', "AWS region of the stage (default: AWS_REGION / the profile's)")
    .option('--function <name>', 'the function to invoke (default: "forgebridge-<stage>-reconcile")')
    .option('--endpoint <url>', "DynamoDB endpoint of the local run (default: the running local stack's)")
    .addHelpText(
      'after',
      `
Here, the run reads the reconcile function's variables (FORGEBRIDGE_WEBHOOK_SOURCES with each source's "hook",
FORGEBRIDGE_OAUTH_CLIENTS, ...) from the environment, with the local stack's tables by default. With no
FORGEBRIDGE_WEBHOOK_SOURCES set and the local stack running, the stack's own reconcile function runs instead.

Examples:
  $ forgebridge reconcile --dry-run
  $ forgebridge reconcile --source acme
  $ forgebridge reconcile --stage prod --region eu-west-1 --json`,
    )
    .action(async (options: ReconcileCommandOptions) => {
      if (options.source !== undefined && !isSourceName(options.source)) {
        throw new CliError(`"--source" must be ${SOURCE_NAME_RULE}`);
      }
      const report = options.stage === undefined ? await runHere(options) : await invokeStage(options);
      if (options.json === true) printJson(report);
      else print(describe(report));
      process.exitCode = report.errors > 0 ? ExitCodes.failed : ExitCodes.ok;
    });
}

/** The report as one line. */
export function describe(report: ReconcileReport): string {
  const parts = [
    `listed ${report.listed}`,
    `failed at the forge ${report.failed}`,
    `already ours ${report.alreadyOurs} (${report.late} newly late)`,
    `${report.dryRun ? 'would redeliver' : 'redelivered'} ${report.redelivered}`,
    `${report.dryRun ? 'would recover' : 'recovered'} ${report.recovered}`,
    `skipped ${report.skipped}`,
    `gave up ${report.gaveUp}`,
    `errors ${report.errors}`,
  ];
  const sources = `${report.sources} source${report.sources === 1 ? '' : 's'}`;
  return `${report.dryRun ? 'dry run, ' : ''}${sources}: ${parts.join(', ')}${
    report.rateLimited ? '; rate limited: the rest waits for the next run' : ''
  }`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

async function runHere(options: ReconcileCommandOptions): Promise<ReconcileReport> {
  const state = readStackState(stateFile(process.env));
  // With no sources of its own in the environment, the running local stack's reconcile function runs, with the
  // stack's configuration (its forge stand-ins' hooks), through serverless-offline's Lambda API.
  const lambda = nonEmpty(process.env.FORGEBRIDGE_LAMBDA_ENDPOINT) ?? state.endpoints?.lambda;
  if (
    lambda !== undefined &&
    options.endpoint === undefined &&
    nonEmpty(process.env.FORGEBRIDGE_WEBHOOK_SOURCES) === undefined
  ) {
    checkUrl(lambda, 'FORGEBRIDGE_LAMBDA_ENDPOINT');
    const client = new LambdaClient({
      endpoint: lambda,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 130_000 },
    });
    const target = { kind: 'local' as const, endpoint: lambda, label: 'local stack', fromState: true };
    return invoke(client, options.function ?? 'forgebridge-local-reconcile', target, options);
  }
  const endpoint =
    nonEmpty(options.endpoint) ??
    nonEmpty(process.env.FORGEBRIDGE_DYNAMODB_ENDPOINT) ??
    state.endpoints?.dynamodb;
  if (endpoint === undefined) {
    throw new CliError(
      'the local stack is not running (no DynamoDB endpoint in .tmp/local-stack.json): start it with "npm start", or pass "--endpoint" or "--stage"',
      ExitCodes.unreachable,
    );
  }
  checkUrl(endpoint, options.endpoint !== undefined ? '--endpoint' : 'FORGEBRIDGE_DYNAMODB_ENDPOINT');
  // The function's own variables, with the local stack's tables where none is set.
  const env: NodeJS.ProcessEnv = {
    FORGEBRIDGE_BUS_NAME: 'forgebridge-local',
    FORGEBRIDGE_DEDUPE_TABLE: state.names?.dedupeTable ?? 'forgebridge-local-dedupe',
    FORGEBRIDGE_TOKEN_TABLE: 'forgebridge-local-tokens',
    FORGEBRIDGE_DELIVERIES_TABLE: state.names?.deliveriesTable ?? 'forgebridge-local-deliveries',
    ...process.env,
    IS_OFFLINE: 'true',
  };
  const target = {
    kind: 'local' as const,
    endpoint,
    label: 'local stack',
    fromState: options.endpoint === undefined,
  };
  let handler: ReturnType<typeof createReconcileHandler>;
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  try {
    handler = createReconcileHandler({
      env,
      clients: { dynamodb: dynamoDbClient({ ...target, tableName: '', region: undefined }) },
      logger: quiet,
      // The CLI prints its report; metric lines are for a deployed function's CloudWatch Logs.
      metrics: false,
    });
  } catch (error) {
    if (error instanceof TypeError) throw new CliError(error.message);
    throw error;
  }
  try {
    return await handler({
      ...(options.source === undefined ? {} : { sourceName: options.source }),
      ...(options.dryRun === true ? { dryRun: true } : {}),
    });
  } catch (error) {
    if (error instanceof TypeError) throw new CliError(error.message);
    throw awsFailure(error, target, 'the dedupe table');
  }
}

async function invokeStage(options: ReconcileCommandOptions): Promise<ReconcileReport> {
  const stage = options.stage as string;
  if (!STAGE.test(stage)) throw new CliError('"--stage" must be letters, digits and hyphens');
  if (options.endpoint !== undefined)
    throw new CliError('"--endpoint" and "--stage" cannot be used together');
  const region =
    nonEmpty(options.region) ?? nonEmpty(process.env.AWS_REGION) ?? nonEmpty(process.env.AWS_DEFAULT_REGION);
  const lambda = new LambdaClient({
    ...(region === undefined ? {} : { region }),
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 130_000 },
  });
  const name = options.function ?? `forgebridge-${stage}-reconcile`;
  const target = { kind: 'aws' as const, endpoint: undefined, label: `stage "${stage}"`, fromState: false };
  return invoke(lambda, name, target, options);
}

/** Invokes a reconcile function (a stage's, or the local stack's) and returns the report it answered. */
async function invoke(
  lambda: LambdaClient,
  name: string,
  target: Parameters<typeof awsFailure>[1],
  options: ReconcileCommandOptions,
): Promise<ReconcileReport> {
  let answer: InvokeCommandOutput;
  try {
    answer = await lambda.send(
      new InvokeCommand({
        FunctionName: name,
        Payload: Buffer.from(
          JSON.stringify({
            ...(options.source === undefined ? {} : { sourceName: options.source }),
            ...(options.dryRun === true ? { dryRun: true } : {}),
          }),
        ),
      }),
    );
  } catch (error) {
    throw awsFailure(error, target, `function "${name}"`);
  } finally {
    lambda.destroy();
  }
  const text = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (answer.FunctionError !== undefined) {
    const message = (body as { errorMessage?: unknown } | undefined)?.errorMessage;
    throw new CliError(
      `function "${name}" failed${typeof message === 'string' ? `: ${message.split('\n')[0]}` : ''}`,
      ExitCodes.failed,
    );
  }
  if (body === null || typeof body !== 'object' || typeof (body as ReconcileReport).listed !== 'number') {
    throw new CliError(
      `function "${name}" answered something that is not a reconcile report`,
      ExitCodes.failed,
    );
  }
  return body as ReconcileReport;
}
