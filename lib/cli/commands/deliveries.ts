import { type Command, Option } from 'commander';
import { DEFAULT_SOURCE } from '../../aws/core/index.js';
import {
  type DeliveryDetails,
  type DeliveryOutcome,
  DeliveryOutcomes,
  type DeliveryRecord,
  type DeliveryVerdict,
  DeliveryVerdicts,
  hooksOf,
  type SubscriberOutcome,
} from '../../aws/internal.js';
import {
  addLogOptions,
  awsFailure,
  checkDeliveryId,
  type LogOptions,
  type LogTarget,
  openLog,
  parseSince,
  resolveLogTarget,
} from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { formatBytes, paint, print, printJson, startSpinner } from '../output.js';
import {
  bodyText,
  eventLabel,
  formatTime,
  jsonRecord,
  paintOutcome,
  paintStatus,
  paintVerdict,
  subscribersLabel,
  subscribersText,
} from '../record-format.js';

interface DeliveriesOptions extends LogOptions {
  event?: string;
  status?: DeliveryOutcome;
  verdict?: DeliveryVerdict;
  source?: string;
  since?: string;
  until?: string;
  limit: number;
  json?: boolean;
}

interface ShowOptions extends LogOptions {
  source: string;
  body?: boolean;
  json?: boolean;
}

/** Registers `deliveries` and `show <delivery-id>`. */
export function registerDeliveries(program: Command): void {
  const deliveries = program
    .command('deliveries')
    .description('list the delivery log, newest first (the local stack, or a deployed stage with "--stage")')
    .option('--event <event[.action]>', 'only this event ("issues") or event and action ("issues.opened")')
    .addOption(new Option('--status <outcome>', 'only this outcome').choices(DeliveryOutcomes))
    .addOption(new Option('--verdict <verdict>', 'only this signature verdict').choices(DeliveryVerdicts))
    .option('--source <name>', 'only deliveries of this webhook source')
    .option('--since <when>', 'from this long ago (30m, 1h, 2d) or this time (2026-11-23T08:00Z)', '1d')
    .option('--until <when>', 'up to this long ago or this time (default: now)')
    .addOption(
      new Option('--limit <n>', 'most records shown (1 to 1000)')
        .default(50)
        .argParser((value) => boundedInteger(value, '--limit', 1000)),
    )
    .option('--json', 'print the records as JSON');
  addLogOptions(deliveries)
    .addHelpText(
      'after',
      `
Examples:
  $ forgebridge deliveries
  $ forgebridge deliveries --event issues.opened --status failed --since 30m
  $ forgebridge deliveries --stage prod --region eu-west-1 --since 2026-11-23T08:00Z --json`,
    )
    .action(async (options: DeliveriesOptions) => {
      process.exitCode = await list(options);
    });

  const show = program
    .command('show')
    .description('show one delivery: every request of it, the verdict and diagnosis, subscribers, headers')
    .argument('<delivery-id>', "the delivery id (the forge's delivery header)")
    .option('--source <name>', 'the webhook source it came in through', DEFAULT_SOURCE)
    .option('--body', 'also print the stored payload')
    .option('--json', 'print the delivery as JSON (the body as "body" text, or base64 with "bodyEncoding")');
  addLogOptions(show)
    .addHelpText(
      'after',
      `
Signature values are masked in the log; the secret is never stored nor printed.

Examples:
  $ forgebridge show 0b1e4c2a-...
  $ forgebridge show 72d3162e-... --source gitlab --body
  $ forgebridge show 0b1e4c2a-... --stage prod --json`,
    )
    .action(async (id: string, options: ShowOptions) => {
      process.exitCode = await showDelivery(id, options);
    });
}

