import type { Command } from 'commander';
import { DeliveryOutcomes, DeliveryVerdicts } from '../../aws/internal.js';
import {
  addLogOptions,
  type LogOptions,
  type LogTarget,
  openLog,
  resolveLogTarget,
  stackOutputs,
  stageRegion,
} from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { governorLine, governorStatus } from '../governor-status.js';
import { oneLine, paint, print, printJson, startSpinner } from '../output.js';
import { paintOutcome, paintVerdict } from '../record-format.js';
import {
  attentionOf,
  deadLetterStatus,
  formatAge,
  queueStatus,
  readLastDay,
  reconcilerStatus,
  type StatusReport,
  sourceStatuses,
  windows,
} from '../stage-status.js';
import { readStackState, stateFile } from '../state-file.js';
import { logFailure } from './deliveries.js';

interface StatusOptions extends LogOptions {
  dedupeTable?: string;
  tokenTable?: string;
  json?: boolean;
}

/** The local stack's dedupe table (`forgebridge-<stage>-dedupe`, stage `local`). */
export const LOCAL_DEDUPE_TABLE = 'forgebridge-local-dedupe';
/** The local stack's token table, where the forge API governor keeps each token owner's budget. */
export const LOCAL_TOKEN_TABLE = 'forgebridge-local-tokens';
const TOKEN_TABLE_OUTPUT = 'TokenTableName';
/** The stack outputs `status` reads on a stage. */
const DEDUPE_TABLE_OUTPUT = 'DedupeTableName';
const DASHBOARD_OUTPUT = 'DashboardUrl';

/** Registers `status`. */
export function registerStatus(program: Command): void {
  const command = program
    .command('status')
    .description(
      'one screen: last delivery per source, counts by verdict and outcome, queue, dead letters, dashboard',
    )
    .option(
      '--dedupe-table <name>',
      'dedupe table holding the queue (default: the local stack\'s, or the stage stack\'s "DedupeTableName" output)',
    )
    .option(
      '--token-table <name>',
      'token table holding the forge API governor (default: the local stack\'s, or the stage stack\'s "TokenTableName" output)',
    )
    .option('--json', 'print the status as JSON');
  addLogOptions(command)
    .addHelpText(
      'after',
      `
Reads the delivery log's last day, the queue records of the dedupe table (its "queue-due" index, and a scan
for dead letters), the forge API governor's items of the token table (calls in flight, a stop the forge
imposed, the primary budget left), and on a stage the stack's "DashboardUrl" output.

Examples:
  $ forgebridge status
  $ forgebridge status --stage prod --region eu-west-1
  $ forgebridge status --stage prod --json

Exit codes: 0 nothing needs attention, 1 something does (dead letters, a queued delivery older than
15 minutes, every delivery of the last hour refused, a forge API stop in force), 2 bad input, 3 log not reachable.`,
    )
    .action(async (options: StatusOptions) => {
      const report = await collect(options);
      if (options.json) printJson(report);
      else printReport(report);
      process.exitCode = report.attention.length > 0 ? ExitCodes.failed : ExitCodes.ok;
    });
}

async function collect(options: StatusOptions): Promise<StatusReport> {
  let dedupeTable: string;
  let tokenTable: string;
  let dashboardUrl: string | null = null;
  let target: LogTarget;
  let known: string[] = [];
  if (options.stage !== undefined) {
    const region = stageRegion(options);
    const stack = options.stack ?? `forgebridge-${options.stage}`;
    let outputs: Record<string, string> = {};
    try {
      outputs = await stackOutputs(stack, region);
    } catch (error) {
      // With both tables named, the stack is read only for the dashboard's URL.
      if (options.table === undefined || options.dedupeTable === undefined) throw error;
    }
    const table = options.table ?? required(outputs, 'DeliveriesTableName', stack, '--table');
    dedupeTable = options.dedupeTable ?? required(outputs, DEDUPE_TABLE_OUTPUT, stack, '--dedupe-table');
    tokenTable =
      nonEmpty(options.tokenTable) ?? outputs[TOKEN_TABLE_OUTPUT] ?? `forgebridge-${options.stage}-tokens`;
    dashboardUrl = outputs[DASHBOARD_OUTPUT] ?? null;
    target = await resolveLogTarget({ ...options, table });
  } else {
    target = await resolveLogTarget(options);
    const env = process.env;
    dedupeTable =
      nonEmpty(options.dedupeTable) ??
      nonEmpty(env.FORGEBRIDGE_DEDUPE_TABLE) ??
      readStackState(stateFile(env)).names?.dedupeTable ??
      LOCAL_DEDUPE_TABLE;
    tokenTable =
      nonEmpty(options.tokenTable) ??
      nonEmpty(env.FORGEBRIDGE_TOKEN_TABLE) ??
      readStackState(stateFile(env)).names?.tokenTable ??
      LOCAL_TOKEN_TABLE;
    if (target.fromState) known = (readStackState(stateFile(env)).sources ?? []).map((source) => source.name);
  }
  const { log, client } = openLog(target);
  const spinner = startSpinner(`reading the status (${target.label})`);
  const now = Date.now();
  try {
    const { records, truncated } = await readLastDay(log, now).catch((error: unknown) => {
      throw logFailure(error, target);
    });
    const counts = windows(records, now);
    const sources = await sourceStatuses(log, records, now, known).catch((error: unknown) => {
      throw logFailure(error, target);
    });
    const dedupe = { ...target, tableName: dedupeTable };
    const queue = await queueStatus(client, dedupeTable, now).catch((error: unknown) => {
      throw logFailure(error, dedupe);
    });
    const deadLetters = await deadLetterStatus(client, dedupeTable).catch((error: unknown) => {
      throw logFailure(error, dedupe);
    });
    const reconciler = await reconcilerStatus(client, dedupeTable).catch((error: unknown) => {
      throw logFailure(error, dedupe);
    });
    // The forge API line is a part of the status, never its failure: a token table the caller cannot read is said so.
    const forgeApi = await governorStatus(client, tokenTable, now).catch(() => null);
    const partial = { queue, deadLetters, lastHour: counts.lastHour, forgeApi };
    return {
      target: target.label,
      at: new Date(now).toISOString(),
      deliveriesTable: target.tableName,
      dedupeTable,
      dashboardUrl,
      sources,
      ...counts,
      truncated,
      queue,
      deadLetters,
      reconciler,
      tokenTable,
      forgeApi,
      attention: attentionOf(partial),
    };
  } finally {
    spinner.stop();
    client.destroy();
  }
}

