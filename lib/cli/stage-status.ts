/**
 * What `forgebridge status` reads: the delivery log's last day (per source the last delivery and its answer,
 * counts by verdict and outcome over the last hour and day), the queue records of the dedupe table (depth and
 * oldest age from the sparse `queue-due` index, dead letters), the stage's dashboard URL, and what needs
 * attention. The local stack and a deployed stage are read the same way.
 */
import {
  BatchGetItemCommand,
  type DynamoDBClient,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { DEFAULT_SOURCE } from '../aws/core/index.js';
import {
  DedupeTable,
  type DeliveryLog,
  type DeliveryOutcome,
  type DeliveryRecord,
  type DeliveryVerdict,
  type ReconcileLastRun,
  readReconcileRun,
} from '../aws/internal.js';
import type { GovernorOwnerStatus } from './governor-status.js';

/** Queue older than this needs attention: the retrier is not draining it (the queue age alarm's threshold). */
export const QUEUE_AGE_ATTENTION_SECONDS = 15 * 60;
/** Most records of the last day read from the log; past it the counts say "at least". */
export const MAX_LOG_RECORDS = 20_000;
/** Most waiting queue records read for the oldest age. */
export const MAX_QUEUE_RECORDS = 5_000;
/** Most scan pages (1 MB each) read to count dead letters. */
export const MAX_SCAN_PAGES = 50;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Counts over one window. */
export interface WindowCounts {
  total: number;
  byVerdict: Partial<Record<DeliveryVerdict, number>>;
  byOutcome: Partial<Record<DeliveryOutcome, number>>;
}

/** One source's last delivery and its answer. */
export interface SourceStatus {
  source: string;
  last?: {
    deliveryId?: string;
    receivedAt: string;
    event?: string;
    verdict: DeliveryVerdict;
    outcome: DeliveryOutcome;
    httpStatus: number;
    reason?: string;
  };
  lastHour: number;
  lastDay: number;
}

/** The queue of deliveries the bus did not take, waiting for the retrier. */
export interface QueueStatus {
  depth: number;
  /** Age of the oldest waiting delivery, in seconds; `null` when the queue is empty. */
  oldestAgeSeconds: number | null;
  /** The queue held more than {@link MAX_QUEUE_RECORDS}: depth and age are lower bounds. */
  truncated: boolean;
}

/** Queue records given up by the retrier (`dead: true`, kept until their TTL). */
export interface DeadLetterStatus {
  count: number;
  newest?: { deliveryId: string; deadAt: string; reason?: string };
  /** The scan stopped after {@link MAX_SCAN_PAGES}: the count is a lower bound. */
  truncated: boolean;
}

/** The reconciler's last run, as it wrote it down in the dedupe table; `none` before its first run. */
export type ReconcilerStatus = { state: 'none' } | ({ state: 'ran' } & ReconcileLastRun);

/** Everything `forgebridge status` shows. */
export interface StatusReport {
  target: string;
  at: string;
  deliveriesTable: string;
  dedupeTable: string;
  dashboardUrl: string | null;
  sources: SourceStatus[];
  lastHour: WindowCounts;
  lastDay: WindowCounts;
  /** More than {@link MAX_LOG_RECORDS} records in the last day: counts are lower bounds. */
  truncated: boolean;
  queue: QueueStatus;
  deadLetters: DeadLetterStatus;
  reconciler: ReconcilerStatus;
  /** The token table read for the forge API line. */
  tokenTable: string;
  /** Each token owner's forge API governor; `null` when the token table could not be read. */
  forgeApi: GovernorOwnerStatus[] | null;
  /** What needs attention, in words; empty when all is well. */
  attention: string[];
}

/** The last day of the log, newest first (at most {@link MAX_LOG_RECORDS}). */
export async function readLastDay(
  log: DeliveryLog,
  now: number,
): Promise<{ records: DeliveryRecord[]; truncated: boolean }> {
  const records: DeliveryRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await log.list({
      since: now - DAY,
      limit: 1000,
      ...(cursor === undefined ? {} : { cursor }),
    });
    records.push(...page.records);
    cursor = page.cursor;
  } while (cursor !== undefined && records.length < MAX_LOG_RECORDS);
  return { records: records.slice(0, MAX_LOG_RECORDS), truncated: cursor !== undefined };
}

