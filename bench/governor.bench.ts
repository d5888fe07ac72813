// The forge API governor against the local stack: 300 `pull_request.opened` deliveries sent 50 at a time to the
// github source, each making one content-creating call (the example commenter's comment), the forge API stand-in
// enforcing GitHub's secondary limits scaled down. One run with the governor, one without it, side by side: the
// comments made, the limit answers the forge gave and those that reached the subscriber's code, the most requests in
// flight, and the total time beside the floor the forge's pacing limit allows. Then what the governor costs per
// million deliveries, from the AWS calls the commenter made (recorded by the stack) and the time its calls waited.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createForgeApi, DeliveryLog } from '../lib/aws/index.js';
import { inInvocation, readGovernorConfig } from '../lib/aws/internal.js';
import { DEFAULT_CLIENT, FORGE_API_RESOURCE } from '../local-stack/authorization-server.js';
import type { AwsCallLogLine } from '../local-stack/aws-call-recorder.js';
import { forgeSample, signForgeDelivery } from '../local-stack/sample-deliveries.js';
import { type LocalStack, startLocalStack } from '../local-stack/stack.js';
import { Prices } from './cost-model.js';

const DELIVERIES = Number(process.env.BENCH_GOVERNOR_DELIVERIES ?? 300);
const AT_ONCE = 50;
/**
 * The stand-in's limits: 10 in flight, 20 content-creating requests in any 20 s (GitHub's: 100, 80 a minute); slow
 * enough that the pacing, not the local stack's own speed (300 deliveries through one machine's ingest), sets the
 * floor.
 */
const FORGE = { concurrency: 10, writes: 20, windowSeconds: 20 };
/** The governor a notch under the forge: it paces calls as they leave, the forge counts them as they arrive. */
const BUDGETS = `writes:${FORGE.writes - 1}/${FORGE.windowSeconds}s`;
const FUNCTION = 'onPullRequestOpened';
/** The stage's memory size (serverless.yml `provider.memorySize`), for the waits' Lambda cost. */
const MEMORY_GB = 256 / 1024;

interface RunResult {
  label: string;
  /** Deliveries with their comment made, and comments made twice for one delivery. */
  comments: number;
  doubled: number;
  limitAnswers: number;
  reachedCode: number;
  maxConcurrent: number;
  /** From the first delivery sent to the last comment made; from the first comment to the last. */
  seconds: number;
  callSeconds: number;
  writesPerDelivery: number;
  waitMsPerDelivery: number;
}

