// The `forgebridge` CLI run as a process (the pinned node and bin/forgebridge.js): the scenarios of send, verify
// and rules (scenarios.ts, which in-process.test.ts runs too) against a real node:http receiver on 127.0.0.1 that
// verifies every delivery with lib/webhooks' readDelivery, and what only a process shows: a body on stdin.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cleanCliEnv, NO_AWS_CREDENTIALS, runCli } from '../../helpers/cli.js';
import { type CliRunner, commandScenarios, helpScenarios, SECRET, useCliFixture } from './scenarios.js';

/** Runs the CLI as a process with no colours and none of the machine's forgebridge or AWS settings. */
const run = (args: string[], env: Record<string, string> = {}, input = '') =>
  runCli(args, { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS, ...env }, input);
const cli: CliRunner = (args, env) => run(args, env);

useCliFixture({ log: false });
helpScenarios(cli, ['send', 'rules', 'verify']);
commandScenarios(cli);

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