async function list(options: DeliveriesOptions): Promise<number> {
  const now = Date.now();
  const since = parseSince(options.since ?? '1d', now, '--since');
  const until = options.until === undefined ? undefined : parseSince(options.until, now, '--until');
  if (options.event !== undefined && !/^[a-z0-9_]+(\.[a-z0-9_]+)?$/i.test(options.event)) {
    throw new CliError('"--event" must be an event name or "event.action"');
  }
  const target = await resolveLogTarget(options);
  const { log, client } = openLog(target);
  const spinner = startSpinner(`reading the delivery log (${target.label})`);
  let records: DeliveryRecord[];
  try {
    ({ records } = await log.list({
      event: options.event,
      status: options.status,
      verdict: options.verdict,
      source: options.source,
      since,
      until,
      limit: options.limit,
      subscribers: true,
    }));
  } catch (error) {
    throw logFailure(error, target);
  } finally {
    spinner.stop();
    client.destroy();
  }
  if (options.json) {
    // A hook column: once a listed record names its hook, every record says its own (null: none).
    const withHooks = records.some((record) => record.hook !== undefined);
    printJson(
      records.map((record) =>
        withHooks ? { ...jsonRecord(record), hook: record.hook ?? null } : jsonRecord(record),
      ),
    );
    return ExitCodes.ok;
  }
  if (records.length === 0) {
    print(paint('dim', `no deliveries in the log of the ${target.label} for this query`));
    return ExitCodes.ok;
  }
  printTable(records);
  return ExitCodes.ok;
}

async function showDelivery(id: string, options: ShowOptions): Promise<number> {
  checkDeliveryId(id);
  const target = await resolveLogTarget(options);
  const details = await getDelivery(target, id, options.source);
  if (options.json) {
    printJson(jsonDetails(details));
    return ExitCodes.ok;
  }
  printDetails(details, options.body === true);
  return ExitCodes.ok;
}

/** A delivery from the log; a `CliError` (exit 2) naming it when the log has no record of it. */
export async function getDelivery(target: LogTarget, id: string, source: string): Promise<DeliveryDetails> {
  const { log, client } = openLog(target);
  const spinner = startSpinner(`reading delivery ${id} (${target.label})`);
  let details: DeliveryDetails | undefined;
  try {
    details = await log.get(id, { source });
  } catch (error) {
    throw logFailure(error, target);
  } finally {
    spinner.stop();
    client.destroy();
  }
  if (details === undefined) {
    const where = source === DEFAULT_SOURCE ? '' : ` of source "${source}"`;
    throw new CliError(`no delivery "${id}"${where} in the log of the ${target.label}`, ExitCodes.usage);
  }
  return details;
}

/** A failed read of the log as one line: the table is named when it is missing. */
export function logFailure(error: unknown, target: LogTarget): CliError {
  if (error instanceof TypeError) return new CliError(error.message);
  return awsFailure(error, target, `delivery log table "${target.tableName}"`);
}

