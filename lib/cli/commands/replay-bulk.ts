/**
 * `forgebridge replay --since T --subscriber NAME`: the deliveries one subscriber missed, counted first, then sent
 * to it alone (its function invoked with each delivery's event: the local stack's through serverless-offline's
 * Lambda API, a stage's through AWS Lambda).
 */
import { createInterface } from 'node:readline/promises';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { DeliveryLog } from '../../aws/internal.js';
import type { ArchiveReplayResult } from '../aws-replay.js';
import {
  checkWindow,
  progressLine,
  type ReplayOutcome,
  ReplayOutcomes,
  type ReplayRun,
  type ReplaySelection,
  replayToFunction,
  type Selected,
  type SelectedDelivery,
  selectDeliveries,
  subscriberEvent,
} from '../bulk-replay.js';
import { awsFailure, type LogTarget, openLog, parseSince } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { parseEventName } from '../events.js';
import { paint, print, printJson, startSpinner } from '../output.js';
import { readStackState, stateFile } from '../state-file.js';
import { archiveArnParts, stageArchiveArn } from '../subscriber-archive.js';
import { logFailure } from './deliveries.js';
import {
  planJsonOf,
  planOnStage,
  printPlan,
  replayFromArchive,
  replayJsonOf,
  type StagePlan,
} from './replay-stage.js';

/** The options `replay --since` reads. */
export interface BulkReplayOptions {
  since: string;
  until?: string | undefined;
  /** `undefined` unless given: every source. */
  source?: string | undefined;
  event?: string | undefined;
  subscriber?: string | undefined;
  outcome: string;
  dryRun?: boolean | undefined;
  yes?: boolean | undefined;
  rate: number;
  stage?: string | undefined;
  region?: string | undefined;
  eventSource?: string | undefined;
  json?: boolean | undefined;
  /** How a stage's deliveries reach the subscriber: its bus archive's replay (default) or invoking it. */
  via?: string | undefined;
  archive?: string | undefined;
  bus?: string | undefined;
}

/** How `replay --since --subscriber` sends on a stage. */
export const ReplayVias = ['archive', 'invoke'] as const;

/** Deliveries shown before the count is confirmed. */
const SAMPLE = 5;
/** The local stack's stage: its functions are `forgebridge-local-<key>`. */
const LOCAL_STAGE = 'local';

/**
 * The names a subscriber may report under: as given, and for a function key (`onIssuesOpened`) the stage's
 * function name (`forgebridge-<stage>-onIssuesOpened`, what a subscriber reports by default).
 */
export function subscriberNames(name: string, stage: string): string[] {
  if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) {
    throw new CliError('"--subscriber" must be a function key (onIssuesOpened) or name, 1 to 128 characters');
  }
  return name.startsWith('forgebridge-') ? [name] : [name, `forgebridge-${stage}-${name}`];
}

/** Parses the selection's flags; a bad one is a usage error (exit 2), before anything is read. */
export function parseSelection(options: BulkReplayOptions, now: number = Date.now()): ReplaySelection {
  const since = parseSince(options.since, now, '--since');
  const until = options.until === undefined ? undefined : parseSince(options.until, now, '--until');
  checkWindow(since, until, now);
  if (!(ReplayOutcomes as readonly string[]).includes(options.outcome)) {
    throw new CliError(
      `"--outcome" must be one of ${ReplayOutcomes.map((value) => `"${value}"`).join(', ')}`,
    );
  }
  if (options.subscriber === undefined) {
    throw new CliError(
      '"--subscriber" is required with "--since": the deliveries are sent to that subscriber alone',
    );
  }
  const stage = options.stage ?? LOCAL_STAGE;
  return {
    since,
    ...(until === undefined ? {} : { until }),
    ...(options.source === undefined ? {} : { source: options.source }),
    ...(options.event === undefined ? {} : { event: parseEventName(options.event).full }),
    subscriber: subscriberNames(options.subscriber, stage),
    outcome: options.outcome as ReplayOutcome,
  };
}

/** How the selection reaches the subscriber: a stage's archive by default, the local stack's function always. */
export function viaOf(options: Pick<BulkReplayOptions, 'via'>, target: Pick<LogTarget, 'kind'>): Via {
  if (options.via === undefined) return target.kind === 'aws' ? 'archive' : 'invoke';
  if (!(ReplayVias as readonly string[]).includes(options.via)) {
    throw new CliError(`"--via" must be one of ${ReplayVias.map((value) => `"${value}"`).join(', ')}`);
  }
  if (options.via === 'archive' && target.kind !== 'aws') {
    throw new CliError(
      '"--via archive" needs "--stage": the local stack has no archive, its subscribers are invoked',
    );
  }
  return options.via as Via;
}
export type Via = (typeof ReplayVias)[number];

