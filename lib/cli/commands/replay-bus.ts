/**
 * `forgebridge replay --since T` without `--subscriber`: the window's deliveries put on the bus again as new events
 * under their original delivery ids, counted with a sample first. Each carries a replay mark with the subscribers
 * that had reported it `ok`: those skip it, the ones that failed it (or never saw it) run. The local stack's bus is
 * serverless-offline's EventBridge; a stage's is its stack's `BusName`.
 */
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { DeliveryLog } from '../../aws/internal.js';
import {
  checkWindow,
  deliveryEntryOf,
  progressLine,
  type ReplayOutcome,
  ReplayOutcomes,
} from '../bulk-replay.js';
import { type BusDelivery, type BusSelection, replayToBus, selectForBus } from '../bus-replay.js';
import { awsFailure, type LogTarget, openLog, parseSince, stageBusName } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { parseEventName } from '../events.js';
import { paint, print, printJson, startSpinner } from '../output.js';
import { readStackState, stateFile } from '../state-file.js';
import { logFailure } from './deliveries.js';
import { type BulkReplayOptions, confirm } from './replay-bulk.js';

/** Deliveries shown before the count is confirmed. */
const SAMPLE = 5;
/** The local stack's bus when its state file does not name it. */
const LOCAL_BUS = 'forgebridge-local';

/** Parses the flags of a bus replay; a bad one is a usage error (exit 2), before anything is read. */
export function parseBusSelection(options: BulkReplayOptions, now: number = Date.now()): BusSelection {
  const since = parseSince(options.since, now, '--since');
  const until = options.until === undefined ? undefined : parseSince(options.until, now, '--until');
  checkWindow(since, until, now);
  if (!(ReplayOutcomes as readonly string[]).includes(options.outcome)) {
    throw new CliError(
      `"--outcome" must be one of ${ReplayOutcomes.map((value) => `"${value}"`).join(', ')}`,
    );
  }
  if (options.via !== undefined) {
    throw new CliError(
      '"--via" needs "--subscriber": without one the deliveries are put on the bus, for every subscriber\'s rule',
    );
  }
  return {
    since,
    ...(until === undefined ? {} : { until }),
    ...(options.source === undefined ? {} : { source: options.source }),
    ...(options.event === undefined ? {} : { event: parseEventName(options.event).full }),
    outcome: options.outcome as ReplayOutcome,
  };
}

/** The bus the replay puts on, and a client for it: the local stack's (serverless-offline) or the stage's. */
export function busOf(
  options: Pick<BulkReplayOptions, 'bus' | 'stage'>,
  target: LogTarget,
  env: NodeJS.ProcessEnv = process.env,
): { busName: string; client: () => EventBridgeClient } {
  if (target.kind === 'aws') {
    const busName = stageBusName(options.bus, target, options.stage ?? 'local');
    return {
      busName,
      client: () => new EventBridgeClient(target.region === undefined ? {} : { region: target.region }),
    };
  }
  const state = readStackState(stateFile(env));
  const endpoint = env.FORGEBRIDGE_EVENTBRIDGE_ENDPOINT || state.endpoints?.eventBridge;
  if (endpoint === undefined) {
    throw new CliError(
      'the local stack is not running (no EventBridge endpoint in .tmp/local-stack.json): start it with "npm start"',
      ExitCodes.unreachable,
    );
  }
  const busName = options.bus || state.names?.bus || LOCAL_BUS;
  return {
    busName,
    client: () =>
      new EventBridgeClient({
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 1,
      }),
  };
}

