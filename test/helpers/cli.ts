// The `forgebridge` CLI run as a process: the pinned node and bin/forgebridge.js, its exit code and output.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { freePort } from '../../local-stack/ports.js';

/** The repository's root folder. */
export const ROOT = new URL('../../', import.meta.url).pathname;
/** The pinned node. */
export const NODE = join(ROOT, 'node_modules/.bin/node');
/** The CLI's entry point, as a user runs it in the repository (it registers tsx, then runs lib/cli). */
export const BIN = join(ROOT, 'bin/forgebridge.js');

/**
 * The same CLI built once for this run (test/setup/cli-build.ts): what {@link runCli} runs, at about half the CPU
 * time of a start through tsx. vitest.config.ts names it for the integration, e2e and iam projects.
 */
export function builtCli(): string {
  const entry = process.env.FORGEBRIDGE_TEST_CLI;
  if (entry === undefined || entry === '') {
    throw new Error('FORGEBRIDGE_TEST_CLI is not set: run this file through vitest.config.ts (npm test)');
  }
  return entry;
}

/** No AWS credentials anywhere (nor the instance metadata service): a deployed stage must say so in one line. */
export const NO_AWS_CREDENTIALS = {
  AWS_SHARED_CREDENTIALS_FILE: join(ROOT, '.tmp/no-such-aws-credentials'),
  AWS_CONFIG_FILE: join(ROOT, '.tmp/no-such-aws-config'),
  AWS_EC2_METADATA_DISABLED: 'true',
};

/** A port on 127.0.0.1 nothing listens on (it was free a moment ago): the local stack's `freePort`. */
export const closedPort = freePort;

/** A finished CLI process. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The test process's environment with no colours and none of the machine's forgebridge or AWS settings. */
export function cleanCliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of Object.keys(env)) {
    if (name.startsWith('FORGEBRIDGE_') || name.startsWith('AWS_') || name === 'FORCE_COLOR')
      delete env[name];
  }
  return env;
}

/**
 * Runs `forgebridge <args>` with `env` (killed after 30 s); `input` goes to stdin. `entry` is the built CLI unless
 * a test of the bin itself gives {@link BIN}.
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  input = '',
  entry: string = builtCli(),
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(NODE, [entry, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

/** A bad-input answer: the exit code, one line on stderr naming the problem, no stack frame. */
export function expectOneLineError(result: Run, code: number, message: string | RegExp): void {
  expect(result.code).toBe(code);
  const lines = result.stderr.split('\n').filter((line) => line.length > 0);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^forgebridge: /);
  expect(lines[0]).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/Error:|\.ts:\d+/);
}
