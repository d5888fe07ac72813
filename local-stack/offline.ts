// `osls offline start` as a child process: serverless-offline (the HTTP API in front of the ingest) with
// serverless-offline-aws-eventbridge (PutEvents on a local port, routed to the subscribers by the rules in
// serverless.yml). HOME points at a temp dir; every port comes from the environment serverless.yml reads.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFunctions, type WatchedBuild, watchFunctions } from './function-build.js';
import { accepts, freePort } from './ports.js';
import { watchdog } from './watchdog.js';

const root = new URL('../', import.meta.url).pathname;

/** The ports serverless-offline and its EventBridge plugin listen on. */
export interface OfflinePorts {
  http: number;
  lambda: number;
  websocket: number;
  alb: number;
  eventBridge: number;
  eventBridgePubSub: number;
}

/** Options of {@link startOffline}. */
export interface OfflineOptions {
  /** Deployment stage (names the bus, tables and bucket). Default `local`. */
  stage?: string;
  /** Ports; each one left out is a free port. */
  ports?: Partial<OfflinePorts>;
  /** Environment of the functions and of serverless.yml's `${env:…}` variables. */
  env: Record<string, string>;
  /** A temp dir used as HOME (osls writes state there). */
  home: string;
  /**
   * Where the child's output goes: `'inherit'` (this terminal, for `npm start`) or `'file'` (default: a log file
   * in `home`, readable with `logTail()`). Never a pipe: on Linux a process writes to a pipe synchronously, and a
   * reader that falls behind would stall serverless-offline's main thread.
   */
  output?: 'inherit' | 'file';
  /** How long to wait for both servers. Default 90 s. */
  readyTimeoutMs?: number;
  /**
   * Rebuild the functions on every change of their code, and have serverless-offline load them anew (`npm start`).
   * `onRebuild` hears of each rebuild, with esbuild's messages when it failed. Default: built once.
   */
  watch?: { onRebuild?: (result: { errors: string[] }) => void } | undefined;
  /**
   * At most so many instances of a function at once, per function key and `*` for every other function
   * (local-stack/offline-concurrency.mjs); an invocation beyond it waits for a free instance. Default: no limit.
   */
  concurrency?: Record<string, number>;
}