function required(outputs: Record<string, string>, key: string, stack: string, option: string): string {
  const value = outputs[key];
  if (value === undefined || value === '') {
    throw new CliError(`stack "${stack}" has no "${key}" output: pass "${option}"`);
  }
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}

/** The report as one screen. */
function printReport(report: StatusReport): void {
  const label = (text: string) => paint('bold', text.padEnd(13));
  const now = Date.parse(report.at);
  print(`${paint('bold', 'forgebridge status')}  ${report.target}  ${paint('dim', report.at)}`);
  if (report.dashboardUrl !== null) print(`${label('dashboard')}${report.dashboardUrl}`);
  print();
  print(paint('bold', 'sources'));
  if (report.sources.length === 0) print(`  ${paint('dim', 'no deliveries in the log')}`);
  const width = Math.max(0, ...report.sources.map((source) => source.source.length));
  for (const source of report.sources) {
    const last = source.last;
    const counts = paint('dim', `${source.lastHour} in the last hour, ${source.lastDay} in the last day`);
    if (last === undefined) {
      print(`  ${source.source.padEnd(width)}  ${paint('dim', 'no delivery in the log')}`);
      continue;
    }
    const ago = formatAge(Math.max(0, Math.round((now - Date.parse(last.receivedAt)) / 1000)));
    print(
      `  ${source.source.padEnd(width)}  last ${ago} ago  ${paint('cyan', last.event ?? '-')}  ${last.httpStatus} ${paintOutcome(last.outcome)}  ${paintVerdict(last.verdict)}  ${counts}`,
    );
  }
  print();
  const more = report.truncated ? '+' : '';
  print(`${paint('bold', 'deliveries'.padEnd(22))}${'last hour'.padStart(10)}${'last day'.padStart(10)}`);
  const row = (name: string, hour: number, day: number, paintName: (text: string) => string) =>
    print(`  ${paintName(name.padEnd(20))}${String(hour).padStart(10)}${`${day}${more}`.padStart(10)}`);
  row('total', report.lastHour.total, report.lastDay.total, (text) => text);
  for (const outcome of DeliveryOutcomes) {
    const day = report.lastDay.byOutcome[outcome];
    if (day !== undefined) row(outcome, report.lastHour.byOutcome[outcome] ?? 0, day, paintOutcome);
  }
  for (const verdict of DeliveryVerdicts) {
    const day = report.lastDay.byVerdict[verdict];
    if (day !== undefined) row(verdict, report.lastHour.byVerdict[verdict] ?? 0, day, paintVerdict);
  }
  print();
  const queue = report.queue;
  const waiting = `${queue.depth}${queue.truncated ? '+' : ''} waiting`;
  print(
    `${label('queue')}${queue.oldestAgeSeconds === null ? paint('dim', 'empty') : `${waiting}, the oldest for ${formatAge(queue.oldestAgeSeconds)}`}`,
  );
  const dead = report.deadLetters;
  print(
    `${label('dead letters')}${dead.count === 0 ? paint('dim', 'none') : paint('red', `${dead.count}${dead.truncated ? '+' : ''}`)}${dead.newest === undefined ? '' : paint('dim', `  newest ${dead.newest.deliveryId} at ${dead.newest.deadAt}${dead.newest.reason === undefined ? '' : ` (${oneLine(dead.newest.reason)})`}`)}`,
  );
  const run = report.reconciler;
  print(
    `${label('reconciler')}${
      run.state === 'none'
        ? paint('dim', 'no run recorded')
        : `last run ${run.at}: ${run.sources} source${run.sources === 1 ? '' : 's'}, ${run.failedAtForge} failed at the forge, ${run.redelivered} redelivered, ${run.recovered} recovered${run.errors > 0 ? paint('red', `, ${run.errors} error${run.errors === 1 ? '' : 's'}`) : ''}${run.rateLimited ? ', stopped on a rate limit' : ''}`
    }`,
  );
  const owners = report.forgeApi;
  if (owners === null)
    print(`${label('forge api')}${paint('dim', `token table "${report.tokenTable}" not readable`)}`);
  else if (owners.length === 0)
    print(`${label('forge api')}${paint('dim', 'no governed call in the last hour')}`);
  else
    for (const [index, owner] of owners.entries())
      print(`${index === 0 ? label('forge api') : ' '.repeat(13)}${governorLine(owner)}`);
  print();
  if (report.attention.length === 0) print(paint('green', 'nothing needs attention'));
  for (const line of report.attention) print(`${paint(['bold', 'red'], 'attention')}  ${line}`);
}
