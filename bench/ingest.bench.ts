// The ingest bundle: its size and its cold start, next to a floor bundle that holds only the AWS SDK clients
// the ingest uses making the same calls (bench/fixtures/ingest-floor.ts). Both are bundled exactly as
// serverless.yml's `custom.esbuild` does. Cold start = a fresh node process that imports the bundle and runs
// a first invocation that really writes to DynamoDB Local and the local bus (the local stack's EventBridge).
// Target: the ingest at most 1.2x the floor.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { sampleDelivery, signDelivery } from '../local-stack/sample-deliveries.js';
import { startLocalStack } from '../local-stack/stack.js';

const root = new URL('..', import.meta.url).pathname;
const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 15);
const TARGET = 1.2;

/** The esbuild options of serverless.yml's `custom.esbuild`, read from the file so they cannot drift. */
function serverlessEsbuildOptions() {
  const yml = readFileSync(join(root, 'serverless.yml'), 'utf8');
  const banner = /js: "(.+)"/.exec(yml)?.[1];
  if (banner === undefined) throw new Error('serverless.yml has no esbuild banner');
  for (const [key, value] of [
    ['minify', 'true'],
    ['format', 'esm'],
    ['platform', 'node'],
    ['target', 'node22'],
  ]) {
    if (!new RegExp(`\\n    ${key}: ${value}\\n`).test(yml))
      throw new Error(`serverless.yml esbuild ${key} is not ${value}`);
  }
  return {
    bundle: true,
    minify: true,
    sourcemap: false,
    format: 'esm' as const,
    platform: 'node' as const,
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: banner },
    outExtension: { '.js': '.mjs' },
    logLevel: 'error' as const,
  };
}

const RUNNER = `
const started = performance.now();
const mod = await import(process.argv[2]);
const imported = performance.now();
const event = JSON.parse(process.env.BENCH_EVENT);
const context = { functionName: 'bench-ingest', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench-ingest', memoryLimitInMB: '512', awsRequestId: 'bench', logGroupName: '/aws/lambda/bench-ingest', logStreamName: 'bench', getRemainingTimeInMillis: () => 10000, callbackWaitsForEmptyEventLoop: true };
const result = await mod.handler(event, context);
const done = performance.now();
const cpu = process.cpuUsage();
process.stdout.write('\\nBENCH ' + JSON.stringify({ startMs: started, importMs: imported - started, invokeMs: done - imported, totalMs: done, cpuMs: (cpu.user + cpu.system) / 1000, status: result.statusCode }) + '\\n');
process.exit(0);
`;

