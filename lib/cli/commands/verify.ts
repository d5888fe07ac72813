import { type Command, Option } from 'commander';
import {
  type DeliveryRequest,
  diagnoseSignature,
  type Forge,
  Forges,
  resolvePreset,
  type SignatureDiagnosis,
} from '../../webhooks/index.js';
import { CliError, ExitCodes } from '../errors.js';
import { readInput } from '../files.js';
import { paint, print, printJson } from '../output.js';

interface VerifyOptions {
  secret: string[];
  signature?: string;
  header: string[];
  forge: Forge;
  sha1: boolean;
  json?: boolean;
}

/** Registers `verify [file|-]`. */
export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description("check a delivery's signature and say in plain words why it does not verify")
    .argument('[file|-]', 'the body exactly as received ("-" or nothing: stdin)')
    .option(
      '--secret <secret>',
      'a configured secret; repeat for several (default: FORGEBRIDGE_WEBHOOK_SECRET, comma-separated)',
      collect,
      [],
    )
    .option(
      '--signature <value>',
      'the signature header\'s value ("sha256=...", bare hex, or a GitLab token)',
    )
    .option('-H, --header <name: value>', 'a delivery header as received; repeat for several', collect, [])
    .addOption(
      new Option('--forge <forge>', 'the forge preset the delivery comes from')
        .choices(Forges)
        .default('generic'),
    )
    .option('--no-sha1', 'require sha256: refuse a delivery signed with sha1 only')
    .option('--json', 'print the verdict and the diagnosis as JSON')
    .addHelpText(
      'after',
      `
The secret and the full signature are never printed.

Examples:
  $ forgebridge verify body.json --secret "$SECRET" --signature "sha256=..."
  $ cat body.json | forgebridge verify - --secret "$SECRET" -H "X-Gitea-Signature: ..." --forge gitea

Exit codes: 0 verified, 1 not verified, 2 bad input.`,
    )
    .action(async (file: string | undefined, options: VerifyOptions) => {
      const secrets = options.secret.length > 0 ? options.secret : envSecrets();
      if (secrets.length === 0) {
        throw new CliError('missing secret: pass "--secret" (or set FORGEBRIDGE_WEBHOOK_SECRET)');
      }
      if (secrets.some((secret) => secret.length === 0)) throw new CliError('"--secret" must not be empty');
      if (file === undefined && process.stdin.isTTY) {
        throw new CliError('a body file is required (or "-" to read it from stdin)');
      }
      const body = await readInput(file ?? '-');
      const common = { body, secrets, forge: options.forge, allowSha1: options.sha1 };
      const diagnosis =
        options.header.length > 0
          ? diagnoseSignature({
              ...common,
              headers: headersOf(options.header, options.signature, options.forge),
            })
          : diagnoseSignature({ ...common, signature: options.signature });
      if (options.json) printJson(diagnosis);
      else printDiagnosis(diagnosis);
      process.exitCode = diagnosis.verdict === 'verified' ? ExitCodes.ok : ExitCodes.failed;
    });
}

function printDiagnosis(diagnosis: SignatureDiagnosis): void {
  const good = diagnosis.verdict === 'verified';
  print(`${paint('bold', 'verdict')}  ${paint(['bold', good ? 'green' : 'red'], diagnosis.verdict)}`);
  for (const signature of diagnosis.checked) {
    const outcome = signature.matches ? paint('green', 'matches') : paint('red', 'does not match');
    print(
      `${paint('bold', 'checked')}  ${signature.header ?? signature.scheme}  ${signature.signature}  ${outcome}`,
    );
  }
  for (const reason of diagnosis.reasons) print(`  ${paint('dim', '-')} ${reason.message}`);
}

/** Headers from `-H "name: value"`; `--signature` goes in the preset's first signature header. */
function headersOf(lines: string[], signature: string | undefined, forge: Forge): DeliveryRequest['headers'] {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new CliError('"--header" must be "name: value"');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (signature !== undefined) {
    // The header the value's form belongs in: "sha1=" and "sha256=" in the preset's headers of that scheme.
    const sources = resolvePreset(forge).signatures;
    const scheme = signature.startsWith('sha1=')
      ? 'sha1'
      : signature.startsWith('sha256=')
        ? 'sha256'
        : undefined;
    const source =
      sources.find((candidate) => candidate.scheme === scheme) ??
      (sources.find((candidate) => candidate.scheme !== 'sha1') as { header: string });
    headers[source.header] = signature;
  }
  return headers;
}

function envSecrets(): string[] {
  const value = process.env.FORGEBRIDGE_WEBHOOK_SECRET;
  return value === undefined || value.length === 0
    ? []
    : value.split(',').filter((secret) => secret.length > 0);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