/** Runs `replay --since`: exit 0 when every selected delivery was taken (or none was selected), 1 otherwise. */
export async function runBulkReplay(options: BulkReplayOptions, target: LogTarget): Promise<number> {
  const selection = parseSelection(options);
  const via = viaOf(options, target);
  // A stage without an archive is refused before anything is read.
  const archiveArn =
    via === 'archive' ? stageArchiveArn(options.archive, target.outputs, target.label) : undefined;
  if (archiveArn !== undefined) archiveArnParts(archiveArn);
  const { log, client } = openLog(target);
  let eventBridge: EventBridgeClient | undefined;
  try {
    const spinner = startSpinner(`selecting deliveries (${target.label})`);
    let found: Selected;
    try {
      found = await selectDeliveries(log, selection);
    } catch (error) {
      throw logFailure(error, target);
    } finally {
      spinner.stop();
    }
    const { selected, subscriber } = found;
    if (subscriber === undefined) {
      const known = [...found.subscribers].sort();
      throw new CliError(
        `no delivery of the window was reported on by subscriber "${options.subscriber}" (${known.length === 0 ? 'no subscriber reported on any' : `subscribers that did: ${known.join(', ')}`})`,
      );
    }
    const summary = {
      subscriber,
      outcome: selection.outcome,
      since: new Date(selection.since).toISOString(),
      ...(selection.until === undefined ? {} : { until: new Date(selection.until).toISOString() }),
      ...(selection.source === undefined ? {} : { source: selection.source }),
      ...(selection.event === undefined ? {} : { event: selection.event }),
      selected: selected.length,
      via,
    };
    if (options.json !== true) printSelection(selection, subscriber, selected);
    let stage: StagePlan | undefined;
    if (archiveArn !== undefined && selected.length > 0) {
      eventBridge = new EventBridgeClient({ region: archiveArnParts(archiveArn).region });
      try {
        stage = await planOnStage({
          log,
          selection,
          selected,
          subscriber,
          archiveArn,
          eventBridge,
          target,
          options,
        });
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw awsFailure(error, target, `archive "${archiveArnParts(archiveArn).name}"`);
      }
      if (options.json !== true) printPlan(stage);
    }
    const planJson = stage === undefined ? {} : { plan: planJsonOf(stage) };
    if (options.dryRun === true || selected.length === 0) {
      if (options.json === true) {
        printJson({
          ...summary,
          ...planJson,
          dryRun: options.dryRun === true,
          sample: selected.slice(0, SAMPLE),
        });
      }
      return ExitCodes.ok;
    }
    await confirm(options, selected.length, subscriber);
    const eventSource = options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || 'forge.webhooks');
    const direct = stage === undefined ? selected : stage.plan.direct;
    let replayed: ArchiveReplayResult | undefined;
    if (stage !== undefined && eventBridge !== undefined && stage.plan.archived.length > 0) {
      replayed = await replayFromArchive(stage, eventBridge, subscriber, options, target);
    }
    const run =
      direct.length === 0
        ? { sent: 0, failed: 0, failures: [], durationMs: 0 }
        : await sendDirect({ log, target, subscriber, deliveries: direct, eventSource, options });
    const archiveOk = replayed === undefined || replayed.state === 'COMPLETED';
    if (options.json === true) {
      printJson({
        ...summary,
        ...planJson,
        ...(replayed === undefined ? {} : { replay: replayJsonOf(replayed) }),
        ...run,
      });
    } else {
      if (replayed !== undefined) {
        print(
          `${paint(['bold', archiveOk ? 'green' : 'red'], replayed.state.toLowerCase())}  archive replay ${replayed.name}: ${stage?.plan.archived.length} to ${subscriber}'s ${stage?.ruleArns.length} rule${stage?.ruleArns.length === 1 ? '' : 's'}${replayed.reason === undefined ? '' : `  ${paint('dim', replayed.reason)}`}`,
        );
      }
      if (direct.length > 0) {
        const ok = run.failed === 0;
        print(
          `${paint(['bold', ok ? 'green' : 'red'], ok ? 'replayed' : 'replayed with failures')}  ${run.sent} of ${direct.length} to ${subscriber}  ${paint('dim', `${(run.durationMs / 1000).toFixed(1)} s${run.failed === 0 ? '' : `, ${run.failed} failed`}`)}`,
        );
        for (const failure of run.failures) print(`  ${paint('red', failure.deliveryId)}  ${failure.error}`);
        if (run.failed > 0) print(paint('dim', '  run the same command again to send what is still failing'));
      }
    }
    return run.failed === 0 && archiveOk ? ExitCodes.ok : ExitCodes.failed;
  } finally {
    client.destroy();
    eventBridge?.destroy();
  }
}

