import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { type Command, Option } from 'commander';
import { DEFAULT_SOURCE } from '../../aws/core/index.js';
import { type DeliveryDetails, detailsOfHook, hooksOf } from '../../aws/internal.js';
import { type Forge, Forges, replayHeaders } from '../../webhooks/index.js';
import { archiveReplay, busArnOf, replayName, republish } from '../aws-replay.js';
import { ReplayOutcomes } from '../bulk-replay.js';
import {
  addLogOptions,
  awsFailure,
  checkDeliveryId,
  type LogOptions,
  type LogTarget,
  parseSince,
  resolveLogTarget,
  stageBusName,
} from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { postDelivery } from '../http.js';
import { resolveTarget, sourceLabel } from '../local-stack.js';
import { formatBytes, paint, print, printJson, type Spinner, startSpinner } from '../output.js';
import { parseJson, positiveInteger } from '../parse.js';
import { eventLabel } from '../record-format.js';
import { getDelivery } from './deliveries.js';
import { ReplayVias, runBulkReplay } from './replay-bulk.js';
import { runBusReplay } from './replay-bus.js';
import { runDeadLettered } from './replay-dead-lettered.js';
import { REPLAY_HELP } from './replay-help.js';

interface ReplayOptions extends LogOptions {
  source: string;
  hook?: string;
  freshId?: boolean;
  url?: string;
  secret?: string;
  forge?: Forge;
  timeout: number;
  bus?: string;
  eventSource?: string;
  archive?: string;
  rule: string[];
  window: string;
  wait: boolean;
  json?: boolean;
  since?: string;
  until?: string;
  event?: string;
  subscriber?: string;
  outcome: string;
  dryRun?: boolean;
  yes?: boolean;
  rate: number;
  via?: string;
}

/** How often a running archive replay is polled. */
const POLL_MS = 3_000;

/** Registers `replay <delivery-id>`. */
export function registerReplay(program: Command, version: string): void {
  const command = program
    .command('replay')
    .description(
      'send a logged delivery again: to the local ingest, or on AWS from its claim check or the archive',
    )
    .argument('[delivery-id]', 'the delivery id (or select many with --since)')
    .option('--source <name>', 'the webhook source it came in through', DEFAULT_SOURCE)
    .option(
      '--hook <id>',
      'the hook whose delivery to replay, when the id came from two (GitHub\'s X-GitHub-Hook-ID, as "show" lists them)',
    )
    .option('--fresh-id', 'send it with a new delivery id (the dedupe then publishes it again)')
    .option('--url <url>', "local: post here instead of the local stack's webhook URL")
    .option('--secret <secret>', "local: sign with this secret (default: the local stack's)")
    .addOption(
      new Option('--forge <forge>', "local: sign as this forge (default: the record's)").choices(Forges),
    )
    .addOption(
      new Option('--timeout <ms>', 'local: give up after this many milliseconds')
        .default(10_000)
        .argParser((value) => positiveInteger(value, '--timeout')),
    )
    .option(
      '--bus <name|arn>',
      'AWS: the event bus (default: the stage stack\'s "BusName" output; with --table, "forgebridge-<stage>")',
    )
    .option(
      '--event-source <source>',
      'AWS: the EventBridge source (default: FORGEBRIDGE_SOURCE, else "forge.webhooks")',
    )
    .option('--archive <arn>', 'AWS: the archive to replay from when the delivery has no claim check')
    .option(
      '--rule <arn>',
      'AWS: replay only to this rule; repeat for several (default: every rule of the bus)',
      collect,
      [],
    )
    .option('--window <duration>', 'AWS: archive window after the delivery was received (before: 1m)', '5m')
    .option('--no-wait', 'AWS: start the archive replay and return without following it')
    .option('--json', 'print the outcome as JSON')
    .option('--since <time>', 'many: select the deliveries received since then (30m, 2h, 2026-11-23T08:00Z)')
    .option('--until <time>', 'many: ... and before then (default now)')
    .option('--event <event>', 'many: only this event or event.action (issues, issues.opened)')
    .option(
      '--subscriber <name>',
      'many: send to this subscriber only (its function key or name; default: to the bus, for every rule)',
    )
    .addOption(
      new Option(
        '--outcome <outcome>',
        "many: the subscriber's outcome to select (dead-lettered: its messages in the rules' dead-letter queue)",
      )
        .choices([...ReplayOutcomes, 'dead-lettered'])
        .default('error'),
    )
    .addOption(
      new Option(
        '--via <how>',
        "many, AWS: the bus archive's replay to the subscriber's rules (default), or invoking its function",
      ).choices(ReplayVias),
    )
    .option('--dry-run', 'many: print the count and a sample, send nothing')
    .option('--yes', 'many: send without asking (needed off a terminal)')
    .addOption(
      new Option('--rate <n>', 'many: most deliveries sent per second')
        .default(10)
        .argParser((value) => positiveInteger(value, '--rate')),
    );
  addLogOptions(command)
    .addHelpText('after', REPLAY_HELP)
    .action(async (id: string | undefined, options: ReplayOptions, self: Command) => {
      if (options.since !== undefined) {
        if (id !== undefined) throw new CliError('give a delivery id or "--since", not both');
        if (options.outcome === 'dead-lettered') {
          const source = self.getOptionValueSource('source') === 'default' ? undefined : options.source;
          process.exitCode = await runDeadLettered({ ...options, source, since: options.since });
          return;
        }
        const target = await resolveLogTarget(options);
        const source = self.getOptionValueSource('source') === 'default' ? undefined : options.source;
        const many = { ...options, source, since: options.since };
        process.exitCode =
          options.subscriber === undefined
            ? await runBusReplay(many, target)
            : await runBulkReplay(many, target);
        return;
      }
      if (id === undefined) throw new CliError('give a delivery id, or "--since" to select many');
      checkDeliveryId(id);
      const target = await resolveLogTarget(options);
      const details = ofHook(await getDelivery(target, id, options.source), options.hook);
      process.exitCode =
        target.kind === 'local'
          ? await replayLocal(details, options, version)
          : await replayAws(details, target, options);
    });
}

