/**
 * `replay` on a deployed stage: re-publishes a claim-checked delivery (the entry the ingest builds, from the
 * S3 object), or replays the stage's EventBridge archive over the delivery's time window.
 */
import { createHash } from 'node:crypto';
import {
  DescribeReplayCommand,
  type DescribeReplayCommandOutput,
  type EventBridgeClient,
  PutEventsCommand,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { DeliveryRecord } from '../aws/internal.js';
import { buildEventEntry, type DeliveryEntry, type PayloadRef } from '../aws/internal.js';
import { CliError, ExitCodes } from './errors.js';

/** What {@link republish} put on the bus. */
export interface Republished {
  eventId: string;
  entry: DeliveryEntry;
  payloadRef: PayloadRef;
}

/**
 * Reads the claim-check object of `record`, checks it against the reference (size and SHA-256), and puts the
 * entry the ingest builds for it (routing fields and the reference, `buildEventEntry`, `detail.hook` included where
 * the record names its hook) on the bus again.
 */
export async function republish(options: {
  record: DeliveryRecord;
  deliveryId: string;
  s3: S3Client;
  eventBridge: EventBridgeClient;
  eventSource: string;
  eventBusName: string;
}): Promise<Republished> {
  const { record } = options;
  const ref = record.payloadRef;
  if (ref === undefined) throw new CliError('the delivery has no claim check to re-publish from');
  if (record.event === undefined) throw new CliError('the delivery log record names no event to publish');
  const object = await options.s3.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
  if (object.Body === undefined) {
    throw new CliError(`claim-check object "${ref.key}" is empty`, ExitCodes.failed);
  }
  const raw = await object.Body.transformToByteArray();
  const sha256 = createHash('sha256').update(raw).digest('hex');
  if (raw.byteLength !== ref.bytes || sha256 !== ref.sha256) {
    throw new CliError(
      `claim-check object "${ref.key}" does not match the log record (bytes or sha256)`,
      ExitCodes.failed,
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    throw new CliError(`claim-check object "${ref.key}" is not valid JSON`, ExitCodes.failed);
  }
  const entry = buildEventEntry(
    {
      id: options.deliveryId,
      name: record.event,
      payload,
      ...(record.action === undefined ? {} : { action: record.action }),
      ...(record.forge === undefined ? {} : { forge: record.forge as never }),
      ...(record.source === undefined ? {} : { source: record.source }),
      // The hook that sent it: two hooks' deliveries of one event share the id, `detail.hook` tells them apart.
      ...(record.hook === undefined ? {} : { hook: record.hook }),
      ...(record.nativeEvent === undefined ? {} : { nativeEvent: record.nativeEvent }),
      ...(record.nativeAction === undefined ? {} : { nativeAction: record.nativeAction }),
    },
    { source: options.eventSource, eventBusName: options.eventBusName, payloadRef: ref },
  );
  const answer = await options.eventBridge.send(new PutEventsCommand({ Entries: [entry] }));
  const result = answer.Entries?.[0];
  if ((answer.FailedEntryCount ?? 0) > 0 || result?.EventId === undefined) {
    const code = result?.ErrorCode ?? 'UnknownEntryError';
    throw new CliError(`the bus refused the entry: ${code}`, ExitCodes.failed);
  }
  return { eventId: result.EventId, entry, payloadRef: ref };
}

/** The ARN of a bus: `--bus` as given when it is an ARN, else built from the archive's region and account. */
export function busArnOf(bus: string, archiveArn: string): string {
  if (bus.startsWith('arn:')) return bus;
  const parts = archiveArn.split(':');
  if (parts.length < 6 || parts[2] !== 'events' || !parts[5]?.startsWith('archive/')) {
    throw new CliError(
      '"--archive" must be an EventBridge archive ARN (arn:aws:events:<region>:<account>:archive/<name>)',
    );
  }
  return `arn:${parts[1]}:events:${parts[3]}:${parts[4]}:event-bus/${bus}`;
}

/** The replay's name: `forgebridge-` + a cleaned delivery id + the time, within EventBridge's 64 characters. */
export function replayName(deliveryId: string, now: number = Date.now()): string {
  const id = deliveryId.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 32);
  return `forgebridge-${id}-${now.toString(36)}`.slice(0, 64);
}

/** States a replay ends in. */
const FINAL_STATES = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** Options of {@link archiveReplay}. */
export interface ArchiveReplayOptions {
  eventBridge: EventBridgeClient;
  archiveArn: string;
  busArn: string;
  /** Only these rules get the replayed events (`Destination.FilterArns`); none: every rule of the bus. */
  ruleArns: readonly string[];
  /** The delivery's receive time, epoch ms. */
  receivedAt: number;
  /** How far before `receivedAt` the window opens, ms. */
  beforeMs: number;
  /** How far after `receivedAt` it closes, ms (never later than now). */
  afterMs: number;
  name: string;
  /** The replay's description. Default `forgebridge replay of one delivery`. */
  description?: string;
  /** Poll DescribeReplay until the replay ends. */
  wait: boolean;
  pollMs: number;
  /** Called with each DescribeReplay answer. */
  onProgress?: (replay: DescribeReplayCommandOutput, fraction: number | undefined) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** What {@link archiveReplay} started and how it ended (`state` is `STARTING` with `wait: false`). */
export interface ArchiveReplayResult {
  name: string;
  arn: string | undefined;
  state: string;
  reason: string | undefined;
  eventStartTime: Date;
  eventEndTime: Date;
  lastReplayed: Date | undefined;
}

/**
 * Starts an EventBridge archive replay of `[receivedAt - beforeMs, receivedAt + afterMs]` into the bus (and only
 * `ruleArns`), then with `wait` polls DescribeReplay until it is COMPLETED, FAILED or CANCELLED.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_StartReplay.html
 */
export async function archiveReplay(options: ArchiveReplayOptions): Promise<ArchiveReplayResult> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const eventStartTime = new Date(options.receivedAt - options.beforeMs);
  const eventEndTime = new Date(Math.min(options.receivedAt + options.afterMs, now()));
  const started = await options.eventBridge.send(
    new StartReplayCommand({
      ReplayName: options.name,
      Description: options.description ?? 'forgebridge replay of one delivery',
      EventSourceArn: options.archiveArn,
      EventStartTime: eventStartTime,
      EventEndTime: eventEndTime,
      Destination: {
        Arn: options.busArn,
        ...(options.ruleArns.length > 0 ? { FilterArns: [...options.ruleArns] } : {}),
      },
    }),
  );
  const result: ArchiveReplayResult = {
    name: options.name,
    arn: started.ReplayArn,
    state: started.State ?? 'STARTING',
    reason: started.StateReason,
    eventStartTime,
    eventEndTime,
    lastReplayed: undefined,
  };
  if (!options.wait) return result;
  const span = eventEndTime.getTime() - eventStartTime.getTime();
  while (!FINAL_STATES.has(result.state)) {
    await sleep(options.pollMs);
    const replay = await options.eventBridge.send(new DescribeReplayCommand({ ReplayName: options.name }));
    result.state = replay.State ?? result.state;
    result.reason = replay.StateReason;
    result.lastReplayed = replay.EventLastReplayedTime;
    const fraction =
      replay.EventLastReplayedTime === undefined || span <= 0
        ? undefined
        : Math.min(
            1,
            Math.max(0, (replay.EventLastReplayedTime.getTime() - eventStartTime.getTime()) / span),
          );
    options.onProgress?.(replay, fraction);
  }
  return result;
}