/** Sends `AT_ONCE` at a time; resolves the delivery ids. */
async function send(stack: LocalStack, repository: string): Promise<string[]> {
  const github = stack.sources.find((source) => source.name === 'github');
  if (github === undefined) throw new Error('the local stack has no github source');
  const sample = forgeSample('github', 'pull_request.opened');
  const ids: string[] = [];
  let next = 0;
  const sender = async () => {
    while (next < DELIVERIES) {
      next += 1;
      const number = next;
      const payload = structuredClone(sample.payload) as {
        number: number;
        pull_request: { number: number };
        repository: { full_name: string };
      };
      payload.number = number;
      payload.pull_request.number = number;
      payload.repository.full_name = repository;
      const delivery = signForgeDelivery(github.secret, 'github', sample.nativeName, payload);
      // As a forge redelivers: a 5xx, a 409 or no answer (serverless-offline resets a connection under 50 at once)
      // is sent again with the same id; the dedupe record keeps it once.
      for (let attempt = 1; ; attempt++) {
        let status = 0;
        let body = '';
        try {
          const response = await fetch(github.url, {
            method: 'POST',
            headers: delivery.headers,
            body: delivery.body,
          });
          status = response.status;
          body = await response.text();
        } catch (error) {
          if (attempt === 5) throw error;
        }
        if (status === 202 || (status === 200 && body.includes('"duplicate":true'))) break;
        if (attempt === 5) throw new Error(`delivery ${number}: ${status} ${body}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      ids.push(delivery.id);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, sender));
  return ids;
}

/** A call below every limit: its median time and its DynamoDB requests, governor on and off, the same forge API. */
interface HappyPath {
  label: string;
  medianMs: number;
  writesPerCall: number;
  readsPerCall: number;
}

const HAPPY_CALLS = 200;

/**
 * `HAPPY_CALLS` reads of an issue one after the other from this process (a warm Lambda's token in memory), through
 * `createForgeApi` against the stack's forge API and DynamoDB Local: what the governor adds to a call below every
 * limit.
 */
async function happyPath(stack: LocalStack): Promise<HappyPath[]> {
  const results: HappyPath[] = [];
  for (const governor of ['off', 'on'] as const) {
    const client = new DynamoDBClient(stack.dynamodb.clientConfig);
    const counts = { writes: 0, reads: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (/UpdateItem|PutItem/.test(String(context.commandName))) counts.writes += 1;
        if (/GetItem|Query/.test(String(context.commandName))) counts.reads += 1;
        return next(args);
      },
      { step: 'initialize' },
    );
    const api = createForgeApi({
      env: {
        IS_OFFLINE: 'true',
        FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
        FORGEBRIDGE_TOKEN_TABLE: stack.names.tokenTable,
        FORGEBRIDGE_FORGE_API_URL: stack.forgeApi.url,
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
          {
            provider: `happy-${governor}`,
            clientId: DEFAULT_CLIENT.client_id,
            scope: 'forge:read',
            resource: FORGE_API_RESOURCE,
            site: stack.authorizationServer.issuer,
          },
        ]),
      },
      clients: { dynamodb: client },
      governor: { ...readGovernorConfig({}), enabled: governor === 'on' },
      onGovernorEvent: false,
    });
    await api.get('/repos/octo/hello/issues/1');
    counts.writes = 0;
    counts.reads = 0;
    const times: number[] = [];
    // Each call in an invocation of its own, as a subscriber's: the time the handler waits for the call.
    const invocation = inInvocation(async (number: number, _context: unknown) => {
      const started = performance.now();
      await api.get(`/repos/octo/hello/issues/${number}`);
      times.push(performance.now() - started);
    });
    for (let call = 0; call < HAPPY_CALLS; call++)
      await invocation(call + 1, { getRemainingTimeInMillis: () => 10_000 });
    times.sort((a, b) => a - b);
    results.push({
      label: governor === 'on' ? 'forgebridge governor' : 'no governor',
      medianMs: times[Math.floor(times.length / 2)] as number,
      writesPerCall: counts.writes / HAPPY_CALLS,
      readsPerCall: counts.reads / HAPPY_CALLS,
    });
    client.destroy();
  }
  return results;
}

async function run(label: string, governor: 'on' | 'off'): Promise<RunResult & { happy?: HappyPath[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'forgebridge-governor-bench-'));
  const callLog = join(dir, 'aws-calls.jsonl');
  process.env.FORGEBRIDGE_LOCAL_FORGE_LIMITS = `${FORGE.concurrency},${FORGE.writes}/${FORGE.windowSeconds}s`;
  const stack = await startLocalStack({
    awsCallLog: callLog,
    // 50 instances of the commenter at once, as Lambda would start for a burst.
    concurrency: { [FUNCTION]: AT_ONCE },
    settings: {
      FORGEBRIDGE_FORGE_API_GOVERNOR: governor,
      FORGEBRIDGE_FORGE_API_CONCURRENCY: String(FORGE.concurrency),
      FORGEBRIDGE_FORGE_API_BUDGETS: BUDGETS,
      FORGEBRIDGE_LOG_LEVEL: 'INFO',
      // A bot that waits for its turn gets the time to: 90 s, where the local stage gives its subscribers 30.
      FORGEBRIDGE_SUBSCRIBER_TIMEOUT: '90',
    },
  });
  const client = new DynamoDBClient(stack.dynamodb.clientConfig);
  try {
    const happy = governor === 'on' ? await happyPath(stack) : undefined;
    const repository = `bench-${randomUUID().slice(0, 8)}/bot`;
    const fn = `forgebridge-${stack.stage}-${FUNCTION}`;
    const lines = (message: string) =>
      stack.functionLogs().filter((line) => line.message === message && line.function_name === fn);
    const started = Date.now();
    const ids = await send(stack, repository);
    const mine = new Set(ids);
    // Done when every delivery has its comment (a delivery the bus handed the commenter twice is counted once), or
    // nothing happened for 10 s (what failed is spent: its retries are used up).
    let last = -1;
    let quietSince = Date.now();
    for (;;) {
      const seen = lines('comment written').length + lines('comment failed').length;
      if (seen !== last) {
        last = seen;
        quietSince = Date.now();
      }
      const written = new Set(
        lines('comment written')
          .map((line) => line.delivery as string)
          .filter((id) => mine.has(id)),
      ).size;
      if (written >= DELIVERIES || Date.now() - quietSince > 10_000) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const comments = stack.forgeApi
      .requests()
      .filter((call) => call.method === 'POST' && call.path.startsWith(`/repos/${repository}/issues/`));
    const done = comments.filter((call) => call.status === 201);
    const commented = new Set(done.map((call) => call.path));
    const finished = Math.max(...done.map((call) => call.at), started);
    // The calls' own span, from the first comment to the last: the stack's start of 50 cold instances aside.
    const firstCall = Math.min(...done.map((call) => call.at), finished);
    const stats = stack.forgeApi.limitStats();
    // The commenter's DynamoDB writes (the governor's, the token store's, its delivery-log report) per delivery.
    const calls = readFileSync(callLog, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as AwsCallLogLine)
      .filter((call) => call.kind === 'call' && call.function === FUNCTION && call.service === 'dynamodb');
    // The governor's writes: UpdateItem on the token table (the token itself is written by the refresh, not here).
    const writes = calls.filter(
      (call) =>
        call.kind === 'call' &&
        call.operation === 'UpdateItem' &&
        call.resource.endsWith(`/${stack.names.tokenTable}`),
    );
    const log = new DeliveryLog({ client, tableName: stack.names.deliveriesTable });
    let waited = 0;
    for (const id of ids)
      waited += (await log.get(id, { source: 'github' }))?.subscribers[fn]?.forgeWaitMs ?? 0;
    return {
      label,
      ...(happy === undefined ? {} : { happy }),
      comments: commented.size,
      doubled: done.length - commented.size,
      limitAnswers: stats.concurrencyAnswers + stats.writeAnswers,
      reachedCode: lines('comment failed').filter((line) => line.status === 403 || line.status === 429)
        .length,
      maxConcurrent: stats.maxConcurrent,
      seconds: (finished - started) / 1000,
      callSeconds: (finished - firstCall) / 1000,
      writesPerDelivery: writes.length / DELIVERIES,
      waitMsPerDelivery: waited / DELIVERIES,
    };
  } finally {
    client.destroy();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function governorBench() {
  // The forge's floor: `writes` in any window of `windowSeconds`, so N of them take at least (N / writes - 1) windows.
  const floor = (Math.ceil(DELIVERIES / FORGE.writes) - 1) * FORGE.windowSeconds;
  const results = [
    await run('forgebridge governor', 'on'),
    await run('no governor (each call straight out)', 'off'),
  ];
  console.log(
    `${DELIVERIES} pull_request.opened deliveries, ${AT_ONCE} at a time, one comment each; the forge allows ${FORGE.concurrency} in flight and ${FORGE.writes} writes in any ${FORGE.windowSeconds} s (governor: ${BUDGETS}); floor ${floor} s\n`,
  );
  console.log(
    '| run | deliveries commented | comments doubled | limit answers (forge) | reaching subscriber code | most in flight | first send to last comment | first comment to last | vs floor (total, calls) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const result of results) {
    console.log(
      `| ${result.label} | ${result.comments} of ${DELIVERIES} | ${result.doubled} | ${result.limitAnswers} | ${result.reachedCode} | ${result.maxConcurrent} (limit ${FORGE.concurrency}) | ${result.seconds.toFixed(1)} s | ${result.callSeconds.toFixed(1)} s | ${floor > 0 ? `${(result.seconds / floor).toFixed(2)}x, ${(result.callSeconds / floor).toFixed(2)}x` : '-'} |`,
    );
  }
  console.log(
    `\na call below every limit (${HAPPY_CALLS} issue reads one after the other, each in an invocation of its own, the token in memory, against the same forge API and DynamoDB Local):\n`,
  );
  console.log('| run | median call | DynamoDB writes per call | DynamoDB reads per call |');
  console.log('|---|---|---|---|');
  for (const row of results[0]?.happy ?? []) {
    console.log(
      `| ${row.label} | ${row.medianMs.toFixed(2)} ms | ${row.writesPerCall.toFixed(2)} | ${row.readsPerCall.toFixed(2)} |`,
    );
  }
  const on = results[0] as RunResult;
  const off = results[1] as RunResult;
  // What the governor adds per delivery: its writes (none without it), and the Lambda time waited.
  const extraWrites = on.writesPerDelivery - off.writesPerDelivery;
  const writeCost = extraWrites * Prices.dynamoDbWriteUnit * 1e6;
  const waitCost = (on.waitMsPerDelivery / 1000) * MEMORY_GB * Prices.lambdaGbSecond * 1e6;
  console.log(
    `\ngovernor cost per million deliveries: ${extraWrites.toFixed(2)} DynamoDB writes on the token table per delivery (${on.writesPerDelivery.toFixed(2)} with it, ${off.writesPerDelivery.toFixed(2)} without) = $${writeCost.toFixed(2)}; waiting ${on.waitMsPerDelivery.toFixed(0)} ms per delivery at ${MEMORY_GB * 1024} MB = $${waitCost.toFixed(2)} of Lambda time (what the burst costs in waiting; below every limit it is 0); total $${(writeCost + waitCost).toFixed(2)}`,
  );
}
