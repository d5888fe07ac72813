// The `forgebridge` CLI run as a process (the pinned node and bin/forgebridge.js): a sample of the scenarios of send,
// verify and rules (scenarios.ts; in-process.test.ts runs every one) against a real node:http receiver on 127.0.0.1
// that verifies every delivery with lib/webhooks' readDelivery: the help, every bad-input case (one line on stderr, an
// exit code, no stack trace), and what only a process shows: a body on stdin.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BIN,
  cleanCliEnv,
  closedPort,
  expectOneLineError,
  NO_AWS_CREDENTIALS,
  runCli,
} from '../../helpers/cli.js';
import {
  type CliRunner,
  COMMANDS,
  type Command,
  commandScenarios,
  helpScenarios,
  SECRET,
  sampleFound,
  sampleScenarios,
  useCliFixture,
} from './scenarios.js';

/** Runs the CLI as a process with no colours and none of the machine's forgebridge or AWS settings. */
const run = (args: string[], env: Record<string, string> = {}, input = '') =>
  runCli(args, { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS, ...env }, input);
const cli: CliRunner = (args, env) => run(args, env);

sampleScenarios([
  'lists the commands and the exit codes, without colours',
  'send --help and help send',
  'prints the package version',
  'the bare program prints its help on stderr and exits 2',
  'exits 1 when the receiver has another secret, and shows its JSON answer',
  'never prints the secret, not even as the GitLab token it sends',
  'shows an answer without a body, and gives up on a slow receiver after --timeout (exit 3)',
  'says verified (exit 0) for the exact body, without the secret or the signature',
  'refuses a missing and an empty secret',
  'prints the pattern and the snippet for people, with the forge, source, function and handler given',
  'an unknown command and an unknown option, with the closest one',
  'a missing secret with a URL',
  'an unreadable, a non-JSON and a non-object payload file',
  'an unknown event, with the closest known one when there is one',
  'an unreachable URL: one line naming it, exit 3',
  'bad --forge, --url, --source, --id and --timeout values',
]);
useCliFixture({ log: false });
helpScenarios(cli, Object.keys(COMMANDS) as Command[]);
commandScenarios(cli);
sampleFound();

describe('a process reads the body on stdin', () => {
  it('verify - takes the exact bytes from stdin: the forge signature matches, a wrong secret is named', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { title: 'Ünïcode ☕' } });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const verified = await run(['verify', '-', '--secret', SECRET, '--signature', signature], {}, body);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^verdict {2}verified$/m);
    const wrong = await run(
      ['verify', '-', '--secret', 'not-the-forge-secret', '--signature', signature, '--json'],
      {},
      body,
    );
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout)).toMatchObject({
      verdict: 'bad_signature',
      reasons: [{ code: 'wrong_secret' }],
    });
    expect(verified.stdout + wrong.stdout).not.toContain(SECRET);
  });
});

describe('bin/forgebridge.js: the command as the repository runs it (tsx over the sources)', () => {
  const bin = (args: string[]) => runCli(args, { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS }, '', BIN);
  const built = (args: string[]) => runCli(args, { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS });

  it('answers --version, --help and a bad value exactly as the built CLI the other tests run', async () => {
    const runs: string[][] = [['--version'], ['--help'], ['send', 'push', '--forge', 'svn']];
    for (const args of runs) {
      const [fromBin, fromBuild] = await Promise.all([bin(args), built(args)]);
      expect(fromBin, args.join(' ')).toEqual(fromBuild);
    }
    const version = await bin(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
    expectOneLineError(await bin(['send', 'push', '--forge', 'svn']), 2, /"--forge <forge>" argument "svn"/);
  });

  it('loads a command that needs the AWS SDK: deliveries against an unreachable log says so in one line', async () => {
    const args = ['deliveries', '--endpoint', `http://127.0.0.1:${await closedPort()}`, '--table', 'none'];
    const [fromBin, fromBuild] = await Promise.all([bin(args), built(args)]);
    expect(fromBin.code).toBe(fromBuild.code);
    expect(fromBin.code).toBeGreaterThan(0);
    expect(fromBin.stderr.replace(/127\.0\.0\.1:\d+/g, 'PORT')).toBe(
      fromBuild.stderr.replace(/127\.0\.0\.1:\d+/g, 'PORT'),
    );
    expect(fromBin.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
