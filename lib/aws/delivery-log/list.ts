/**
 * The delivery log's listing: the `by-day` index read shard by shard and day by day, newest first, with its
 * filters and cursor.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { Forges, resolvePreset } from '../../webhooks/index.js';
import { AwsDefaults, DeliveryLogTable } from '../constants.js';
import { positive } from '../rules.js';
import { dayOf, epochMs, type LogTable } from './item.js';
import {
  type DeliveryListPage,
  type DeliveryListQuery,
  DeliveryOutcomes,
  type DeliveryRecord,
  DeliveryVerdicts,
} from './schema.js';
import { attachHooks, attachSubscribers } from './subscribers.js';

const MAX_LIMIT = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const SUMMARY = new Set<string>(DeliveryLogTable.listAttributes);

function encodeCursor(at: string): string {
  return Buffer.from(JSON.stringify({ b: at }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const { b } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { b?: unknown };
    if (typeof b === 'string' && /^\d{4}-\d{2}-\d{2}T[\d:.]+Z#[\w-]+$/.test(b)) return b;
  } catch {
    // falls through to the error below
  }
  throw new TypeError('"cursor" is not a cursor of this log');
}

/** {@link DeliveryLog.list}: a page of records from the `by-day` index. */
export async function listRecords(table: LogTable, query: DeliveryListQuery): Promise<DeliveryListPage> {
  const limit = query.limit ?? AwsDefaults.deliveryLogListLimit;
  if (!Number.isInteger(limit)) throw new TypeError(`"limit" must be a number from 1 to ${MAX_LIMIT}`);
  positive('limit', limit, MAX_LIMIT);
  if (query.status !== undefined && !(DeliveryOutcomes as readonly string[]).includes(query.status)) {
    throw new TypeError(`"status" must be one of ${DeliveryOutcomes.map((v) => `"${v}"`).join(', ')}`);
  }
  if (query.verdict !== undefined && !(DeliveryVerdicts as readonly string[]).includes(query.verdict)) {
    throw new TypeError(`"verdict" must be one of ${DeliveryVerdicts.map((v) => `"${v}"`).join(', ')}`);
  }
  if (query.event !== undefined && (typeof query.event !== 'string' || query.event === '')) {
    throw new TypeError('"event" must be a non-empty string');
  }
  const now = Date.now();
  const since = epochMs('since', query.since, now - table.ttlSeconds * 1000);
  const until = query.until === undefined ? undefined : epochMs('until', query.until, now);
  let upper = until === undefined ? undefined : new Date(until).toISOString();
  if (query.cursor !== undefined) {
    const before = decodeCursor(query.cursor);
    if (upper === undefined || before < upper) upper = before;
  }
  const lower = new Date(since).toISOString();
  // A writer's clock a little ahead of ours still lands in a day we read.
  const newestDay = upper === undefined ? dayOf(now + 5 * 60 * 1000) : upper.slice(0, 10);
  const oldestDay = dayOf(since);

  const filters: string[] = [`#exp > :nowSeconds`];
  const names: Record<string, string> = { '#exp': DeliveryLogTable.ttlAttribute };
  const values: Record<string, unknown> = { ':nowSeconds': Math.floor(now / 1000) };
  if (query.event !== undefined) {
    const dot = query.event.indexOf('.');
    names['#event'] = 'event';
    values[':event'] = dot === -1 ? query.event : query.event.slice(0, dot);
    filters.push('#event = :event');
    if (dot !== -1) {
      names['#action'] = 'action';
      values[':action'] = query.event.slice(dot + 1);
      filters.push('#action = :action');
    }
  }
  for (const [field, value] of [
    ['outcome', query.status],
    ['verdict', query.verdict],
    ['source', query.source],
  ] as const) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    filters.push(`#${field} = :${field}`);
  }

  const found: Record<string, unknown>[] = [];
  let more = false;
  for (let day = newestDay; day >= oldestDay; day = dayOf(Date.parse(`${day}T00:00:00Z`) - DAY_MS)) {
    const need = limit - found.length;
    const shards = await Promise.all(
      Array.from({ length: table.shards }, (_, shard) =>
        queryShard(table, `${day}#${shard}`, lower, upper, need, filters, names, values),
      ),
    );
    const merged = shards
      .flatMap((shard) => shard.items)
      .sort((a, b) =>
        String(b[DeliveryLogTable.atAttribute]).localeCompare(String(a[DeliveryLogTable.atAttribute])),
      );
    found.push(...merged.slice(0, need));
    if (found.length >= limit) {
      more = merged.length > need || shards.some((shard) => shard.more) || day > oldestDay;
      break;
    }
  }
  const listed = found.map((item) => {
    const summary: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(item)) if (SUMMARY.has(name)) summary[name] = value;
    return { record: summary as unknown as DeliveryRecord, at: String(item[DeliveryLogTable.atAttribute]) };
  });
  const records = listed.map(({ record }) => record);
  // The hook is not in the list index: read it for the records of a forge that names hooks.
  await attachHooks(
    table,
    listed.filter(({ record }) => record.forge !== undefined && forgeNamesHooks(record.forge)),
  );
  if (query.subscribers === true) await attachSubscribers(table, records);
  const last = found.at(-1);
  return more && last !== undefined
    ? { records, cursor: encodeCursor(String(last[DeliveryLogTable.atAttribute])) }
    : { records };
}

/** Up to `need` matching index items of one day shard, newest first, paging past filtered-out items. */
async function queryShard(
  table: LogTable,
  day: string,
  lower: string,
  upper: string | undefined,
  need: number,
  filters: string[],
  names: Record<string, string>,
  values: Record<string, unknown>,
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  const filtered = filters.length > 1;
  do {
    const input: QueryCommandInput = {
      TableName: table.tableName,
      IndexName: DeliveryLogTable.listIndex,
      KeyConditionExpression:
        upper === undefined
          ? '#day = :day AND #at >= :lower'
          : '#day = :day AND #at BETWEEN :lower AND :upper',
      FilterExpression: filters.join(' AND '),
      ExpressionAttributeNames: {
        ...names,
        '#day': DeliveryLogTable.dayAttribute,
        '#at': DeliveryLogTable.atAttribute,
      },
      ExpressionAttributeValues: {
        ...values,
        ':day': day,
        ':lower': lower,
        // BETWEEN is inclusive: the cursor's own record is dropped below.
        ...(upper === undefined ? {} : { ':upper': upper }),
      },
      ScanIndexForward: false,
      // A filtered read evaluates more items per page than it returns.
      Limit: filtered ? Math.max(need, 100) : need + 1,
      ExclusiveStartKey: start,
    };
    const page = await table.documents.send(new QueryCommand(input));
    for (const item of page.Items ?? []) {
      if (upper !== undefined && item[DeliveryLogTable.atAttribute] === upper) continue;
      items.push(item);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined && items.length < need);
  return { items: items.slice(0, need), more: items.length > need || start !== undefined };
}

/** Whether a forge's deliveries name the hook that sent them (GitHub's `X-GitHub-Hook-ID`). */
function forgeNamesHooks(forge: string): boolean {
  return (Forges as readonly string[]).includes(forge) && resolvePreset(forge).hookHeaders.length > 0;
}