/**
 * The delivery to replay: the records of `--hook`, or of the id's only hook. Two hooks' deliveries of one event
 * share the id: without `--hook` such an id is refused (exit 2), naming the hooks.
 */
export function ofHook(details: DeliveryDetails, hook: string | undefined): DeliveryDetails {
  const hooks = hooksOf(details);
  if (hook === undefined) {
    if (hooks.length <= 1) return details;
    throw new CliError(
      `delivery ${details.deliveryId} came from ${hooks.length} hooks (${hooks.join(', ')}): pass --hook`,
      ExitCodes.usage,
    );
  }
  const picked = hook === '' ? undefined : detailsOfHook(details, hook);
  if (picked === undefined) {
    const known = hooks.length === 0 ? 'its records name no hook' : `hooks: ${hooks.join(', ')}`;
    throw new CliError(
      `delivery ${details.deliveryId} has no record from hook "${hook}" (${known})`,
      ExitCodes.usage,
    );
  }
  return picked;
}

async function replayLocal(
  details: DeliveryDetails,
  options: ReplayOptions,
  version: string,
): Promise<number> {
  const original = details.records.find((record) => record.body !== undefined);
  if (original?.body === undefined) {
    const why = details.latest.payloadOmitted;
    throw new CliError(
      `the log holds no payload of delivery "${details.deliveryId}"${why === undefined ? '' : ` (${why})`}`,
      ExitCodes.failed,
    );
  }
  const source = details.source ?? DEFAULT_SOURCE;
  // The local stack's source of that name: its URL, its own secret, and the record's forge unless "--forge".
  const target = resolveTarget({
    url: options.url,
    secret: options.secret,
    source,
    forge: options.forge ?? forgeOf(original.forge),
  });
  const { secret, forge } = target;
  const id = options.freshId ? randomUUID() : details.deliveryId;
  const headers = replayHeaders(original.headers ?? {}, original.body, { secret, forge, id });
  headers['user-agent'] ??= `forgebridge-cli/${version}`;
  const body = original.body;
  if (!options.json) {
    print(
      `${paint('bold', 'POST')} ${target.url}  ${paint('cyan', eventLabel(original))}  ${paint('dim', `${forge}, ${sourceLabel(target)}, delivery ${id}${id === details.deliveryId ? '' : ` (was ${details.deliveryId})`}${original.hook === undefined ? '' : `, hook ${original.hook}`}, ${formatBytes(body.byteLength)}`)}`,
    );
  }
  const { response, text, durationMs } = await postDelivery(
    target.url,
    headers,
    body,
    options.timeout,
    (error) => {
      const hint = target.local ? ' (is "npm start" running?)' : '';
      const timedOut =
        error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const code = ((error as { cause?: { code?: unknown } }).cause?.code as string | undefined) ?? undefined;
      const reason = timedOut
        ? `no answer within ${options.timeout} ms`
        : code === 'ECONNREFUSED'
          ? 'connection refused'
          : (code ?? 'request failed').toLowerCase();
      return new CliError(`could not reach ${target.url}: ${reason}${hint}`, ExitCodes.unreachable, {
        cause: error,
      });
    },
  );
  const parsed = parseJson(text);
  if (options.json) {
    printJson({
      request: {
        method: 'POST',
        url: target.url,
        delivery: id,
        replayOf: details.deliveryId,
        source,
        ...(original.hook === undefined ? {} : { hook: original.hook }),
        forge,
        bytes: body.byteLength,
      },
      response: {
        status: response.status,
        statusText: response.statusText,
        ok: response.ok,
        body: parsed ?? text,
        durationMs,
      },
    });
  } else {
    print(
      `${paint(['bold', response.ok ? 'green' : 'red'], `${response.status} ${response.statusText}`)}  ${paint('dim', `${durationMs} ms`)}`,
    );
    if (text.length > 0) print(parsed === undefined ? text : JSON.stringify(parsed, null, 2));
  }
  return response.ok ? ExitCodes.ok : ExitCodes.failed;
}

