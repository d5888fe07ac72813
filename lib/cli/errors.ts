/** Exit codes of the `forgebridge` CLI. */
export const ExitCodes = {
  /** The command did what was asked: a 2xx answer, a verified signature, a printed rule. */
  ok: 0,
  /** The command ran but the outcome is negative: a non-2xx answer, a signature that does not verify. */
  failed: 1,
  /** Bad input: an unknown command, option, event or forge, a missing secret, an unreadable or non-JSON file. */
  usage: 2,
  /** The URL could not be reached (connection refused, unknown host, timeout). */
  unreachable: 3,
} as const;

/** An exit code of the CLI. */
export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/** An error the CLI reports as one line on stderr, with its exit code; never with a stack trace. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = ExitCodes.usage, options?: ErrorOptions) {
    super(message, options);
    this.exitCode = exitCode;
  }
}
