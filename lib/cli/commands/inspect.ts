import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import type { Command } from 'commander';
import {
  addLogOptions,
  type LogOptions,
  openLog,
  parseSince,
  resolveLogTarget,
  stageBusName,
} from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { paint, print } from '../output.js';
import { logFailure } from './deliveries.js';

interface InspectOptions extends LogOptions {
  port?: number;
  bus?: string;
  eventSource?: string;
  archive?: string;
  rule: string[];
  window: string;
}

/** Registers `inspect --stage <name>`. */
export function registerInspect(program: Command): void {
  const command = program
    .command('inspect')
    .description("serve the inspector on 127.0.0.1 against a deployed stage's delivery log")
    .option('--port <port>', 'port on 127.0.0.1 (default: a free one)', (value) => port(value))
    .option(
      '--bus <name|arn>',
      'the event bus replays go to (default: the stage stack\'s "BusName" output; with --table, "forgebridge-<stage>")',
    )
    .option(
      '--event-source <source>',
      'the EventBridge source (default: FORGEBRIDGE_SOURCE, else "forge.webhooks")',
    )
    .option('--archive <arn>', 'the archive to replay from when a delivery has no claim check')
    .option('--rule <arn>', 'archive replays go only to this rule; repeat for several', collect, [])
    .option('--window <duration>', 'archive window after the delivery was received (before: 1m)', '5m');
  addLogOptions(command)
    .addHelpText(
      'after',
      `
The page of the local stack's inspector, for a deployed stage: every request the ingest answered, live, with
its detail, diagnosis, the rules it matched and its subscribers. It runs on this machine with your own AWS
credentials (DynamoDB reads while a page is open, every 300 ms); nothing is exposed on AWS. Replay puts a
claim-checked delivery on the bus again, or starts an archive replay with "--archive", as "forgebridge replay
--stage" does. The local stack serves its own inspector: "npm start" prints its URL.

Examples:
  $ forgebridge inspect --stage prod --region eu-west-1
  $ forgebridge inspect --stage prod --archive arn:aws:events:eu-west-1:123456789012:archive/forgebridge-prod

Exit codes: 0 stopped (Ctrl-C), 2 bad input or AWS credentials, 3 log not reachable.`,
    )
    .action(async (options: InspectOptions) => {
      process.exitCode = await inspect(options);
    });
}

async function inspect(options: InspectOptions): Promise<number> {
  if (options.stage === undefined) {
    throw new CliError(
      '"--stage" is required: the local stack serves its own inspector ("npm start" prints its URL)',
    );
  }
  const windowMs = Date.now() - parseSince(options.window, Date.now(), '--window');
  // Loaded when the command runs: every other command starts without the inspector's modules.
  const [{ loadRules, serveInspector }, { stageActions }] = await Promise.all([
    import('../../inspector/index.js'),
    import('../stage-inspector.js'),
  ]);
  // The rules matched are serverless.yml's patterns: without the file (an installed package has none) the
  // column stays empty rather than the command failing.
  let rules: ReturnType<typeof loadRules> = [];
  let rulesNote = '';
  try {
    rules = loadRules();
  } catch {
    rulesNote = '; serverless.yml not readable: no rules matched shown';
  }
  const target = await resolveLogTarget(options);
  const { log, client } = openLog(target);
  const config = target.region === undefined ? {} : { region: target.region };
  const eventBridge = new EventBridgeClient(config);
  const s3 = new S3Client(config);
  try {
    // One read first: missing credentials or a missing table are said now, in one line, not on the page.
    await log.list({ limit: 1, since: Date.now() - 60_000 }).catch((error: unknown) => {
      throw logFailure(error, target);
    });
    const inspector = await serveInspector({
      log,
      rules,
      port: options.port,
      actions: stageActions({
        target,
        stage: options.stage,
        eventBridge,
        s3,
        busName: stageBusName(options.bus, target, options.stage as string),
        eventSource: options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || 'forge.webhooks'),
        archive: options.archive,
        ruleArns: options.rule,
        windowMs,
      }),
    }).catch((error: unknown) => {
      const code = (error as { code?: unknown }).code;
      throw new CliError(
        code === 'EADDRINUSE' ? `port ${options.port} is in use: pass another "--port"` : String(error),
        ExitCodes.unreachable,
      );
    });
    print(
      `${paint('bold', 'inspector')} ${paint('cyan', inspector.url)}  ${paint('dim', `${target.label}, table ${target.tableName}${rulesNote}; Ctrl-C stops it`)}`,
    );
    const signal = await new Promise<string>((resolve) => {
      const onInterrupt = () => {
        process.off('SIGTERM', onTerminate);
        resolve('SIGINT');
      };
      const onTerminate = () => {
        process.off('SIGINT', onInterrupt);
        resolve('SIGTERM');
      };
      process.once('SIGINT', onInterrupt);
      process.once('SIGTERM', onTerminate);
    });
    await inspector.stop();
    print(paint('dim', `${signal}: stopped`));
    return ExitCodes.ok;
  } finally {
    client.destroy();
    eventBridge.destroy();
    s3.destroy();
  }
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > 65_535) {
    throw new CliError('"--port" must be a port number from 1 to 65535');
  }
  return number;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
