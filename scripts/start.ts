// `npm start`: the local stack on embedded defaults, no AWS account needed. Prints every webhook source (name,
// forge, URL, development secret) and writes them to the state file the `forgebridge` CLI reads
// (`.tmp/local-stack.json`, or FORGEBRIDGE_STATE_FILE); `npx forgebridge send issues.opened` posts a signed sample. Ctrl-C stops every
// server and child process (DynamoDB Local's Java included). Quiet by default: `osls offline`'s output is shown
// without the retrier's run every 2 s and without the functions' metric lines; `npm start -- --metrics` shows
// those metrics, readable (local-stack/console-filter.ts).
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_SOURCE, sourceSecretEnv } from '../lib/aws/internal.js';
import { createConsoleFilter, parseStartArgs } from '../local-stack/console-filter.js';
import { createLineReader } from '../local-stack/function-logs.js';
import { DEVELOPMENT_WEBHOOK_SECRET, LOCAL_SOURCES, startLocalStack } from '../local-stack/stack.js';
import { sourceLines, writeStateFile } from '../local-stack/state-file.js';

const root = new URL('..', import.meta.url).pathname;
const stateFile = process.env.FORGEBRIDGE_STATE_FILE || join(root, '.tmp/local-stack.json');

/** The wanted port when it is free, else a free one. */
async function preferredPort(wanted: number): Promise<number> {
  const server = createServer();
  server.listen(wanted, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : wanted;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let startOptions: { metrics: boolean };
try {
  startOptions = parseStartArgs(process.argv.slice(2));
} catch (error) {
  console.error(`forgebridge: ${(error as Error).message}`);
  process.exit(2);
}

// Ctrl-C is handled from the first moment: a signal Node has no listener for ends the process at once, before any
// clean-up (osls offline, in a process group of its own, would be left running). One that comes while the stack
// starts stops it as soon as it is up.
type Stack = Awaited<ReturnType<typeof startLocalStack>>;
let resolveStarted: (stack: Stack | undefined) => void = () => {};
const started = {
  promise: new Promise<Stack | undefined>((resolve) => {
    resolveStarted = resolve;
  }),
  resolve: (stack: Stack | undefined) => resolveStarted(stack),
};
let stopping = false;
let follow: NodeJS.Timeout | undefined;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`\nforgebridge: ${signal}, stopping the local stack…`);
  const stack = await started.promise;
  try {
    clearInterval(follow);
    await stack?.stop();
    rmSync(stateFile, { force: true });
    console.log('forgebridge: stopped');
    process.exit(0);
  } catch (error) {
    console.error('forgebridge: stop failed', error);
    process.exit(1);
  }
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

const env = process.env;
const startedAt = Date.now();
console.log(
  'forgebridge: starting the local stack (DynamoDB Local, s3rver, oidc-provider, forge API, osls offline)…',
);
let stack: Stack;
try {
  stack = await startLocalStack({
    webhookSecret: env.FORGEBRIDGE_WEBHOOK_SECRET || DEVELOPMENT_WEBHOOK_SECRET,
    // A source's own list (a secret rotation): FORGEBRIDGE_WEBHOOK_SECRET_<NAME>, else the stack's convention.
    sourceSecrets: Object.fromEntries(
      LOCAL_SOURCES.flatMap(({ name }) => {
        const value = env[sourceSecretEnv(name)];
        return name !== DEFAULT_SOURCE && value ? [[name, value]] : [];
      }),
    ),
    ports: {
      http: await preferredPort(Number(env.FORGEBRIDGE_HTTP_PORT || 3000)),
      eventBridge: await preferredPort(Number(env.FORGEBRIDGE_EVENTBRIDGE_PORT || 4010)),
    },
    // config/local.yml's (INFO) unless the environment sets one.
    ...(env.FORGEBRIDGE_LOG_LEVEL ? { logLevel: env.FORGEBRIDGE_LOG_LEVEL } : {}),
    // GitHub's and GitLab's delivery-log stand-ins (two small servers here): FORGEBRIDGE_FORGE_STAND_INS=off leaves them out.
    forgeStandIns: env.FORGEBRIDGE_FORGE_STAND_INS !== 'off',
    // A log file followed from here, never a pipe: a reader falling behind would stall serverless-offline.
    output: 'file',
    // Edit a function or lib/ while it runs: the functions are rebuilt, and the next invocation runs the new code.
    watch: {
      onRebuild: ({ errors }) => {
        if (errors.length === 0)
          console.log('forgebridge: functions rebuilt; the next invocation runs the new code');
        else
          console.error(
            `forgebridge: the functions did not build (the previous build still runs):\n  ${errors.join('\n  ')}`,
          );
      },
    },
  });
} catch (error) {
  console.error('forgebridge: the local stack did not start:', error);
  started.resolve(undefined);
  process.exit(1);
}
if (stopping) {
  // Ctrl-C while it started: stop it now, without the banner.
  started.resolve(stack);
} else {
  // `forgebridge send`, `replay` and `dev` find each source here; `deliveries`, `show` and `replay` the delivery log.
  writeStateFile(stack, stateFile);

  const filter = createConsoleFilter(startOptions);
  const output = stack.logFile === undefined ? undefined : createLineReader(stack.logFile);
  function flush(): void {
    for (const line of output?.lines() ?? []) {
      const shown = filter(line);
      if (shown !== undefined) process.stdout.write(`${shown}\n`);
    }
  }
  // What osls offline printed while starting comes first, the summary last.
  flush();

  console.log(`
forgebridge local stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s

  inspector        ${stack.inspectorUrl}   (live delivery log, replay, samples)
  webhook sources  each forge posts to its own URL, signed with its own secret (development only):
${sourceLines(stack.sources, '    ').join('\n')}
  event bus        ${stack.names.bus} on ${stack.endpoints.eventBridge}
  DynamoDB Local   ${stack.endpoints.dynamodb}  (tables ${stack.names.dedupeTable}, ${stack.names.tokenTable})
  S3 (s3rver)      ${stack.endpoints.s3}  (bucket ${stack.names.bucket})
  OAuth issuer     ${stack.endpoints.issuer}
  forge API        ${stack.endpoints.forgeApi}${
    stack.forgeStandIns === undefined
      ? ''
      : `
  forge logs       GitHub ${stack.forgeStandIns.github.url}, GitLab ${stack.forgeStandIns.gitlab.api}
                   (the github and gitlab sources' hooks: npx forgebridge reconcile)`
  }

Send a signed sample delivery:   npx forgebridge send issues.opened
  as a forge does, to its source: npx forgebridge send pull_request.opened --forge gitlab
Press Ctrl-C to stop everything.${startOptions.metrics ? "\nMetrics: shown as the functions print them (the retrier's queue line when it changes)." : ''}
`);

  follow = setInterval(flush, 200);
  started.resolve(stack);
}
