import { type Command, Option } from 'commander';
import {
  createProxyChannel,
  type Forge,
  Forges,
  type ProxyChannelError,
  ProxyChannelErrorCodes,
  type ProxyMessageKeys,
  resolvePreset,
  type SignedEvent,
  serializePayload,
} from '../../webhooks/index.js';
import { CliError, ExitCodes } from '../errors.js';
import { checkUrl, resolveTarget, sourceLabel, type Target } from '../local-stack.js';
import { formatBytes, paint, print } from '../output.js';

interface DevOptions {
  proxy: string;
  url?: string;
  forge?: Forge;
  source?: string;
  timeout: number;
}

/** Registers `dev --proxy <channel-url>`. */
export function registerDev(program: Command, version: string): void {
  program
    .command('dev')
    .description('relay a webhook proxy channel (smee.io or your own) into the local ingest until Ctrl-C')
    .requiredOption(
      '--proxy <channel-url>',
      'the proxy channel URL the forge posts to (treat it as a secret)',
    )
    .option('--url <url>', "post here instead of the local stack's webhook URL")
    .addOption(
      new Option(
        '--forge <forge>',
        "read and write the delivery headers as this forge sends them (default: the local source's forge, else generic); alone, post to the local source of this forge",
      )
        // The relay forwards one signature value: a Standard Webhooks one needs its id and timestamp headers too.
        .choices(
          Forges.filter((forge) =>
            resolvePreset(forge).signatures.some(({ scheme }) => scheme !== 'standard'),
          ),
        ),
    )
    .option(
      '--source <name>',
      'post to this webhook source of the ingest (the local stack\'s, or "<url>/<name>")',
    )
    .addOption(
      new Option('--timeout <ms>', 'give up on one relayed delivery after this many milliseconds')
        .default(10_000)
        .argParser((value) => {
          if (!/^\d+$/.test(value) || Number(value) <= 0)
            throw new CliError('"--timeout" must be a positive integer');
          return Number(value);
        }),
    )
    .addHelpText(
      'after',
      `
Each delivery the channel relays is posted to the ingest with the forge's event, delivery and signature
headers as received; the ingest verifies the signature with the source's own secret, so the forge's webhook
must be set up with that secret ("npm start" prints each local source's). One line per delivery.
A proxy that relays a parsed body (smee.io) is re-serialized the forge's way, which can differ from the
signed bytes: see docs/webhooks-proxy.md.

Examples:
  $ forgebridge dev --proxy https://smee.io/AbCdEf123
  $ forgebridge dev --proxy https://smee.io/AbCdEf123 --forge github --source github`,
    )
    .action(async (options: DevOptions) => {
      process.exitCode = await dev(options, version);
    });
}

/** The message keys of a forge's headers in a proxy channel message (lowercased, as the proxy relays them). */
export function proxyKeys(forge: Forge): ProxyMessageKeys {
  const preset = resolvePreset(forge);
  const primary = preset.signatures.find((source) => source.scheme !== 'sha1') ?? preset.signatures[0];
  const sha1 = preset.signatures.find((source) => source.scheme === 'sha1');
  return {
    id: preset.deliveryHeaders[0] as string,
    event: preset.eventHeaders[0] as string,
    signature256: primary?.header as string,
    signature: sha1?.header ?? (primary?.header as string),
  };
}

