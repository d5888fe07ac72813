/**
 * `replay --since … --subscriber NAME --stage S`: the plan of a stage's archive replay (what the archive holds, the
 * subscriber's rules, what it took already in the window), how it is shown, and the replay itself.
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { DeliveryLog } from '../../aws/internal.js';
import { type ArchiveReplayResult, archiveReplay, busArnOf, replayName } from '../aws-replay.js';
import { type ReplaySelection, type SelectedDelivery, selectDeliveries } from '../bulk-replay.js';
import { awsFailure, type LogTarget, stageBusName } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { paint, print } from '../output.js';
import {
  type ArchivePlan,
  archiveArnParts,
  describeHolding,
  functionArnOf,
  planArchiveReplay,
  subscriberRuleArns,
} from '../subscriber-archive.js';
import type { BulkReplayOptions } from './replay-bulk.js';

/** What a stage's archive replay of the selection will do. */
export interface StagePlan {
  archiveArn: string;
  busName: string;
  ruleArns: string[];
  plan: ArchivePlan;
  /** Deliveries of the replay's window the subscriber took already: the archive re-sends them too. */
  alsoTaken: number;
}

/** Reads the archive and the subscriber's rules, and splits the selection between the archive and direct sends. */
export async function planOnStage(options: {
  log: Pick<DeliveryLog, 'list'>;
  selection: ReplaySelection;
  selected: readonly SelectedDelivery[];
  subscriber: string;
  archiveArn: string;
  eventBridge: Pick<EventBridgeClient, 'send'>;
  target: Pick<LogTarget, 'busName' | 'label'>;
  options: Pick<BulkReplayOptions, 'bus' | 'stage'>;
  now?: number;
}): Promise<StagePlan> {
  const archive = archiveArnParts(options.archiveArn);
  const holding = await describeHolding(options.eventBridge, archive, options.now);
  if (holding.state !== 'ENABLED') {
    throw new CliError(
      `archive "${archive.name}" is ${holding.state}: pass "--via invoke" to send each delivery to the subscriber's function`,
      ExitCodes.failed,
    );
  }
  const busName = stageBusName(
    options.options.bus,
    options.target as LogTarget,
    options.options.stage ?? 'local',
  );
  const ruleArns = await subscriberRuleArns({
    eventBridge: options.eventBridge,
    busName,
    functionArn: functionArnOf(options.subscriber, archive),
    archive,
  });
  if (ruleArns.length === 0) {
    throw new CliError(
      `no rule of bus "${busName}" targets function "${options.subscriber}": pass "--via invoke" to send to it directly`,
    );
  }
  const plan = planArchiveReplay(options.selected, holding, options.now);
  let alsoTaken = 0;
  if (plan.start !== undefined && plan.end !== undefined) {
    const window = await selectDeliveries(options.log, {
      ...options.selection,
      since: plan.start,
      until: plan.end + 1,
      subscriber: options.subscriber,
      outcome: 'any',
    });
    alsoTaken = window.selected.filter((delivery) => delivery.outcome === 'ok').length;
  }
  return { archiveArn: options.archiveArn, busName, ruleArns, plan, alsoTaken };
}

export function printPlan(stage: StagePlan): void {
  const { plan } = stage;
  if (plan.archived.length > 0) {
    print(
      `  ${paint('bold', String(plan.archived.length))} by the archive: one replay of ${new Date(plan.start as number).toISOString()} to ${new Date(plan.end as number).toISOString()} to its ${stage.ruleArns.length} rule${stage.ruleArns.length === 1 ? '' : 's'}  ${paint('dim', `it re-sends every event of that window the rules match${stage.alsoTaken === 0 ? '' : `, also the ${stage.alsoTaken} the subscriber took (resolveDelivery tells it a replay)`}`)}`,
    );
  }
  if (plan.direct.length > 0) {
    print(
      `  ${paint('bold', String(plan.direct.length))} sent to its function directly  ${paint('dim', 'older than the archive holds')}`,
    );
  }
}

export function planJsonOf(stage: StagePlan): Record<string, unknown> {
  return {
    archiveArn: stage.archiveArn,
    busName: stage.busName,
    ruleArns: stage.ruleArns,
    archived: stage.plan.archived.length,
    direct: stage.plan.direct.length,
    alsoTaken: stage.alsoTaken,
    ...(stage.plan.start === undefined ? {} : { windowStart: new Date(stage.plan.start).toISOString() }),
    ...(stage.plan.end === undefined ? {} : { windowEnd: new Date(stage.plan.end).toISOString() }),
  };
}

export function replayJsonOf(result: ArchiveReplayResult): Record<string, unknown> {
  return {
    name: result.name,
    arn: result.arn,
    state: result.state,
    ...(result.reason === undefined ? {} : { reason: result.reason }),
    eventStartTime: result.eventStartTime.toISOString(),
    eventEndTime: result.eventEndTime.toISOString(),
  };
}

/** How often a running archive replay is polled. */
const POLL_MS = 3_000;

export async function replayFromArchive(
  stage: StagePlan,
  eventBridge: EventBridgeClient,
  subscriber: string,
  options: BulkReplayOptions,
  target: LogTarget,
): Promise<ArchiveReplayResult> {
  const start = stage.plan.start as number;
  const end = stage.plan.end as number;
  const name = replayName(subscriber.replace(/^forgebridge-/, ''));
  const interactive = process.stderr.isTTY === true && options.json !== true;
  try {
    return await archiveReplay({
      eventBridge,
      archiveArn: stage.archiveArn,
      busArn: busArnOf(stage.busName, stage.archiveArn),
      ruleArns: stage.ruleArns,
      receivedAt: start,
      beforeMs: 0,
      afterMs: end - start,
      name,
      description: `forgebridge replay --since to ${subscriber}`.slice(0, 512),
      wait: true,
      pollMs: POLL_MS,
      onProgress: (replay, fraction) => {
        if (interactive) {
          const percent = fraction === undefined ? '' : ` ${Math.round(fraction * 100)}%`;
          process.stderr.write(`\rreplay ${name}: ${replay.State ?? '?'}${percent}\u001b[K`);
        }
      },
    });
  } catch (error) {
    throw awsFailure(error, target, 'replay');
  } finally {
    if (interactive) process.stderr.write('\n');
  }
}