export { replayHeaders };

function forgeOf(value: string | undefined): Forge {
  return value !== undefined && (Forges as readonly string[]).includes(value) ? (value as Forge) : 'generic';
}

async function replayAws(
  details: DeliveryDetails,
  target: LogTarget,
  options: ReplayOptions,
): Promise<number> {
  const stage = options.stage as string;
  const region = target.region;
  const config = region === undefined ? {} : { region };
  const eventBridge = new EventBridgeClient(config);
  const busName = stageBusName(options.bus, target, stage);
  const claimChecked = details.records.find((record) => record.payloadRef !== undefined);
  try {
    if (claimChecked !== undefined) {
      const s3 = new S3Client(config);
      const spinner = startSpinner('re-publishing from the claim check');
      try {
        const id = options.freshId ? randomUUID() : details.deliveryId;
        const done = await republish({
          record: claimChecked,
          deliveryId: id,
          s3,
          eventBridge,
          eventSource: options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || 'forge.webhooks'),
          eventBusName: busName,
        });
        if (options.json) {
          printJson({
            mode: 'republish',
            delivery: id,
            replayOf: details.deliveryId,
            ...(claimChecked.hook === undefined ? {} : { hook: claimChecked.hook }),
            eventId: done.eventId,
            entry: { ...done.entry, Detail: JSON.parse(done.entry.Detail) },
          });
        } else {
          print(
            `${paint(['bold', 'green'], 'published')}  ${paint('cyan', done.entry.DetailType)}  delivery ${id}${claimChecked.hook === undefined ? '' : `  hook ${claimChecked.hook}`}  ${paint('dim', `event ${done.eventId} on ${busName}, from s3://${done.payloadRef.bucket}/${done.payloadRef.key}`)}`,
          );
        }
        return ExitCodes.ok;
      } finally {
        spinner.stop();
        s3.destroy();
      }
    }
    if (options.archive === undefined) {
      throw new CliError(
        `delivery "${details.deliveryId}" has no claim check: pass "--archive <arn>" to replay it from the bus's archive`,
      );
    }
    if (options.freshId)
      throw new CliError(
        '"--fresh-id" needs a claim-checked delivery: an archive replay re-sends the events as archived',
      );
    const windowMs = Date.now() - parseSince(options.window, Date.now(), '--window');
    const busArn = busArnOf(busName, options.archive);
    const name = replayName(details.deliveryId);
    let spinner: Spinner = startSpinner(`replay ${name}: starting`);
    let result: Awaited<ReturnType<typeof archiveReplay>>;
    try {
      result = await archiveReplay({
        eventBridge,
        archiveArn: options.archive,
        busArn,
        ruleArns: options.rule,
        receivedAt: details.latest.receivedAt,
        beforeMs: 60_000,
        afterMs: windowMs,
        name,
        wait: options.wait,
        pollMs: POLL_MS,
        onProgress: (replay, fraction) => {
          spinner.stop();
          const percent = fraction === undefined ? '' : ` ${Math.round(fraction * 100)}%`;
          spinner = startSpinner(`replay ${name}: ${replay.State ?? '?'}${percent}`);
        },
      });
    } finally {
      spinner.stop();
    }
    const ok = result.state === 'COMPLETED' || (!options.wait && result.state !== 'FAILED');
    if (options.json) {
      printJson({
        mode: 'archive',
        ...result,
        eventStartTime: result.eventStartTime.toISOString(),
        eventEndTime: result.eventEndTime.toISOString(),
        lastReplayed: result.lastReplayed?.toISOString(),
      });
    } else {
      print(
        `${paint(['bold', ok ? 'green' : 'red'], result.state.toLowerCase())}  archive replay ${result.name}  ${paint('dim', `${result.eventStartTime.toISOString()} to ${result.eventEndTime.toISOString()} into ${busArn}${options.rule.length > 0 ? ` (${options.rule.length} rule${options.rule.length === 1 ? '' : 's'})` : ''}`)}`,
      );
      if (result.reason !== undefined) print(`  ${paint('dim', 'reason')} ${result.reason}`);
    }
    return ok ? ExitCodes.ok : ExitCodes.failed;
  } catch (error) {
    throw awsFailure(error, target, 'replay');
  } finally {
    eventBridge.destroy();
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
