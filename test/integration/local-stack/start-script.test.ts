// `npm start`'s script as a terminal runs it: a process group of its own, Ctrl-C sent to the whole group. Whenever
// the signal comes, the script stops every part of the stack (osls offline leads a group of its own, which the
// terminal's signal does not reach) and exits 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accepts } from '../../../local-stack/ports.js';

const root = new URL('../../../', import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), 'forgebridge-start-script-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Starts the script; `signalWhen` sends Ctrl-C to its group as soon as the output matches. */
function start(name: string, signalWhen: RegExp) {
  const stateFile = join(home, `${name}.json`);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: root,
    env: {
      ...process.env,
      HOME: join(home, name),
      FORGEBRIDGE_STATE_FILE: stateFile,
      // Ports of its own: a developer's stack on the defaults may be running.
      FORGEBRIDGE_HTTP_PORT: '0',
      FORGEBRIDGE_EVENTBRIDGE_PORT: '0',
      FORGEBRIDGE_FORGE_STAND_INS: 'off',
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let httpPort: number | undefined;
  let signalled = false;
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (!signalled && signalWhen.test(output)) {
      signalled = true;
      // Read before the signal: the script removes its state file when it stops.
      try {
        const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { webhookUrl?: string };
        httpPort = state.webhookUrl === undefined ? undefined : Number(new URL(state.webhookUrl).port);
      } catch {
        // Not written yet: the signal came while the stack started.
      }
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { exited, output: () => output, httpPort: () => httpPort };
}

describe('npm start and Ctrl-C', () => {
  it('stops everything and exits 0 when Ctrl-C comes the moment it says ready', {
    timeout: 90_000,
  }, async () => {
    const run = start('ready', /local stack ready in/);
    const { code, signal } = await run.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(run.output()).toContain('forgebridge: stopped');
    const port = run.httpPort();
    expect(port).toBeGreaterThan(0);
    // osls offline's HTTP server is gone with it.
    expect(await accepts(port as number)).toBe(false);
  });

  it('stops the stack as soon as it is up when Ctrl-C comes while it starts, without the ready banner', {
    timeout: 90_000,
  }, async () => {
    const run = start('starting', /starting the local stack/);
    const { code, signal } = await run.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(run.output()).toContain('SIGINT, stopping the local stack');
    expect(run.output()).toContain('forgebridge: stopped');
    expect(run.output()).not.toContain('local stack ready in');
  });
});
