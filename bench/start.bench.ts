// `npm start` until it is ready: the wall time from the command to its "ready" line (target 8 s), then Ctrl-C.
// The stack runs with a throw-away HOME and state file; each run is a fresh process tree.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const RUNS = Number(process.env.BENCH_START_RUNS ?? 3);
const TARGET_S = 8;

async function once(): Promise<{ seconds: number; reported: string }> {
  const home = mkdtempSync(join(tmpdir(), 'forgebridge-start-bench-'));
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, HOME: home, FORGEBRIDGE_STATE_FILE: join(home, 'state.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a terminal gives a command: Ctrl-C reaches the whole group.
    detached: true,
  });
  let output = '';
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start not ready after 60 s:\n${output}`)), 60_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const ready = /local stack ready in ([\d.]+) s/.exec(output);
        if (ready !== null) {
          clearTimeout(timer);
          resolve({ seconds: (performance.now() - started) / 1000, reported: ready[1] as string });
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.on('exit', (code) => reject(new Error(`npm start exited (${code}) before ready:\n${output}`)));
    });
  } finally {
    child.removeAllListeners('exit');
    // Stopped when the start script has let go of its output too, not when npm exits (npm exits at once on
    // Ctrl-C; the script then stops the stack): the next run starts on a quiet machine, and nothing is left.
    const exited = new Promise((resolve) => child.once('close', resolve));
    // Ctrl-C as a terminal sends it, to the foreground process group: npm and the start script both get it (npm
    // does not pass a SIGINT on to its script), and the script stops every server and child (osls offline runs
    // in a process group of its own) before it exits.
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 60_000))]);
    rmSync(home, { recursive: true, force: true });
  }
}

export default async function startBench() {
  const runs: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const { seconds, reported } = await once();
    runs.push(seconds);
    console.log(
      `run ${run + 1}: ready after ${seconds.toFixed(1)} s from the command (the script says ${reported} s)`,
    );
  }
  const best = Math.min(...runs);
  const median = [...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)] as number;
  console.log(
    `\nnpm start ready: median ${median.toFixed(1)} s, best ${best.toFixed(1)} s (target ${TARGET_S} s): ${median <= TARGET_S ? 'PASS' : 'FAIL'}`,
  );
}