/** Runs it: exit 0 when every selected delivery went onto the bus (or none was selected), 1 otherwise. */
export async function runBusReplay(options: BulkReplayOptions, target: LogTarget): Promise<number> {
  const selection = parseBusSelection(options);
  const bus = busOf(options, target);
  const { log, client } = openLog(target);
  let eventBridge: EventBridgeClient | undefined;
  try {
    const spinner = startSpinner(`selecting deliveries (${target.label})`);
    let selected: BusDelivery[];
    try {
      selected = await selectForBus(log, selection);
    } catch (error) {
      throw logFailure(error, target);
    } finally {
      spinner.stop();
    }
    const summary = {
      bus: bus.busName,
      outcome: selection.outcome,
      since: new Date(selection.since).toISOString(),
      ...(selection.until === undefined ? {} : { until: new Date(selection.until).toISOString() }),
      ...(selection.source === undefined ? {} : { source: selection.source }),
      ...(selection.event === undefined ? {} : { event: selection.event }),
      selected: selected.length,
    };
    if (options.json !== true) printSelection(selection, bus.busName, selected);
    if (options.dryRun === true || selected.length === 0) {
      if (options.json === true) {
        printJson({ ...summary, dryRun: options.dryRun === true, sample: selected.slice(0, SAMPLE) });
      }
      return ExitCodes.ok;
    }
    await confirm(options, selected.length, `bus ${bus.busName}`);
    const eventSource = options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || 'forge.webhooks');
    eventBridge = bus.client();
    const runId = randomUUID();
    const interactive = process.stderr.isTTY === true && options.json !== true;
    const started = Date.now();
    let run: Awaited<ReturnType<typeof replayToBus>>;
    try {
      run = await replayToBus({
        eventBridge,
        busName: bus.busName,
        deliveries: selected,
        run: runId,
        ratePerSecond: options.rate,
        entryOf: (delivery) => entryOf(log, delivery, eventSource),
        onProgress: (done, failed) => {
          if (interactive) {
            process.stderr.write(
              `\r${progressLine(done, selected.length, failed, Date.now() - started)}\u001b[K`,
            );
          }
        },
      });
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw awsFailure(error, target, `bus "${bus.busName}"`);
    }
    if (interactive) process.stderr.write('\n');
    if (options.json === true) {
      printJson({ ...summary, run: runId, ...run });
    } else {
      const ok = run.failed === 0;
      print(
        `${paint(['bold', ok ? 'green' : 'red'], ok ? 'replayed' : 'replayed with failures')}  ${run.sent} of ${selected.length} to bus ${bus.busName}  ${paint('dim', `run ${runId}, ${(run.durationMs / 1000).toFixed(1)} s${run.failed === 0 ? '' : `, ${run.failed} failed`}`)}`,
      );
      for (const failure of run.failures) print(`  ${paint('red', failure.deliveryId)}  ${failure.error}`);
      if (run.failed > 0) {
        print(paint('dim', '  run the same command again: the subscribers that took a delivery skip it'));
      }
    }
    return run.failed === 0 ? ExitCodes.ok : ExitCodes.failed;
  } finally {
    client.destroy();
    eventBridge?.destroy();
  }
}

/** The delivery's entry as the ingest built it, from the log. */
async function entryOf(log: DeliveryLog, delivery: BusDelivery, eventSource: string) {
  const details = await log.get(delivery.deliveryId, { source: delivery.source });
  if (details === undefined) {
    throw new CliError(`delivery "${delivery.deliveryId}" is no longer in the log`, ExitCodes.failed);
  }
  return deliveryEntryOf(details, { hook: delivery.hook, eventSource });
}

function printSelection(selection: BusSelection, busName: string, selected: readonly BusDelivery[]): void {
  const what = selection.outcome === 'error' ? 'a subscriber reported error for' : 'on the bus';
  print(
    `${paint('bold', String(selected.length))} deliver${selected.length === 1 ? 'y' : 'ies'} ${what}, to put on bus ${busName} again  ${paint('dim', `${new Date(selection.since).toISOString()} to ${selection.until === undefined ? 'now' : new Date(selection.until).toISOString()}${selection.source === undefined ? '' : `, source ${selection.source}`}${selection.event === undefined ? '' : `, ${selection.event}`}`)}`,
  );
  for (const delivery of selected.slice(0, SAMPLE)) {
    const event = delivery.action === undefined ? delivery.event : `${delivery.event}.${delivery.action}`;
    const reports = [
      ...(delivery.failed.length === 0 ? [] : [`error: ${delivery.failed.join(', ')}`]),
      ...(delivery.ok.length === 0 ? [] : [`ok (skip it): ${delivery.ok.join(', ')}`]),
    ];
    print(
      `  ${new Date(delivery.receivedAt).toISOString()}  ${delivery.deliveryId}  ${paint('cyan', event)}${reports.length === 0 ? '' : `  ${paint('dim', reports.join('; '))}`}`,
    );
  }
  if (selected.length > SAMPLE) print(paint('dim', `  and ${selected.length - SAMPLE} more`));
}
