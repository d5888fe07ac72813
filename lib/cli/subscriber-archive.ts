/**
 * `replay --since … --subscriber NAME --stage S`: the bus archive's replay, filtered to that subscriber's rules
 * (EventBridge `StartReplay` with the rule ARNs as `Destination.FilterArns`), for the deliveries the archive holds;
 * the others (received before the archive's retention or its creation) are sent to the subscriber's function
 * directly. The rules are found by their target (`ListRuleNamesByTarget` with the function's ARN), never by a
 * naming rule.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_StartReplay.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_ListRuleNamesByTarget.html
 */
import {
  DescribeArchiveCommand,
  type EventBridgeClient,
  ListRuleNamesByTargetCommand,
} from '@aws-sdk/client-eventbridge';
import type { SelectedDelivery } from './bulk-replay.js';
import { CliError, ExitCodes } from './errors.js';

/** The CloudFormation output naming a deployed stage's bus archive. */
export const ARCHIVE_ARN_OUTPUT = 'BusArchiveArn';

/** The parts of an EventBridge archive ARN (`arn:<partition>:events:<region>:<account>:archive/<name>`). */
export interface ArchiveArnParts {
  partition: string;
  region: string;
  account: string;
  name: string;
}

/** Reads an archive ARN; anything else is a usage error. */
export function archiveArnParts(arn: string): ArchiveArnParts {
  const parts = arn.split(':');
  const resource = parts.slice(5).join(':');
  if (
    parts.length < 6 ||
    parts[0] !== 'arn' ||
    parts[2] !== 'events' ||
    !/^[a-z0-9-]+$/.test(parts[3] ?? '') ||
    !/^\d{12}$/.test(parts[4] ?? '') ||
    !resource.startsWith('archive/') ||
    resource.length <= 'archive/'.length
  ) {
    throw new CliError(
      '"--archive" must be an EventBridge archive ARN (arn:aws:events:<region>:<account>:archive/<name>)',
    );
  }
  return {
    partition: parts[1] as string,
    region: parts[3] as string,
    account: parts[4] as string,
    name: resource.slice('archive/'.length),
  };
}

/** The ARN of a function of the archive's account and region (the target ARN its rules name). */
export function functionArnOf(functionName: string, archive: ArchiveArnParts): string {
  return `arn:${archive.partition}:lambda:${archive.region}:${archive.account}:function:${functionName}`;
}

/** What the archive holds: events received from `heldFrom` on. */
export interface ArchiveHolding {
  state: string;
  /** Oldest receipt the archive still holds, epoch ms (its creation, or now less its retention). */
  heldFrom: number;
  retentionDays: number | undefined;
}

/** Reads the archive (DescribeArchive): its state and the oldest events it still holds. */
export async function describeHolding(
  eventBridge: Pick<EventBridgeClient, 'send'>,
  archive: ArchiveArnParts,
  now: number = Date.now(),
): Promise<ArchiveHolding> {
  const answer = await eventBridge.send(new DescribeArchiveCommand({ ArchiveName: archive.name }));
  const created = answer.CreationTime?.getTime() ?? 0;
  const retention = answer.RetentionDays;
  // 0 (or none): the archive keeps events indefinitely.
  const kept = retention === undefined || retention === 0 ? 0 : now - retention * 86_400_000;
  return { state: answer.State ?? 'UNKNOWN', heldFrom: Math.max(created, kept), retentionDays: retention };
}

/** The rules of `busName` whose target is `functionArn`, as ARNs. */
export async function subscriberRuleArns(options: {
  eventBridge: Pick<EventBridgeClient, 'send'>;
  busName: string;
  functionArn: string;
  archive: ArchiveArnParts;
}): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await options.eventBridge.send(
      new ListRuleNamesByTargetCommand({
        TargetArn: options.functionArn,
        EventBusName: options.busName,
        ...(token === undefined ? {} : { NextToken: token }),
      }),
    );
    names.push(...(page.RuleNames ?? []));
    token = page.NextToken;
  } while (token !== undefined);
  const { partition, region, account } = options.archive;
  return names.map((name) => `arn:${partition}:events:${region}:${account}:rule/${options.busName}/${name}`);
}

/** How a selection is replayed on a stage: by the archive, and directly for what it does not hold. */
export interface ArchivePlan {
  /** Held by the archive: replayed by StartReplay over [start, end]. */
  archived: SelectedDelivery[];
  /** Not held (older than the archive's retention, or than the archive): sent to the function directly. */
  direct: SelectedDelivery[];
  /** The replay's window (a minute each side of the oldest and newest archived receipt, never after now). */
  start: number | undefined;
  end: number | undefined;
}

/** Events reach the archive after they were put on the bus: the window reaches past both ends of the receipts. */
const MARGIN_MS = 60_000;

/** Splits `selected` (oldest first) into what the archive holds and what it does not. */
export function planArchiveReplay(
  selected: readonly SelectedDelivery[],
  holding: Pick<ArchiveHolding, 'heldFrom'>,
  now: number = Date.now(),
): ArchivePlan {
  const archived = selected.filter((delivery) => delivery.receivedAt >= holding.heldFrom);
  const direct = selected.filter((delivery) => delivery.receivedAt < holding.heldFrom);
  if (archived.length === 0) return { archived, direct, start: undefined, end: undefined };
  const oldest = Math.min(...archived.map((delivery) => delivery.receivedAt));
  const newest = Math.max(...archived.map((delivery) => delivery.receivedAt));
  return {
    archived,
    direct,
    start: Math.max(holding.heldFrom, oldest - MARGIN_MS),
    end: Math.min(now, newest + MARGIN_MS),
  };
}

/** The stage's archive ARN: `--archive`, else its stack's output; a stage without one is a usage error. */
export function stageArchiveArn(
  archive: string | undefined,
  outputs: Readonly<Record<string, string>> | undefined,
  label: string,
): string {
  const arn = archive ?? outputs?.[ARCHIVE_ARN_OUTPUT];
  if (arn === undefined || arn === '') {
    throw new CliError(
      `${label} has no archive (its stack has no "${ARCHIVE_ARN_OUTPUT}" output): pass "--archive <arn>", or "--via invoke" to send each delivery to the subscriber's function`,
      ExitCodes.usage,
    );
  }
  return arn;
}