/** Invokes the subscriber's function with each delivery's event, paced, with a bar on a terminal. */
async function sendDirect(options: {
  log: DeliveryLog;
  target: LogTarget;
  subscriber: string;
  deliveries: readonly SelectedDelivery[];
  eventSource: string;
  options: BulkReplayOptions;
}): Promise<ReplayRun> {
  const { log, subscriber, deliveries, eventSource } = options;
  const lambda = lambdaClient(options.target);
  const interactive = process.stderr.isTTY === true && options.options.json !== true;
  const started = Date.now();
  try {
    const run = await replayToFunction({
      lambda,
      functionName: subscriber,
      deliveries,
      ratePerSecond: options.options.rate,
      eventOf: async (delivery) => {
        const details = await log.get(delivery.deliveryId, { source: delivery.source });
        if (details === undefined) {
          throw new CliError(`delivery "${delivery.deliveryId}" is no longer in the log`, ExitCodes.failed);
        }
        return subscriberEvent(details, { hook: delivery.hook, eventSource });
      },
      onProgress: (done, failed) => {
        if (interactive) {
          process.stderr.write(
            `\r${progressLine(done, deliveries.length, failed, Date.now() - started)}\u001b[K`,
          );
        }
      },
    });
    if (interactive) process.stderr.write('\n');
    return run;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw awsFailure(error, options.target, `function "${subscriber}"`);
  } finally {
    lambda.destroy();
  }
}

function printSelection(
  selection: ReplaySelection,
  subscriber: string,
  selected: readonly SelectedDelivery[],
): void {
  const what = selection.outcome === 'error' ? 'reported error' : 'reported on';
  print(
    `${paint('bold', String(selected.length))} deliver${selected.length === 1 ? 'y' : 'ies'} ${subscriber} ${what}  ${paint('dim', `${new Date(selection.since).toISOString()} to ${selection.until === undefined ? 'now' : new Date(selection.until).toISOString()}${selection.source === undefined ? '' : `, source ${selection.source}`}${selection.event === undefined ? '' : `, ${selection.event}`}`)}`,
  );
  for (const delivery of selected.slice(0, SAMPLE)) {
    const event = delivery.action === undefined ? delivery.event : `${delivery.event}.${delivery.action}`;
    print(
      `  ${new Date(delivery.receivedAt).toISOString()}  ${delivery.deliveryId}  ${paint('cyan', event)}${delivery.error === undefined ? '' : `  ${paint('dim', delivery.error)}`}`,
    );
  }
  if (selected.length > SAMPLE) print(paint('dim', `  and ${selected.length - SAMPLE} more`));
}

/** On a terminal, asks before sending; elsewhere `--yes` is required. */
export async function confirm(
  options: { yes?: boolean | undefined; json?: boolean | undefined },
  count: number,
  subscriber: string,
): Promise<void> {
  if (options.yes === true) return;
  if (process.stdin.isTTY !== true || options.json === true) {
    throw new CliError(`pass "--yes" to send ${count} deliveries to ${subscriber} (or "--dry-run" to count)`);
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`send ${count} deliveries to ${subscriber}? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('nothing sent', ExitCodes.failed);
  } finally {
    prompt.close();
  }
}

/** The Lambda API the subscriber is invoked through: the local stack's (serverless-offline) or the stage's. */
export function lambdaClient(target: Pick<LogTarget, 'kind' | 'region'>): LambdaClient {
  const timeouts = { requestHandler: { connectionTimeout: 5_000, requestTimeout: 130_000 } };
  if (target.kind === 'aws') {
    return new LambdaClient({
      ...(target.region === undefined ? {} : { region: target.region }),
      ...timeouts,
    });
  }
  const endpoint =
    process.env.FORGEBRIDGE_LAMBDA_ENDPOINT || readStackState(stateFile(process.env)).endpoints?.lambda;
  if (endpoint === undefined) {
    throw new CliError(
      'the local stack is not running (no Lambda endpoint in .tmp/local-stack.json): start it with "npm start"',
      ExitCodes.unreachable,
    );
  }
  return new LambdaClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    ...timeouts,
  });
}
