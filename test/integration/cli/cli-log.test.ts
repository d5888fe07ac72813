// The `forgebridge` delivery-log commands run as a process (the pinned node and bin/forgebridge.js): a sample of the
// scenarios of deliveries, show, replay and dev (scenarios.ts; in-process.test.ts runs every one) against DynamoDB Local holding
// records written through DeliveryLog.record, replays to a real node:http receiver on 127.0.0.1 verifying each
// delivery with lib/webhooks' readDelivery, and what only a process shows: `dev --proxy` relaying a local proxy
// channel (test/helpers/sse-server.ts) until a real SIGINT stops it.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../../lib/webhooks/index.js';
import { BIN, cleanCliEnv, NO_AWS_CREDENTIALS, NODE, runCli } from '../../helpers/cli.js';
import { type SseServer, startSseServer } from '../../helpers/sse-server.js';
import {
  type CliRunner,
  devScenarios,
  fixture,
  logScenarios,
  SECRET,
  sampleFound,
  sampleScenarios,
  useCliFixture,
} from './scenarios.js';

/** The CLI's environment: no colours, no local stack or AWS settings of the machine running the tests. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...cleanCliEnv(), ...NO_AWS_CREDENTIALS, ...extra };
}

const cli: CliRunner = (args, env) => runCli(args, cliEnv(env));

sampleScenarios([
  'lists the last day newest first as a table',
  'refuses bad input, an unreachable log, a missing table and a stage without credentials',
  'shows every request, the subscribers, the masked headers and with --body the payload',
  're-sends the exact body and headers, signed again, with the same delivery id',
  'exits 1 on a refused replay, and says a missing payload, an unknown id and an unreachable URL in one line',
  "replay --hook re-sends that hook's record: its body and its X-GitHub-Hook-ID",
  'refuses bad input in one line, exit 2, and sends nothing',
  'refuses a channel that is not a URL, a missing one and an unreachable one in one line',
]);
useCliFixture({ log: true });
logScenarios(cli);
devScenarios(cli);
sampleFound();

describe('dev --proxy in a process of its own: a real SIGINT', () => {
  let channel: SseServer;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    channel = await startSseServer({ bodyAs: 'string' });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await channel.close();
  });

  it('relays each delivery into the ingest URL, one line each, and stops cleanly on Ctrl-C', async () => {
    const proc = spawn(NODE, [BIN, 'dev', '--proxy', channel.url, '--url', `${fixture.base}/hooks/generic`], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const until = async (check: () => boolean, what: string) => {
      for (let waited = 0; !check(); waited += 50) {
        if (waited > 15_000) throw new Error(`timed out waiting for ${what}: ${stdout} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until(() => stdout.includes('relaying'), 'the relay to start');
    expect(stdout).not.toContain(channel.url);

    const body = '{"action":"opened","issue":{"number":1},  "note":"as signed"}';
    const id = randomUUID();
    const forgeAnswer = await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders(SECRET, body, { name: 'issues', id }),
      body,
    });
    expect(forgeAnswer.status).toBe(200);
    const wrongId = randomUUID();
    await fetch(channel.url, {
      method: 'POST',
      headers: deliveryHeaders('not-the-secret', body, { name: 'issues', id: wrongId }),
      body,
    });
    await until(() => stdout.includes(wrongId), 'two relayed deliveries');

    expect(fixture.received).toHaveLength(2);
    expect(fixture.received[0]?.result).toMatchObject({ ok: true, id, name: 'issues' });
    expect(fixture.received[0]?.body.toString()).toBe(body);
    expect(fixture.received[1]?.result).toMatchObject({ ok: false });
    const lines = stdout.split('\n');
    expect(lines.find((line) => line.includes(id))).toMatch(
      /issues {2}\S+ {2}\d+ B {2}-> 202 Accepted {2}\d+ ms$/,
    );
    expect(lines.find((line) => line.includes(wrongId))).toMatch(/-> 401 Unauthorized/);

    proc.kill('SIGINT');
    const [code] = (await once(proc, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(stdout).toMatch(/SIGINT: stopped, 2 deliveries relayed\n$/);
    expect(stderr).toBe('');
  });
});
