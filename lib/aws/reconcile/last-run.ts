/**
 * The reconciler's last run, kept in the dedupe table beside its per-delivery items (`reconcile#last-run`), so
 * that `forgebridge status` can say when it last ran and what it did. One small item, overwritten by each run.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DedupeTable } from '../constants.js';
import type { ReconcileReport } from './types.js';

const LAST_RUN_KEY = 'reconcile#last-run';
/** How long the item lives without a new run: 30 days. */
const TTL_SECONDS = 30 * 24 * 60 * 60;

/** What `forgebridge status` shows of the reconciler's last run. */
export interface ReconcileLastRun {
  /** When the run ended, ISO 8601. */
  at: string;
  sources: number;
  listed: number;
  /** Failed at the forge and never ours, summed over the sources. */
  failedAtForge: number;
  redelivered: number;
  recovered: number;
  errors: number;
  rateLimited: boolean;
}

/** Writes a run's summary (never a delivery id or a source's secret); a dry run is not a run. */
export async function recordReconcileRun(
  client: DynamoDBClient,
  tableName: string,
  report: ReconcileReport,
  at: number,
): Promise<void> {
  const failedAtForge = Object.values(report.bySource).reduce((sum, counts) => sum + counts.failedAtForge, 0);
  const run: ReconcileLastRun = {
    at: new Date(at).toISOString(),
    sources: report.sources,
    listed: report.listed,
    failedAtForge,
    redelivered: report.redelivered,
    recovered: report.recovered,
    errors: report.errors,
    rateLimited: report.rateLimited,
  };
  await DynamoDBDocumentClient.from(client).send(
    new PutCommand({
      TableName: tableName,
      Item: {
        [DedupeTable.partitionKey]: LAST_RUN_KEY,
        ...run,
        [DedupeTable.ttlAttribute]: Math.floor(at / 1000) + TTL_SECONDS,
      },
    }),
  );
}

/** The reconciler's last run as recorded in the dedupe table, or `undefined` when none is. */
export async function readReconcileRun(
  client: DynamoDBClient,
  tableName: string,
): Promise<ReconcileLastRun | undefined> {
  const { Item } = await DynamoDBDocumentClient.from(client).send(
    new GetCommand({ TableName: tableName, Key: { [DedupeTable.partitionKey]: LAST_RUN_KEY } }),
  );
  if (Item === undefined || typeof Item.at !== 'string') return undefined;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return {
    at: Item.at,
    sources: count(Item.sources),
    listed: count(Item.listed),
    failedAtForge: count(Item.failedAtForge),
    redelivered: count(Item.redelivered),
    recovered: count(Item.recovered),
    errors: count(Item.errors),
    rateLimited: Item.rateLimited === true,
  };
}