function count(records: readonly DeliveryRecord[]): WindowCounts {
  const counts: WindowCounts = { total: 0, byVerdict: {}, byOutcome: {} };
  for (const record of records) {
    counts.total += 1;
    counts.byVerdict[record.verdict] = (counts.byVerdict[record.verdict] ?? 0) + 1;
    counts.byOutcome[record.outcome] = (counts.byOutcome[record.outcome] ?? 0) + 1;
  }
  return counts;
}

/**
 * Per source, its last delivery and how many it had: every source seen in the last day, and `known` ones
 * (the local stack's) looked up further back, up to the log's TTL, when the day had none.
 */
export async function sourceStatuses(
  log: DeliveryLog,
  records: readonly DeliveryRecord[],
  now: number,
  known: readonly string[] = [],
): Promise<SourceStatus[]> {
  const bySource = new Map<string, DeliveryRecord[]>();
  for (const record of records) {
    const name = record.source ?? DEFAULT_SOURCE;
    const list = bySource.get(name) ?? [];
    list.push(record);
    bySource.set(name, list);
  }
  const names = [...new Set([...known, ...bySource.keys()])].sort();
  const statuses: SourceStatus[] = [];
  for (const name of names) {
    const seen = bySource.get(name) ?? [];
    const last = seen[0] ?? (await log.list({ source: name, limit: 1 })).records[0];
    statuses.push({
      source: name,
      ...(last === undefined ? {} : { last: lastOf(last) }),
      lastHour: seen.filter((record) => record.receivedAt >= now - HOUR).length,
      lastDay: seen.length,
    });
  }
  return statuses;
}

function lastOf(record: DeliveryRecord): NonNullable<SourceStatus['last']> {
  return {
    ...(record.deliveryId === undefined ? {} : { deliveryId: record.deliveryId }),
    receivedAt: new Date(record.receivedAt).toISOString(),
    ...(record.event === undefined
      ? {}
      : { event: record.action === undefined ? record.event : `${record.event}.${record.action}` }),
    verdict: record.verdict,
    outcome: record.outcome,
    httpStatus: record.httpStatus,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
  };
}

/** Depth and oldest age of the queue: one Query on the sparse index, then the records' `queuedAt`. */
export async function queueStatus(
  client: DynamoDBClient,
  tableName: string,
  now: number,
): Promise<QueueStatus> {
  const keys: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: DedupeTable.queueIndex,
        KeyConditionExpression: '#queue = :due',
        ExpressionAttributeNames: { '#queue': DedupeTable.queueAttribute },
        ExpressionAttributeValues: { ':due': { S: 'due' } },
        ...(start === undefined ? {} : { ExclusiveStartKey: start as never }),
      }),
    );
    for (const item of page.Items ?? []) {
      const pk = item[DedupeTable.partitionKey]?.S;
      if (pk !== undefined) keys.push(pk);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined && keys.length < MAX_QUEUE_RECORDS);
  const read = keys.slice(0, MAX_QUEUE_RECORDS);
  let oldest: number | undefined;
  for (let index = 0; index < read.length; index += 100) {
    let pending: Record<string, { Keys: Record<string, { S: string }>[]; ProjectionExpression: string }> = {
      [tableName]: {
        Keys: read.slice(index, index + 100).map((pk) => ({ [DedupeTable.partitionKey]: { S: pk } })),
        ProjectionExpression: 'queuedAt',
      },
    };
    for (let round = 0; round < 5 && Object.keys(pending).length > 0; round += 1) {
      const answer = await client.send(new BatchGetItemCommand({ RequestItems: pending }));
      for (const item of answer.Responses?.[tableName] ?? []) {
        const at = Number(item.queuedAt?.N);
        if (Number.isFinite(at)) oldest = oldest === undefined ? at : Math.min(oldest, at);
      }
      pending = (answer.UnprocessedKeys ?? {}) as typeof pending;
    }
  }
  return {
    depth: read.length,
    oldestAgeSeconds: oldest === undefined ? null : Math.max(0, Math.round((now - oldest) / 1000)),
    truncated: start !== undefined || keys.length > MAX_QUEUE_RECORDS,
  };
}

