import { randomUUID } from 'node:crypto';
import { type Command, Option } from 'commander';
import { DELIVERY_ID_RULE, isDeliveryId } from '../../aws/core/index.js';
import {
  asSentBy,
  deliveryHeaders,
  type Forge,
  Forges,
  forgeOwnSample,
  forgeOwnSampleNames,
  hasOwnShapes,
  resolvePreset,
} from '../../webhooks/index.js';
import { CliError, ExitCodes } from '../errors.js';
import { type EventName, findSample, forgeSpelling, parseEventName } from '../events.js';
import { readPayloadFile } from '../files.js';
import { NETWORK_REASONS, postDelivery } from '../http.js';
import { resolveTarget, sourceLabel, type Target } from '../local-stack.js';
import { formatBytes, paint, print, printJson } from '../output.js';
import { parseJson, positiveInteger } from '../parse.js';

interface SendOptions {
  file?: string;
  url?: string;
  secret?: string;
  forge?: Forge;
  source?: string;
  id?: string;
  nativeEvent?: string;
  timeout: number;
  json?: boolean;
}

/** The most of a response body the CLI reads and shows. */
const MAX_RESPONSE_CHARS = 64 * 1024;

/** Registers `send <event[.action]>`. */
export function registerSend(program: Command, version: string): void {
  program
    .command('send')
    .description('sign a catalogue sample (or a payload file) the way the forge does and post it')
    .argument('<event[.action]>', 'catalogue event name, for example "issues.opened" or "push"')
    .option('-f, --file <payload.json>', 'post this JSON file (its exact bytes) instead of the sample')
    .option('--url <url>', 'webhook URL (default: the local stack\'s, as "npm start" prints it)')
    .option('--secret <secret>', "webhook secret (default: the local source's own secret)")
    .addOption(
      new Option(
        '--forge <forge>',
        "write and sign the headers, and shape the sample, as this forge does (default: the local source's forge, else generic); alone, post to the local source of this forge",
      ).choices(Forges),
    )
    .option(
      '--source <name>',
      'post to this webhook source of the ingest (the local stack\'s, or "<url>/<name>")',
    )
    .option('--id <delivery-id>', 'delivery id (default: a new UUID)')
    .option('--native-event <name>', 'event header value when the forge names it its own way ("Issue Hook")')
    .addOption(
      new Option('--timeout <ms>', 'give up after this many milliseconds')
        .default(10_000)
        .argParser((value) => positiveInteger(value, '--timeout')),
    )
    .option('--json', 'print the request and the answer as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ forgebridge send issues.opened
  $ forgebridge send push --forge gitea --json
  $ forgebridge send pull_request.opened --forge gitlab
  $ forgebridge send pull_request.opened --source bitbucket
  $ forgebridge send pull_request.opened --file pr.json --url https://example.com/webhooks --secret "$SECRET"`,
    )
    .action(async (name: string, options: SendOptions) => {
      process.exitCode = await send(name, options, version);
    });
}

async function send(name: string, options: SendOptions, version: string): Promise<number> {
  const event = parseEventName(name);
  const target = resolveTarget({
    url: options.url,
    secret: options.secret,
    source: options.source,
    forge: options.forge,
  });
  const forge = target.forge;
  const { body, nativeName } = await payloadOf(event, options.file, forge);
  if (options.id !== undefined && !isDeliveryId(options.id)) {
    throw new CliError(`"--id" must be ${DELIVERY_ID_RULE}`);
  }
  const id = options.id ?? randomUUID();
  const native = options.nativeEvent ?? nativeName;
  const headers = {
    ...deliveryHeaders(target.secret, body, { forge, name: native, id }),
    'user-agent': `forgebridge-cli/${version}`,
  };
  const request = {
    method: 'POST',
    url: target.url,
    event: event.full,
    forge,
    ...(target.source === undefined ? {} : { source: target.source }),
    nativeEvent: native,
    delivery: id,
    bytes: body.byteLength,
  };
  if (!options.json) {
    print(
      `${paint('bold', 'POST')} ${target.url}  ${paint('cyan', event.full)}  ${paint('dim', `${forge}, ${target.source === undefined ? '' : `${sourceLabel(target)}, `}delivery ${id}, ${formatBytes(body.byteLength)}`)}`,
    );
  }
  const { response, text, durationMs } = await postDelivery(
    target.url,
    headers,
    body,
    options.timeout,
    (error) => unreachable(target, error, options.timeout),
  );
  const shown = text.length > MAX_RESPONSE_CHARS ? `${text.slice(0, MAX_RESPONSE_CHARS)}...` : text;
  if (options.json) {
    printJson({
      request,
      response: {
        status: response.status,
        statusText: response.statusText,
        ok: response.ok,
        contentType: response.headers.get('content-type'),
        body: parseJson(shown) ?? shown,
        durationMs,
      },
    });
  } else {
    const status = `${response.status} ${response.statusText}`;
    print(`${paint(['bold', response.ok ? 'green' : 'red'], status)}  ${paint('dim', `${durationMs} ms`)}`);
    const parsed = parseJson(shown);
    if (shown.length > 0) print(parsed === undefined ? shown : JSON.stringify(parsed, null, 2));
  }
  return response.ok ? ExitCodes.ok : ExitCodes.failed;
}

async function payloadOf(
  event: EventName,
  file: string | undefined,
  forge: Forge,
): Promise<{ body: Buffer; nativeName: string }> {
  if (file === undefined && hasOwnShapes(forge)) {
    // GitLab and Bitbucket name events and shape payloads their own way: their sample routes like theirs.
    const sample = forgeOwnSample(forge, event.full);
    if (sample === undefined) {
      throw new CliError(
        `no ${forge} sample for "${event.full}" (samples: ${forgeOwnSampleNames(forge).join(', ')}): pass a ${forge} payload with "--file" and "--native-event"`,
      );
    }
    return { body: Buffer.from(JSON.stringify(sample.payload), 'utf8'), nativeName: sample.nativeName };
  }
  // A Standard Webhooks sender names its event in the payload's `type` (`issues.opened`): no event header.
  const typed = resolvePreset(forge).eventNames === 'sender';
  if (file === undefined) {
    const { nativeName, payload } = asSentBy(forge, event.full, findSample(event));
    return { body: Buffer.from(JSON.stringify(payload), 'utf8'), nativeName };
  }
  const { bytes, payload } = await readPayloadFile(file);
  if (typed && typeof payload.type !== 'string') {
    throw new CliError(`"${file}" has no "type" field: a ${forge} payload names its event there`);
  }
  const action = typeof payload.action === 'string' ? payload.action : undefined;
  if (event.action !== undefined && action !== undefined && action !== event.action) {
    throw new CliError(`"${file}" holds a "${action}" action, not "${event.action}"`);
  }
  return { body: bytes, nativeName: forgeSpelling(event.event) };
}

/** A fetch failure as one line naming the URL: connection refused, unknown host, timeout, TLS. */
function unreachable(target: Target, error: unknown, timeout: number): CliError {
  const hint = target.local ? ' (is "npm start" running?)' : '';
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new CliError(`no answer from ${target.url} within ${timeout} ms${hint}`, ExitCodes.unreachable);
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const reasons: Record<string, string> = { ...NETWORK_REASONS, UND_ERR_SOCKET: 'connection closed' };
  const reason =
    (code !== undefined ? reasons[code] : undefined) ??
    (typeof cause?.message === 'string' ? cause.message : undefined) ??
    (error instanceof Error ? error.message : 'request failed');
  return new CliError(`could not reach ${target.url}: ${reason}${hint}`, ExitCodes.unreachable, {
    cause: error,
  });
}