function printTable(records: DeliveryRecord[]): void {
  // The HOOK column shows when a listed record names the hook that sent it (GitHub's X-GitHub-Hook-ID): two
  // hooks' deliveries of one event share a delivery id.
  const withHooks = records.some((record) => record.hook !== undefined);
  const rows = records.map((record) => [
    formatTime(record.receivedAt),
    eventLabel(record),
    record.deliveryId ?? '(invalid id)',
    record.source ?? '-',
    ...(withHooks ? [record.hook ?? '-'] : []),
    String(record.httpStatus),
    record.verdict,
    record.outcome,
    subscribersText(record.subscribers),
  ]);
  const headings = [
    'TIME',
    'EVENT',
    'DELIVERY',
    'SOURCE',
    ...(withHooks ? ['HOOK'] : []),
    'HTTP',
    'VERDICT',
    'OUTCOME',
    'SUBSCRIBERS',
  ];
  const widths = headings.map((heading, column) =>
    Math.max(heading.length, ...rows.map((row) => (row[column] as string).length)),
  );
  // Padding is measured on the plain text; the colours go around it.
  const cell = (painted: string, plain: string, column: number) =>
    painted + ' '.repeat((widths[column] as number) - plain.length);
  print(
    paint(
      'bold',
      headings
        .map((heading, column) => cell(heading, heading, column))
        .join('  ')
        .trimEnd(),
    ),
  );
  records.forEach((record, index) => {
    const row = rows[index] as string[];
    const plain = (column: number) => row[column] as string;
    const at = withHooks ? 5 : 4;
    const cells = [
      cell(paint('dim', plain(0)), plain(0), 0),
      cell(paint('cyan', plain(1)), plain(1), 1),
      cell(plain(2), plain(2), 2),
      cell(plain(3), plain(3), 3),
      ...(withHooks ? [cell(plain(4), plain(4), 4)] : []),
      cell(paintStatus(record.httpStatus), plain(at), at),
      cell(paintVerdict(record.verdict), plain(at + 1), at + 1),
      cell(paintOutcome(record.outcome), plain(at + 2), at + 2),
      subscribersLabel(record.subscribers),
    ];
    print(cells.join('  ').trimEnd());
  });
  print(paint('dim', `${records.length} deliver${records.length === 1 ? 'y' : 'ies'}, newest first`));
}

function printDetails(details: DeliveryDetails, withBody: boolean): void {
  const { latest } = details;
  const hooks = hooksOf(details);
  print(`${paint('bold', 'delivery')}  ${details.deliveryId}`);
  print(`${paint('bold', 'event')}     ${paint('cyan', eventLabel(latest))}`);
  const native =
    latest.nativeEvent === undefined
      ? ''
      : `  (${latest.nativeEvent}${latest.nativeAction === undefined ? '' : `, ${latest.nativeAction}`})`;
  print(`${paint('bold', 'forge')}     ${latest.forge ?? '-'}${native}`);
  print(`${paint('bold', 'source')}    ${details.source ?? DEFAULT_SOURCE}`);
  if (hooks.length === 1) print(`${paint('bold', 'hook')}      ${hooks[0]}`);
  if (hooks.length > 1) {
    // GitHub gives one event one GUID at every hook (two Apps on one URL): each hook's delivery is its own.
    print(
      `${paint('bold', 'hooks')}     ${hooks.length} hooks: ${hooks.join(', ')}  ${paint('dim', '(one event delivered to each hook, each its own delivery: replay takes --hook)')}`,
    );
  }
  print();
  print(paint('bold', `requests (${details.records.length}, newest first)`));
  for (const record of details.records) {
    const parts = [paint('dim', formatTime(record.receivedAt))];
    if (record.hook !== undefined) parts.push(paint('cyan', `hook ${record.hook}`));
    parts.push(
      paintStatus(record.httpStatus),
      paintVerdict(record.verdict),
      paintOutcome(record.outcome),
      formatBytes(record.bodyBytes),
    );
    if (record.secretIndex !== undefined) parts.push(paint('dim', `secret #${record.secretIndex}`));
    if (record.eventId !== undefined) parts.push(paint('dim', `event ${record.eventId}`));
    print(`  ${parts.join('  ')}`);
    if (record.reason !== undefined) print(`    ${paint('dim', 'reason')} ${record.reason}`);
    if (record.errorCode !== undefined) print(`    ${paint('dim', 'error')}  ${record.errorCode}`);
    if (record.payloadRef !== undefined) {
      print(
        `    ${paint('dim', 'claim check')} s3://${record.payloadRef.bucket}/${record.payloadRef.key} (${formatBytes(record.payloadRef.bytes)})`,
      );
    }
    for (const reason of record.diagnosis ?? []) print(`    ${paint('red', '-')} ${reason.message}`);
  }
  // One section per hook when the records come from two: each hook has its own subscribers, headers and payload.
  const groups = hookGroups(details);
  if (groups.length <= 1) {
    printHookSections(details.records, details.subscribers, '', latest, withBody);
    return;
  }
  for (const group of groups) {
    const of = group.hook === undefined ? ' of the records without a hook' : ` of hook ${group.hook}`;
    printHookSections(group.records, group.records[0]?.subscribers ?? {}, of, group.records[0], withBody);
  }
}