/**
 * The dead letters: queue records with `dead: true`. They left the index, so this is a Scan of the dedupe table
 * (its records live 7 days), filtered to them, at most {@link MAX_SCAN_PAGES} pages.
 */
export async function deadLetterStatus(client: DynamoDBClient, tableName: string): Promise<DeadLetterStatus> {
  let total = 0;
  let newest: DeadLetterStatus['newest'];
  let start: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(#pk, :queue) AND dead = :true',
        ProjectionExpression: 'delivery, deadAt, deadReason',
        ExpressionAttributeNames: { '#pk': DedupeTable.partitionKey },
        ExpressionAttributeValues: { ':queue': { S: DedupeTable.queuePrefix }, ':true': { BOOL: true } },
        ...(start === undefined ? {} : { ExclusiveStartKey: start as never }),
      }),
    );
    for (const item of page.Items ?? []) {
      total += 1;
      const deadAt = Number(item.deadAt?.N ?? 0);
      if (newest === undefined || deadAt > Date.parse(newest.deadAt)) {
        const reason = item.deadReason?.S;
        newest = {
          deliveryId: item.delivery?.S ?? '?',
          deadAt: new Date(deadAt).toISOString(),
          ...(reason === undefined ? {} : { reason }),
        };
      }
    }
    start = page.LastEvaluatedKey;
    pages += 1;
  } while (start !== undefined && pages < MAX_SCAN_PAGES);
  return { count: total, ...(newest === undefined ? {} : { newest }), truncated: start !== undefined };
}

/** The reconciler's last run (one `GetItem` on the dedupe table), or `none` when it has not run (or is not deployed). */
export async function reconcilerStatus(
  client: DynamoDBClient,
  dedupeTable: string,
): Promise<ReconcilerStatus> {
  const run = await readReconcileRun(client, dedupeTable);
  return run === undefined ? { state: 'none' } : { state: 'ran', ...run };
}

/**
 * What needs attention: dead letters, a queue older than 15 minutes, every delivery of the last hour refused, a
 * forge API stop in force (the forge answered with a rate limit).
 */
export function attentionOf(
  report: Pick<StatusReport, 'deadLetters' | 'queue' | 'lastHour'> & Partial<Pick<StatusReport, 'forgeApi'>>,
): string[] {
  const attention: string[] = [];
  for (const owner of report.forgeApi ?? []) {
    if (owner.stop !== undefined) {
      attention.push(
        `the forge api of "${owner.owner}" is stopped until ${owner.stop.until} (${owner.stop.reason}): the forge answered a call with a rate limit`,
      );
    }
  }
  if (report.deadLetters.count > 0) {
    const n = report.deadLetters.count;
    attention.push(`${n}${report.deadLetters.truncated ? '+' : ''} dead letter${n === 1 ? '' : 's'}`);
  }
  const age = report.queue.oldestAgeSeconds;
  if (age !== null && age > QUEUE_AGE_ATTENTION_SECONDS) {
    attention.push(`the oldest queued delivery waits for ${formatAge(age)} (over 15 minutes)`);
  }
  const hour = report.lastHour;
  if (hour.total > 0 && (hour.byOutcome.rejected ?? 0) === hour.total) {
    attention.push(`all ${hour.total} deliveries of the last hour were refused`);
  }
  return attention;
}

/** Window counts of the last hour and the last day. */
export function windows(
  records: readonly DeliveryRecord[],
  now: number,
): { lastHour: WindowCounts; lastDay: WindowCounts } {
  return {
    lastHour: count(records.filter((record) => record.receivedAt >= now - HOUR)),
    lastDay: count(records),
  };
}

/** An age for people: `42s`, `17m 3s`, `2h 5m`, `3d 4h`. */
export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3600)}h`;
}
