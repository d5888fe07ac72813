import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { Command } from 'commander';
import { DEFAULT_SOURCE } from '../../aws/core/index.js';
import {
  AwsDefaults,
  isSourceName,
  parseSecretList,
  SOURCE_NAME_RULE,
  sourceSecretEnv,
} from '../../aws/internal.js';
import { type Forge, Forges } from '../../webhooks/index.js';
import { awsFailure, openLog, resolveLogTarget, stageRegion } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { writePrivateFile } from '../files.js';
import { paint, print } from '../output.js';
import {
  checkLog,
  DEFAULT_FINISH_DELIVERIES,
  finishedList,
  newSecretFor,
  ParameterSecrets,
  provingSince,
  rotatedList,
  type SecretListState,
  stageSource,
} from '../secret-rotation.js';
import { readStackState, stateFile } from '../state-file.js';

interface SecretOptions {
  source: string;
  stage?: string;
  region?: string;
  function?: string;
  parameter?: string;
  forge?: Forge;
  table?: string;
  stack?: string;
  endpoint?: string;
  deliveries?: string;
  force?: boolean;
}

/** Where a source's list lives: an SSM parameter of a stage, or the running local stack. */
interface Store {
  readonly forge: Forge;
  /** `parameter "/forgebridge/prod/webhook-secret/github"` or `the local stack's source "github"`. */
  readonly label: string;
  /** The list, its version and when it last changed (a stage: the parameter's; locally: the stack's start). */
  read(): Promise<SecretListState>;
  /**
   * Stores the list if it is still as `read` found it; locally, gives the restart that takes it instead (printed
   * last).
   */
  write(secrets: readonly string[], read: SecretListState): Promise<string | undefined>;
  readonly local: boolean;
}

/** Registers `secret rotate` and `secret finish`. */
export function registerSecret(program: Command): void {
  const secret = program
    .command('secret')
    .description("rotate a webhook source's secret without refusing a delivery (docs/operations.md)");
  const common = (command: Command) =>
    command
      .requiredOption('--source <name>', 'the webhook source ("default" for /webhooks)')
      .option('--stage <name>', "the deployed stage whose SSM parameter holds the source's secrets")
      .option('--region <region>', "AWS region of the stage (default: AWS_REGION / the profile's)")
      .option(
        '--function <name>',
        'the ingest function to read the sources from (default: "forgebridge-<stage>-ingest")',
      )
      .option(
        '--parameter <name>',
        "the source's SSM parameter (default: the one the ingest's environment names)",
      );
  common(secret.command('rotate'))
    .description('add a new secret next to the current one, and print it once to paste into the forge')
    .option(
      '--forge <forge>',
      `with "--parameter": the source's preset, for the secret's form (${Forges.join(', ')})`,
    )
    .action(async (options: SecretOptions) => rotate(options));
  common(secret.command('finish'))
    .description('remove the old secret once the delivery log shows the forge signs with the new one')
    .option(
      '--deliveries <n>',
      'how many of the latest verified deliveries must use the new secret',
      String(DEFAULT_FINISH_DELIVERIES),
    )
    .option('--force', 'remove the old secret without reading the delivery log')
    .option(
      '--table <name>',
      'delivery log table (default: the local stack\'s, or the stack\'s "DeliveriesTableName" output)',
    )
    .option('--stack <name>', 'CloudFormation stack of the stage (default: "forgebridge-<stage>")')
    .option('--endpoint <url>', "DynamoDB endpoint of a local log (default: the running local stack's)")
    .action(async (options: SecretOptions) => finish(options));
  // Errors are printed by `main`, as one line, as for every other command.
  for (const command of secret.commands)
    command.exitOverride().configureOutput({ outputError: () => undefined });
}

async function rotate(options: SecretOptions): Promise<void> {
  const store = await openStore(options);
  const current = await store.read();
  const fresh = newSecretFor(store.forge);
  const note = await store.write(rotatedList(current.secrets, fresh), current);
  print(
    `${paint('bold', 'new secret')} of source "${options.source}" (shown once: ${pasteWhen(store.local)}):`,
  );
  print(`  ${fresh}`);
  print(
    `${capital(store.label)} holds the current secret first, then the new one: the ingest verifies deliveries signed with either.`,
  );
  const where = options.stage === undefined ? '' : ` --stage ${options.stage}`;
  print(
    `Once the forge signs with the new one: forgebridge secret finish --source ${options.source}${where}`,
  );
  if (note !== undefined) print(note);
}