/** The records of each hook (sorted as {@link hooksOf}), then those that name none (from before the upgrade). */
function hookGroups(details: DeliveryDetails): { hook: string | undefined; records: DeliveryRecord[] }[] {
  const groups = hooksOf(details).map((hook) => ({
    hook: hook as string | undefined,
    records: details.records.filter((record) => record.hook === hook),
  }));
  const none = details.records.filter((record) => record.hook === undefined);
  if (none.length > 0) groups.push({ hook: undefined, records: none });
  return groups;
}

/** The subscribers, headers and payload of one hook's records (`of`: ` of hook 1101`, or `` for all). */
function printHookSections(
  records: readonly DeliveryRecord[],
  subscriberOutcomes: Record<string, SubscriberOutcome>,
  of: string,
  latest: DeliveryRecord | undefined,
  withBody: boolean,
): void {
  print();
  const subscribers = Object.entries(subscriberOutcomes);
  print(paint('bold', `subscribers${of} (${subscribers.length})`));
  if (subscribers.length === 0) print(`  ${paint('dim', 'none reported')}`);
  for (const [name, outcome] of subscribers.sort(([a], [b]) => a.localeCompare(b))) {
    const error =
      outcome.error === undefined
        ? ''
        : `  ${outcome.error.name}${outcome.error.message === undefined ? '' : `: ${outcome.error.message}`}`;
    print(
      `  ${name}  ${paint(outcome.outcome === 'ok' ? 'green' : 'red', outcome.outcome)}  ${paint('dim', `${outcome.durationMs} ms${outcome.forgeWaitMs === undefined ? '' : `, ${outcome.forgeWaitMs} ms waiting for the forge api`}`)}${error}`,
    );
  }
  const withHeaders = records.find((record) => record.headers !== undefined);
  print();
  print(paint('bold', `headers${of} (signature values masked)`));
  for (const [name, value] of Object.entries(withHeaders?.headers ?? {}))
    print(`  ${paint('dim', `${name}:`)} ${value}`);
  print();
  const stored = records.find((record) => record.body !== undefined);
  if (stored?.body === undefined) {
    const why = latest?.payloadOmitted;
    print(
      `${paint('bold', `payload${of}`)}  ${paint('dim', `not stored${why === undefined ? '' : ` (${why})`}`)}`,
    );
  } else if (!withBody) {
    print(
      `${paint('bold', `payload${of}`)}  ${formatBytes(stored.body.byteLength)} stored ${paint('dim', '("--body" prints it)')}`,
    );
  } else {
    print(paint('bold', `payload${of}`));
    const { text } = bodyText(stored.body);
    let shown = text;
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON: printed as stored.
    }
    print(shown);
  }
}

function jsonDetails(details: DeliveryDetails): Record<string, unknown> {
  const hooks = hooksOf(details);
  // Each hook's delivery has its own subscribers: by hook when the records name theirs.
  const byHook = Object.fromEntries(
    hookGroups(details).flatMap((group) =>
      group.hook === undefined ? [] : [[group.hook, group.records[0]?.subscribers ?? {}]],
    ),
  );
  return {
    deliveryId: details.deliveryId,
    source: details.source ?? DEFAULT_SOURCE,
    ...(hooks.length > 0 ? { hooks, subscribersByHook: byHook } : {}),
    subscribers: details.subscribers,
    records: details.records.map((record) => {
      const { subscribers: _subscribers, ...rest } = record;
      return jsonRecord(rest);
    }),
  };
}

function boundedInteger(value: string, option: string, max: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > max) {
    throw new CliError(`"${option}" must be an integer from 1 to ${max}`);
  }
  return number;
}