/** A running `osls offline start`. */
export interface Offline {
  readonly ports: OfflinePorts;
  readonly pid: number | undefined;
  /** The log file with `output: 'file'`. */
  readonly logFile: string | undefined;
  /** The last `lines` lines of the log file (empty with `output: 'inherit'`). */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

async function choosePorts(given: Partial<OfflinePorts>): Promise<OfflinePorts> {
  const ports = {} as OfflinePorts;
  const taken = new Set<number>();
  for (const name of ['http', 'lambda', 'websocket', 'alb', 'eventBridge', 'eventBridgePubSub'] as const) {
    let port = given[name] ?? (await freePort());
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = once(child, 'exit').then(() => undefined);
  const signal = (name: NodeJS.Signals) => {
    try {
      // The child leads its own process group: the signal reaches everything it started.
      if (child.pid !== undefined) process.kill(-child.pid, name);
    } catch {
      child.kill(name);
    }
  };
  signal('SIGINT');
  const timer = setTimeout(() => signal('SIGKILL'), 5_000);
  return exited.finally(() => clearTimeout(timer));
}

/**
 * Starts `osls offline start` for this repository's serverless.yml and waits until the HTTP API and the
 * EventBridge mock accept connections.
 *
 * @example
 * ```ts
 * const offline = await startOffline({ env, home, output: 'inherit' });
 * // POST http://127.0.0.1:${offline.ports.http}/webhooks
 * await offline.stop();
 * ```
 * @see https://github.com/dherault/serverless-offline
 */
export async function startOffline(options: OfflineOptions): Promise<Offline> {
  const ports = await choosePorts(options.ports ?? {});
  const stage = options.stage ?? 'local';
  mkdirSync(options.home, { recursive: true });
  const require = createRequire(import.meta.url);
  const cli = require.resolve('osls/bin/serverless.js');
  // A build folder of its own: another run's clean-up must not delete the bundles this one serves. The build
  // runs beside osls's own start: serverless-offline loads a handler only when it is first invoked.
  const workFolder = `.esbuild/offline-${process.pid}-${randomBytes(4).toString('hex')}`;
  const buildFolder = join(root, workFolder);
  // Before osls starts: its reload plugin watches this folder from its start.
  mkdirSync(buildFolder, { recursive: true });
  const build: { done: boolean; error?: Error; watched?: WatchedBuild } = { done: false };
  const building = (
    options.watch === undefined
      ? buildFunctions(buildFolder)
      : watchFunctions({ outdir: buildFolder }, options.watch.onRebuild).then((watched) => {
          build.watched = watched;
        })
  ).then(
    () => {
      build.done = true;
    },
    (error: Error) => {
      build.done = true;
      build.error = error;
    },
  );
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: options.home,
    XDG_CONFIG_HOME: join(options.home, '.config'),
    XDG_DATA_HOME: join(options.home, '.local/share'),
    XDG_CACHE_HOME: join(options.home, '.cache'),
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    // osls compiles its configuration schema (about 2 s of CPU) and caches the result under this folder, HOME
    // otherwise: HOME is new on every start, the repository's .tmp/ is not.
    SLS_SCHEMA_CACHE_BASE_DIR: join(root, '.tmp/osls'),
    // Node's code cache, when the caller keeps one (`npm test` does, for every process of its run).
    ...(process.env.NODE_COMPILE_CACHE === undefined
      ? {}
      : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE }),
    ...options.env,
    // The functions as built here (serverless-esbuild is then left out), relative to the repository.
    FORGEBRIDGE_OFFLINE_BUILD: workFolder,
    ...(options.concurrency === undefined
      ? {}
      : { FORGEBRIDGE_OFFLINE_CONCURRENCY: JSON.stringify(options.concurrency) }),
    FORGEBRIDGE_HTTP_PORT: String(ports.http),
    FORGEBRIDGE_LAMBDA_PORT: String(ports.lambda),
    FORGEBRIDGE_WEBSOCKET_PORT: String(ports.websocket),
    FORGEBRIDGE_ALB_PORT: String(ports.alb),
    FORGEBRIDGE_EVENTBRIDGE_PORT: String(ports.eventBridge),
    FORGEBRIDGE_EVENTBRIDGE_PUBSUB_PORT: String(ports.eventBridgePubSub),
  };
  const logFile = options.output === 'inherit' ? undefined : join(options.home, 'offline.log');
  const logFd = logFile === undefined ? undefined : openSync(logFile, 'a');
  const logTail = (lines = 60): string =>
    logFile !== undefined && existsSync(logFile)
      ? readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n').trim()
      : '';
  // `--localEnvironment` hands this environment to the functions: offline, the webhook secret comes from it.
  // `loopback-only.cjs` makes every server of the child that names no host bind 127.0.0.1;
  // `offline-concurrency.mjs` holds each function to its `concurrency`.
  const loopbackOnly = fileURLToPath(new URL('./loopback-only.cjs', import.meta.url));
  const concurrencyLimit = fileURLToPath(new URL('./offline-concurrency.mjs', import.meta.url));
  const offlineArgs = [cli, 'offline', 'start', '--stage', stage, '--localEnvironment'];
  const preloads = ['--require', loopbackOnly, '--import', concurrencyLimit];
  const child = spawn(process.execPath, [...preloads, ...offlineArgs], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', logFd ?? 'inherit', logFd ?? 'inherit'],
  });
  if (logFd !== undefined) closeSync(logFd);
  // osls leads a process group of its own, so a Ctrl-C in the terminal does not reach it: it is stopped from
  // here. Should this process die without its clean-up, the watchdog stops it instead.
  const guard = watchdog(child.pid, { group: true });
  const killOnExit = () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    guard?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`osls offline exited before it was ready:\n${logTail()}`);
      }
      if (build.error !== undefined) throw new Error(`the functions did not build: ${build.error.message}`);
      if (build.done && (await accepts(ports.http)) && (await accepts(ports.eventBridge))) break;
      if (Date.now() > deadline) throw new Error(`osls offline was not ready in time:\n${logTail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    process.removeListener('exit', killOnExit);
    await stopChild(child);
    guard?.kill('SIGKILL');
    await building;
    await build.watched?.stop();
    rmSync(buildFolder, { recursive: true, force: true });
    throw error;
  }

  return {
    ports,
    pid: child.pid,
    logFile,
    logTail,
    async stop() {
      process.removeListener('exit', killOnExit);
      await build.watched?.stop();
      await stopChild(child);
      guard?.kill('SIGKILL');
      rmSync(buildFolder, { recursive: true, force: true });
    },
  };
}
