import { type ChildProcess, spawn } from 'node:child_process';

/**
 * A tiny `sh` loop that SIGKILLs `target` once this process is gone, even when this process dies in a way that
 * skips every exit handler (a SIGKILL, a vitest worker torn down, a stopped `npm start` that did not get to its
 * clean-up). `group: true` kills the target's whole process group (a child spawned `detached`, which leads one).
 * Kill the returned guard (`guard.kill('SIGKILL')`) once the target is stopped the normal way.
 */
export function watchdog(
  target: number | undefined,
  options: { group?: boolean } = {},
): ChildProcess | undefined {
  if (target === undefined || process.platform === 'win32') return undefined;
  const victim = options.group === true ? `-${target}` : String(target);
  const guard = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -9 "$1" 2>/dev/null',
      String(process.pid),
      victim,
    ],
    { stdio: 'ignore', detached: true },
  );
  guard.on('error', () => {});
  guard.unref();
  return guard;
}
