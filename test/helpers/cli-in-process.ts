// The `forgebridge` CLI run in the test process: `main(argv)` of lib/cli/program.ts with stdout and stderr
// captured, none of the machine's FORGEBRIDGE_* / AWS_* variables, no AWS credentials anywhere, no colours.
import { vi } from 'vitest';
import { main } from '../../lib/cli/program.js';
import { NO_AWS_CREDENTIALS, type Run } from './cli.js';

/** A command started with {@link startMain}: its output so far, and its end. */
export interface StartedMain {
  done: Promise<Run>;
  stdout(): string;
  stderr(): string;
}

/** Starts `forgebridge <args>` in this process with `env` on top of a clean environment; restores it at the end. */
export function startMain(args: string[], env: Record<string, string> = {}): StartedMain {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('FORGEBRIDGE_') || name.startsWith('AWS_') || name === 'FORCE_COLOR')
      delete process.env[name];
  }
  Object.assign(process.env, { NO_COLOR: '1', ...NO_AWS_CREDENTIALS, ...env });
  let stdout = '';
  let stderr = '';
  const text = (chunk: unknown) =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout += text(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    stderr += text(chunk);
    return true;
  });
  const restore = () => {
    out.mockRestore();
    err.mockRestore();
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
  const done = main([process.execPath, 'forgebridge', ...args]).then(
    (code) => {
      restore();
      return { code, stdout, stderr };
    },
    (error: unknown) => {
      restore();
      throw error;
    },
  );
  return { done, stdout: () => stdout, stderr: () => stderr };
}

/** Runs `forgebridge <args>` in this process to its end. */
export function runMain(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return startMain(args, env).done;
}