async function dev(options: DevOptions, version: string): Promise<number> {
  checkUrl(options.proxy, '--proxy');
  // The relay forwards the forge's own signature and signs nothing: a placeholder satisfies the secret check.
  const target = resolveTarget({
    url: options.url,
    source: options.source,
    forge: options.forge,
    secret: 'not-used-by-dev',
  });
  const forge = target.forge;
  const preset = resolvePreset(forge);
  const keys = proxyKeys(forge);
  let relayed = 0;
  const relay = async (event: SignedEvent): Promise<void> => {
    const body =
      typeof event.payload === 'string'
        ? Buffer.from(event.payload, 'utf8')
        : Buffer.from(serializePayload(event.payload), 'utf8');
    const signatureHeader = event.signature.startsWith('sha1=')
      ? (keys.signature as string)
      : (keys.signature256 as string);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [signatureHeader]: event.signature,
      'user-agent': `forgebridge-cli/${version}`,
    };
    for (const header of preset.eventHeaders) headers[header] = event.name;
    if (event.id) for (const header of preset.deliveryHeaders) headers[header] = event.id;
    const started = performance.now();
    const time = paint('dim', new Date().toLocaleTimeString());
    const what = `${paint('cyan', event.name)}  ${event.id || '-'}  ${paint('dim', formatBytes(body.byteLength))}`;
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeout),
      });
      const answer = await response.text();
      relayed += 1;
      const code = response.ok ? '' : ` ${errorCodeOf(answer)}`;
      print(
        `${time}  ${what}  -> ${paint(['bold', response.ok ? 'green' : 'red'], `${response.status} ${response.statusText}`)}${code}  ${paint('dim', `${Math.round(performance.now() - started)} ms`)}`,
      );
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      const reason =
        typeof cause === 'string' ? cause.toLowerCase() : error instanceof Error ? error.name : 'failed';
      print(
        `${time}  ${what}  -> ${paint(['bold', 'red'], `not delivered: ${reason}`)}${target.local ? ' (is "npm start" running?)' : ''}`,
      );
    }
  };
  let opened = false;
  let failOpen: (error: ProxyChannelError) => void = () => undefined;
  // A channel that cannot be reached at first is reported once and ends the command; once it was open, a
  // lost connection is reported and the EventSource reconnects.
  const openFailed = new Promise<ProxyChannelError>((resolve) => {
    failOpen = resolve;
  });
  const channel = createProxyChannel({
    url: options.proxy,
    webhooks: { verifyAndReceive: relay },
    keys,
    onError: (error: ProxyChannelError) => {
      const connection =
        error.code === ProxyChannelErrorCodes.connectionError ||
        error.code === ProxyChannelErrorCodes.connectionClosed;
      if (!opened && connection) {
        failOpen(error);
        return;
      }
      process.stderr.write(`${paint('yellow', 'proxy:', process.stderr)} ${error.code}: ${error.message}\n`);
    },
  });
  const stop = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const first = await Promise.race([
    channel.ready.then(
      () => ({ kind: 'open' as const }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    ),
    openFailed.then((error) => ({ kind: 'failed' as const, error })),
    stop.then((signal) => ({ kind: 'stopped' as const, signal })),
  ]);
  if (first.kind !== 'open') {
    await channel.close();
    if (first.kind === 'stopped') return ExitCodes.ok;
    const message = first.error instanceof Error ? first.error.message : String(first.error);
    throw new CliError(
      `could not open the proxy channel at ${redact(options.proxy)}: ${message}`,
      ExitCodes.unreachable,
    );
  }
  opened = true;
  print(
    `${paint('bold', 'relaying')} ${redact(options.proxy)} ${paint('dim', '->')} ${target.url}  ${paint('dim', `(${forge} headers${relaySource(target)}; Ctrl-C stops)`)}`,
  );
  const signal = await stop;
  await channel.close();
  print(paint('dim', `${signal}: stopped, ${relayed} deliver${relayed === 1 ? 'y' : 'ies'} relayed`));
  return ExitCodes.ok;
}

/** `, source gitlab: the forge must sign with this source's secret` for a local source; the source for a URL. */
function relaySource(target: Target): string {
  if (target.source === undefined) return '';
  return `, ${sourceLabel(target)}${target.local ? ": the forge must sign with this source's secret" : ''}`;
}

/** The channel URL without its channel name, which lets anyone read it. */
function redact(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}/${parsed.pathname.length > 1 ? '…' : ''}`;
}

function errorCodeOf(answer: string): string {
  try {
    const parsed = JSON.parse(answer) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : '';
  } catch {
    return '';
  }
}