interface Sample {
  startMs: number;
  importMs: number;
  invokeMs: number;
  totalMs: number;
  /** CPU time (user + system) of the whole process: less sensitive than wall time to a busy machine. */
  cpuMs: number;
  status: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

export default async function ingestBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'forgebridge-bench-ingest-'));
  const options = serverlessEsbuildOptions();
  const bundles = {
    ingest: join(dir, 'ingest/handler.mjs'),
    floor: join(dir, 'floor/handler.mjs'),
  };
  await build({
    ...options,
    entryPoints: { handler: join(root, 'functions/ingest/handler.ts') },
    outdir: join(dir, 'ingest'),
  });
  await build({
    ...options,
    entryPoints: { handler: join(root, 'bench/fixtures/ingest-floor.ts') },
    outdir: join(dir, 'floor'),
  });
  const runner = join(dir, 'runner.mjs');
  writeFileSync(runner, RUNNER);

  console.log('starting the local stack (DynamoDB Local, local EventBridge) for real writes…');
  const stack = await startLocalStack({ stage: 'bench' });
  try {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      IS_OFFLINE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_ENDPOINT_URL_DYNAMODB: stack.endpoints.dynamodb,
      AWS_ENDPOINT_URL_EVENTBRIDGE: stack.endpoints.eventBridge,
      AWS_ENDPOINT_URL_S3: stack.endpoints.s3,
      FORGEBRIDGE_DEDUPE_TABLE: stack.names.dedupeTable,
      FORGEBRIDGE_BUS_NAME: stack.names.bus,
      FORGEBRIDGE_BUCKET: stack.names.bucket,
      FORGEBRIDGE_WEBHOOK_SECRET: stack.secret,
      POWERTOOLS_SERVICE_NAME: 'forgebridge',
    };
    const { name, payload } = sampleDelivery('issues.opened');
    const measure = async (bundle: string): Promise<Sample> => {
      const delivery = signDelivery(stack.secret, name, payload);
      const event = {
        version: '2.0',
        routeKey: 'POST /webhooks',
        rawPath: '/webhooks',
        rawQueryString: '',
        headers: delivery.headers,
        requestContext: { http: { method: 'POST', path: '/webhooks' } },
        body: delivery.body,
        isBase64Encoded: false,
      };
      const { stdout } = await run(process.execPath, [runner, bundle], {
        env: { ...env, BENCH_EVENT: JSON.stringify(event) },
        maxBuffer: 16 * 1024 * 1024,
      });
      const line = stdout.split('\n').find((text) => text.startsWith('BENCH '));
      if (line === undefined) throw new Error(`no measure from ${bundle}: ${stdout.slice(-500)}`);
      const sample = JSON.parse(line.slice(6)) as Sample;
      if (sample.status !== 202) throw new Error(`${bundle} answered ${sample.status}, not 202`);
      return sample;
    };
    // One warm-up each (file cache, DynamoDB Local JIT), then alternate so drift hits both alike.
    await measure(bundles.ingest);
    await measure(bundles.floor);
    const samples: Record<'ingest' | 'floor', Sample[]> = { ingest: [], floor: [] };
    for (let i = 0; i < RUNS; i += 1) {
      samples.ingest.push(await measure(bundles.ingest));
      samples.floor.push(await measure(bundles.floor));
    }

    const row = (label: string, bundle: string, list: Sample[]) => {
      const bytes = statSync(bundle).size;
      return {
        label,
        kib: bytes / 1024,
        startMs: median(list.map((sample) => sample.startMs)),
        importMs: median(list.map((sample) => sample.importMs)),
        invokeMs: median(list.map((sample) => sample.invokeMs)),
        totalMs: median(list.map((sample) => sample.totalMs)),
        cpuMs: median(list.map((sample) => sample.cpuMs)),
      };
    };
    const ours = row('ingest (functions/ingest/handler.ts)', bundles.ingest, samples.ingest);
    const floor = row('floor (SDK clients only, same calls)', bundles.floor, samples.floor);
    const pad = (text: string, width: number) => text.padEnd(width);
    const num = (value: number, digits = 1) => value.toFixed(digits).padStart(9);
    console.log(
      `cold start, median of ${RUNS} fresh node processes (${process.version}); times in ms from process start\n`,
    );
    console.log(
      `${pad('bundle', 40)}${'KiB'.padStart(9)}${'node'.padStart(9)}${'import'.padStart(9)}${'1st call'.padStart(9)}${'total'.padStart(9)}`,
    );
    for (const entry of [ours, floor]) {
      console.log(
        `${pad(entry.label, 40)}${num(entry.kib)}${num(entry.startMs)}${num(entry.importMs)}${num(entry.invokeMs)}${num(entry.totalMs)}${num(entry.cpuMs)}`,
      );
    }
    const ratio = ours.totalMs / floor.totalMs;
    const cpuRatio = ours.cpuMs / floor.cpuMs;
    const verdict = (value: number) =>
      `${value.toFixed(2)}x (target <= ${TARGET}x): ${value <= TARGET ? 'PASS' : 'MISS'}`;
    console.log(`\ningest / floor: size ${(ours.kib / floor.kib).toFixed(2)}x`);
    console.log(`  cold start, wall time:  ${verdict(ratio)}`);
    console.log(`  cold start, CPU time:   ${verdict(cpuRatio)}  (steadier on a busy machine)`);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
