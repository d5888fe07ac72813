/**
 * The `forgebridge` command line: commander wiring, error handling (one line on stderr, an exit code, never a
 * stack trace) and coloured help.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CliError, ExitCodes } from './errors.js';
import { oneLine, paint } from './output.js';

/** The package's version, for `--version` and the User-Agent. */
export function cliVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Adds one command to the program. */
export type Registrar = (program: Command, version: string) => void;

/**
 * Every command, in the order `--help` lists them, each loaded on demand: `forgebridge send` loads the send
 * command alone and never the AWS SDK that `deliveries` or `status` need, so a light command starts fast.
 */
const COMMANDS: ReadonlyArray<readonly [name: string, load: () => Promise<Registrar>]> = [
  ['send', async () => (await import('./commands/send.js')).registerSend],
  ['rules', async () => (await import('./commands/rules.js')).registerRules],
  ['verify', async () => (await import('./commands/verify.js')).registerVerify],
  ['deliveries', async () => (await import('./commands/deliveries.js')).registerDeliveries],
  ['show', async () => (await import('./commands/deliveries.js')).registerDeliveries],
  ['replay', async () => (await import('./commands/replay.js')).registerReplay],
  ['dlq', async () => (await import('./commands/dlq.js')).registerDlq],
  ['reconcile', async () => (await import('./commands/reconcile.js')).registerReconcile],
  ['status', async () => (await import('./commands/status.js')).registerStatus],
  ['secret', async () => (await import('./commands/secret.js')).registerSecret],
  ['inspect', async () => (await import('./commands/inspect.js')).registerInspect],
  ['dev', async () => (await import('./commands/dev.js')).registerDev],
  ['config', async () => (await import('./commands/config.js')).registerConfig],
  ['connect', async () => (await import('./commands/connect.js')).registerConnect],
];

/**
 * The commands `argv` needs: the one it names, none for `--version`, every one otherwise (help, an unknown
 * command and its closest match).
 */
export async function loadCommands(argv: readonly string[]): Promise<Registrar[]> {
  const first = argv[2];
  if (first === '-V' || first === '--version') return [];
  const named = COMMANDS.filter(([name]) => name === first);
  const wanted = named.length > 0 ? named : COMMANDS;
  const loaded = await Promise.all(wanted.map(([, load]) => load()));
  // `deliveries` also registers `show`: each registrar once.
  return [...new Set(loaded)];
}

/** Builds the program with the given commands, `--help` everywhere, errors thrown instead of exiting. */
export function createProgram(version: string, commands: readonly Registrar[]): Command {
  const program = new Command('forgebridge');
  program
    .description('send, verify and route forge webhook deliveries (forgebridge)')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .configureHelp({
      styleTitle: (text) => paint('bold', text),
      styleCommandText: (text) => paint('cyan', text),
      styleSubcommandText: (text) => paint('cyan', text),
      styleOptionText: (text) => paint('green', text),
      styleArgumentText: (text) => paint('yellow', text),
    })
    .addHelpText(
      'after',
      `
Exit codes: 0 done, 1 negative outcome (a non-2xx answer, a signature that does not verify),
2 bad input, 3 URL not reachable. See docs/cli.md.`,
    );
  for (const register of commands) register(program, version);
  // Every command, nested ones (`dlq list`) included: a bad option is an error `main` prints as one line, exit 2.
  const quiet = { outputError: () => undefined };
  const override = (command: Command) => {
    command.exitOverride();
    command.configureOutput(quiet);
    for (const sub of command.commands) override(sub);
  };
  override(program);
  return program;
}

/**
 * Runs the CLI with `argv` (`process.argv`) and returns the exit code. Errors are written to stderr as one
 * line; nothing throws.
 */
export async function main(argv: readonly string[]): Promise<number> {
  process.exitCode = undefined;
  try {
    const commands = await loadCommands(argv);
    await createProgram(cliVersion(), commands).parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0 and nothing to add.
      if (error.exitCode === 0) return ExitCodes.ok;
      if (error.code === 'commander.help') return ExitCodes.usage;
      reportError(commanderMessage(error.message));
      return ExitCodes.usage;
    }
    if (error instanceof CliError) {
      reportError(error.message);
      return error.exitCode;
    }
    // Anything else is a bug of ours; still one line and no stack trace.
    reportError(`unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    return ExitCodes.failed;
  }
}

function reportError(message: string): void {
  process.stderr.write(`${paint(['bold', 'red'], 'forgebridge:', process.stderr)} ${oneLine(message)}\n`);
}

/** Commander's messages in the house style: no "error:" prefix, double quotes, no trailing period. */
export function commanderMessage(message: string): string {
  return oneLine(message)
    .replace(/^error:\s*/i, '')
    .replace(/'([^']*)'/g, '"$1"')
    .replace(/\. Allowed choices are /, ': allowed choices are ')
    .replace(/\(Did you mean ([^?]+)\?\)/, '(did you mean "$1"?)')
    .replace(/""/g, '"')
    .replace(/\.$/, '');
}