async function finish(options: SecretOptions): Promise<void> {
  const wanted = Number(options.deliveries ?? DEFAULT_FINISH_DELIVERIES);
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > 1000) {
    throw new CliError('"--deliveries" must be a whole number from 1 to 1000');
  }
  const store = await openStore(options);
  const current = await store.read();
  const remaining = finishedList(current.secrets);
  if (options.force !== true) {
    const target = await resolveLogTarget(options);
    const { log, client } = openLog(target);
    try {
      // Only deliveries verified against this list count: older rows' position 1 may be another secret.
      const since = store.local ? current.changedAt : provingSince(current.changedAt);
      const check = await checkLog(log, options.source, wanted, since).catch((error: unknown) => {
        throw awsFailure(error, target, `table "${target.tableName}"`);
      });
      if (!check.ok) throw new CliError(`old secret kept: ${check.reason}`, ExitCodes.failed);
      print(`the last ${wanted} verified deliveries of source "${options.source}" used the new secret`);
    } finally {
      client.destroy();
    }
  }
  const note = await store.write(remaining, current);
  print(`${capital(store.label)} now holds the new secret only: the old one no longer verifies.`);
  if (note !== undefined) print(note);
}

async function openStore(options: SecretOptions): Promise<Store> {
  if (!isSourceName(options.source)) {
    throw new CliError(`"--source" must be ${SOURCE_NAME_RULE}`);
  }
  if (options.forge !== undefined && !(Forges as readonly string[]).includes(options.forge)) {
    throw new CliError(`"--forge" must be one of ${Forges.join(', ')}`);
  }
  return options.stage === undefined ? localStore(options) : stageStore(options);
}

async function stageStore(options: SecretOptions): Promise<Store> {
  const region = stageRegion(options);
  const config = region === undefined ? {} : { region };
  const target = {
    kind: 'aws' as const,
    endpoint: undefined,
    label: `stage "${options.stage}"`,
    fromState: false,
  };
  let forge = options.forge;
  let parameter = options.parameter;
  if (forge === undefined || parameter === undefined) {
    const functionName = options.function ?? `forgebridge-${options.stage}-ingest`;
    const lambda = new LambdaClient(config);
    try {
      const source = await stageSource(lambda, functionName, options.source);
      forge ??= source.forge;
      parameter ??= source.parameter;
    } catch (error) {
      throw awsFailure(error, target, `function "${functionName}"`);
    } finally {
      lambda.destroy();
    }
  }
  if (parameter === undefined)
    throw new CliError(`source "${options.source}" names no SSM parameter: pass "--parameter"`);
  if (!parameter.startsWith('/'))
    throw new CliError('"--parameter" must be a parameter name starting with "/"');
  const ssm = new SSMClient(config);
  const secrets = new ParameterSecrets(ssm, parameter);
  const label = `parameter "${parameter}"`;
  return {
    forge,
    label,
    local: false,
    read: () =>
      secrets.read().catch((error: unknown) => {
        throw awsFailure(error, target, label);
      }),
    write: (list, read) =>
      secrets.write(list, read).then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof CliError) throw error;
          throw awsFailure(error, target, label);
        },
      ),
  };
}

/**
 * The running local stack's source, from its state file. serverless-offline hands each function its
 * environment when the stack starts, so a new list takes effect on a restart with the source's variable set.
 */
function localStore(options: SecretOptions): Store {
  if (options.parameter !== undefined || options.function !== undefined) {
    throw new CliError('"--parameter" and "--function" need "--stage"');
  }
  if (options.source === DEFAULT_SOURCE) {
    throw new CliError(
      'the local "default" source\'s secret also derives the other local sources\' ones: rotate a named source locally',
    );
  }
  const source = (readStackState(stateFile()).sources ?? []).find(
    (candidate) => candidate.name === options.source,
  );
  if (source === undefined) {
    throw new CliError(
      `the local stack has no source "${options.source}" (is it running? start it with "npm start")`,
      ExitCodes.unreachable,
    );
  }
  const variable = sourceSecretEnv(options.source);
  const file = stateFile();
  const state = typeof file === 'string' ? file : fileURLToPath(file);
  const listFile = join(dirname(state), 'secrets', `${options.source}.env`);
  return {
    forge: options.forge ?? source.forge,
    label: `the local source "${options.source}"`,
    local: true,
    // The stack wrote its state file when it started with this list.
    read: async () => ({
      secrets: parseSecretList(source.secret),
      version: undefined,
      // Whole milliseconds, as the log's `receivedAt`: a delivery logged in the same millisecond is not before it.
      changedAt: Math.floor(statSync(state).mtimeMs),
    }),
    // The list goes into a file of the user's alone, never into a command line (and the shell's history).
    write: async (list) => {
      writePrivateFile(listFile, `${variable}='${list.join(',')}'\n`);
      return `The running local stack reads its secrets when it starts: the list is in ${listFile} (readable by you only); restart it with: (set -a; . ${listFile}; set +a; npm start)`;
    },
  };
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** When the forge may get the new secret: a stage's ingest keeps the list it read for up to 5 minutes. */
function pasteWhen(local: boolean): string {
  return local
    ? "paste it into the forge's webhook settings once the stack has restarted with it"
    : `paste it into the forge's webhook settings in ${AwsDefaults.secretsMaxAgeSeconds / 60} minutes, when every ingest has read the new list`;
}
