import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';

const watchdogModule = new URL('../../../local-stack/watchdog.ts', import.meta.url).href;

/** Whether a process (or with a negative id, a process group) exists. */
function alive(id: number): boolean {
  try {
    process.kill(id, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A parent process that starts a detached `sleep` (a process group of its own, as osls offline is) and guards it
 * with `watchdog`; it prints the sleeper's pid and waits. The parent is then SIGKILLed: no exit handler runs.
 */
async function orphanedGroup(group: boolean): Promise<number> {
  const script = `
    const { spawn } = await import('node:child_process');
    const { watchdog } = await import(${JSON.stringify(watchdogModule)});
    const sleeper = spawn('sh', ['-c', 'sleep 60 & sleep 60; wait'], { stdio: 'ignore', detached: true });
    sleeper.unref();
    watchdog(sleeper.pid, { group: ${group} });
    console.log(sleeper.pid);
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(parent.stdout, 'data')) as [Buffer];
  const pid = Number(chunk.toString().trim());
  expect(Number.isInteger(pid)).toBe(true);
  expect(alive(-pid)).toBe(true);
  parent.kill('SIGKILL');
  await once(parent, 'exit');
  return pid;
}

describe('watchdog', () => {
  it('kills a detached process group once its parent died without clean-up', {
    timeout: 20_000,
  }, async () => {
    const pid = await orphanedGroup(true);
    // The guard polls every second.
    await vi.waitFor(() => expect(alive(-pid)).toBe(false), { timeout: 5_000, interval: 100 });
  });

  it('without group, kills the one process and leaves the rest of its group', {
    timeout: 20_000,
  }, async () => {
    const pid = await orphanedGroup(false);
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5_000, interval: 100 });
    // The sh's own `sleep 60` children are left: only the group kill reaches them.
    expect(alive(-pid)).toBe(true);
    process.kill(-pid, 'SIGKILL');
  });
});
