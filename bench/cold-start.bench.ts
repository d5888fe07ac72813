// Cold start of every bundle (ingest, catch-all, subscriber, refresh, reconcile) next to its floor: a bundle holding only
// the AWS SDK clients the handler builds, making the same calls (bench/fixtures/*-floor.ts). Everything is
// bundled with the options the functions are deployed with (infra/esbuild.cjs), from the handlers as they are now. Cold start = a fresh
// node process that imports the bundle and runs one representative invocation against loopback servers:
// DynamoDB Local, oidc-provider, the local forge API, and a small endpoint answering EventBridge and SSM
// (bench/fixtures/aws-endpoint.ts), which also counts each run's AWS calls so a drifting floor shows.
// Target: each bundle at most 1.2x its floor.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BuildOptions, build } from 'esbuild';
import {
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../local-stack/authorization-server.js';
import { createTables, startDynamoDbLocal } from '../local-stack/dynamodb.js';
import { startForgeApi } from '../local-stack/forge-api.js';
import { startGitHubDeliveries } from '../local-stack/github-deliveries.js';
import { sampleDelivery, signDelivery } from '../local-stack/sample-deliveries.js';
import { startAwsEndpoint } from './fixtures/aws-endpoint.js';

const root = new URL('..', import.meta.url).pathname;
const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 9);
const TARGET = 1.2;

/** The esbuild options the functions are deployed with (infra/esbuild.cjs, serverless.yml's `custom.esbuild`). */
function serverlessEsbuildOptions() {
  const { esbuildOptions } = createRequire(import.meta.url)('../infra/esbuild.cjs') as {
    esbuildOptions: () => BuildOptions;
  };
  return { ...esbuildOptions(), logLevel: 'silent' as const };
}

const RUNNER = `
const started = performance.now();
const mod = await import(process.argv[2]);
const imported = performance.now();
const event = JSON.parse(process.env.BENCH_EVENT);
const context = { functionName: 'bench', functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench', memoryLimitInMB: '512', awsRequestId: 'bench', logGroupName: '/aws/lambda/bench', logStreamName: 'bench', getRemainingTimeInMillis: () => 10000, callbackWaitsForEmptyEventLoop: true };
const result = await mod.handler(event, context);
const done = performance.now();
const cpu = process.cpuUsage();
process.stdout.write('\\nBENCH ' + JSON.stringify({ startMs: started, importMs: imported - started, invokeMs: done - imported, totalMs: done, cpuMs: (cpu.user + cpu.system) / 1000, result }) + '\\n');
process.exit(0);
`;

interface Sample {
  startMs: number;
  importMs: number;
  invokeMs: number;
  totalMs: number;
  /** CPU time (user + system) of the whole process: steadier than wall time on a busy machine. */
  cpuMs: number;
  result: unknown;
  calls: Record<string, number>;
}

interface Case {
  name: string;
  handler: string;
  floor: string;
  env: Record<string, string>;
  event: () => unknown;
  check: (result: unknown) => void;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const callsText = (calls: Record<string, number>) =>
  Object.entries(calls)
    .map(([target, count]) => `${target.replace(/^[A-Za-z_0-9]+\./, '')}${count > 1 ? `x${count}` : ''}`)
    .sort()
    .join(' ');

export default async function coldStartBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'forgebridge-bench-cold-'));
  const options = serverlessEsbuildOptions();
  const names = {
    dedupe: 'bench-dedupe',
    tokens: 'bench-tokens',
    deliveries: 'bench-deliveries',
    bus: 'bench-bus',
    bucket: 'bench-bucket',
  };
  const webhookSecret = 'bench-webhook-secret';
  const webhookParameter = '/forgebridge/bench/webhook-secret';
  const oauthParameter = '/forgebridge/bench/oauth/forgebridge-local';

  console.log('starting DynamoDB Local, oidc-provider, the forge API and the AWS endpoint on 127.0.0.1…');
  const dynamodb = await startDynamoDbLocal();
  const stops: Array<() => Promise<void>> = [() => dynamodb.stop()];
  try {
    await createTables(dynamodb.endpoint, names);
    const authorizationServer = await startAuthorizationServer({ devInteractions: false });
    stops.push(() => authorizationServer.stop());
    const forgeApi = await startForgeApi({
      issuer: authorizationServer.issuer,
      jwksUri: authorizationServer.jwksUri,
      audience: FORGE_API_RESOURCE,
    });
    stops.push(() => forgeApi.stop());
    // The reconciler's forge: GitHub's delivery log of one hook, each run finding one delivery that failed.
    const deliveryLog = await startGitHubDeliveries({ accepts: () => true, send: async () => 202 });
    stops.push(() => deliveryLog.close());
    const HOOK = '/repos/acme/web/hooks/1';
    deliveryLog.addHook(HOOK, webhookSecret);
    const aws = await startAwsEndpoint({
      dynamodb: dynamodb.endpoint,
      parameters: { [webhookParameter]: webhookSecret, [oauthParameter]: DEFAULT_CLIENT.client_secret },
    });
    stops.push(() => aws.stop());

    // The environment serverless.yml gives each function, pointed at the loopback servers.
    const base = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_ENDPOINT_URL: aws.url,
      POWERTOOLS_SERVICE_NAME: 'forgebridge',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      FORGEBRIDGE_SOURCE: 'forge.webhooks',
    };
    const oauthClients = JSON.stringify([
      {
        provider: 'forge',
        clientId: DEFAULT_CLIENT.client_id,
        scope: 'forge:read',
        resource: FORGE_API_RESOURCE,
        site: authorizationServer.issuer,
        tokenUrl: 'oauth/token',
        secretParameter: oauthParameter,
      },
    ]);
    const { name, payload } = sampleDelivery('issues.opened');
    const delivery = () => {
      const id = crypto.randomUUID();
      return {
        version: '0',
        id,
        'detail-type': 'issues.opened',
        source: 'forge.webhooks',
        account: '000000000000',
        time: new Date().toISOString(),
        region: 'us-east-1',
        resources: [],
        detail: { delivery: id, event: name, action: 'opened', payload },
      };
    };
    // The ingest's configuration as deployed (the delivery log on, its payload off: one more PutItem, in the
    // floor too), its API Gateway event, and its answer.
    const ingestEnv = {
      FORGEBRIDGE_BUS_NAME: names.bus,
      FORGEBRIDGE_DEDUPE_TABLE: names.dedupe,
      FORGEBRIDGE_DELIVERIES_TABLE: names.deliveries,
      FORGEBRIDGE_BUCKET: names.bucket,
      FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: webhookParameter,
      FORGEBRIDGE_MAX_ENTRY_BYTES: '262144',
      FORGEBRIDGE_DEDUPE_TTL_SECONDS: '604800',
      FORGEBRIDGE_DEDUPE_LOCK_SECONDS: '10',
      FORGEBRIDGE_ALLOW_SHA1: 'true',
    };
    // As on Lambda with active tracing: the SDKs send their segments over UDP to a daemon address nobody listens
    // on here (loopback); the subscriber's join rides on the PutEvents entry's TraceHeader.
    const activeTracing = {
      LAMBDA_TASK_ROOT: dir,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
      _X_AMZN_TRACE_ID: 'Root=1-65f1a2b3-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1',
    };
    const ingestEvent = () => {
      const signed = signDelivery(webhookSecret, name, payload);
      return {
        version: '2.0',
        routeKey: 'POST /webhooks',
        rawPath: '/webhooks',
        rawQueryString: '',
        headers: signed.headers,
        requestContext: { http: { method: 'POST', path: '/webhooks' } },
        body: signed.body,
        isBase64Encoded: false,
      };
    };
    const answered202 = (result: unknown) => {
      const status = (result as { statusCode?: number } | undefined)?.statusCode;
      if (status !== 202) throw new Error(`answered ${status}, not 202`);
    };
    const cases: Case[] = [
      {
        name: 'ingest',
        handler: 'functions/ingest/handler.ts',
        floor: 'bench/fixtures/ingest-floor.ts',
        env: ingestEnv,
        event: ingestEvent,
        check: answered202,
      },
      {
        name: 'ingest+tracer',
        handler: 'bench/fixtures/ingest-powertools-tracer.ts',
        floor: 'bench/fixtures/ingest-floor.ts',
        env: { ...ingestEnv, ...activeTracing },
        event: ingestEvent,
        check: answered202,
      },
      {
        name: 'ingest+xray',
        handler: 'bench/fixtures/ingest-xray-sdk.ts',
        floor: 'bench/fixtures/ingest-floor.ts',
        env: { ...ingestEnv, ...activeTracing },
        event: ingestEvent,
        check: answered202,
      },
      {
        name: 'catch-all',
        handler: 'functions/catch-all/handler.ts',
        floor: 'bench/fixtures/catch-all-floor.ts',
        env: {},
        event: delivery,
        check: () => {},
      },
      {
        name: 'subscriber',
        handler: 'functions/subscriber/handler.ts',
        floor: 'bench/fixtures/subscriber-floor.ts',
        env: {
          FORGEBRIDGE_TOKEN_TABLE: names.tokens,
          FORGEBRIDGE_OAUTH_CLIENTS: oauthClients,
          FORGEBRIDGE_REFRESH_WINDOW_SECONDS: '300',
          FORGEBRIDGE_FORGE_API_URL: forgeApi.url,
        },
        event: delivery,
        check: () => {},
      },
      {
        name: 'refresh',
        handler: 'functions/refresh/handler.ts',
        floor: 'bench/fixtures/refresh-floor.ts',
        // A window longer than the token's lifetime: every run finds the token due and refreshes it.
        env: {
          FORGEBRIDGE_TOKEN_TABLE: names.tokens,
          FORGEBRIDGE_OAUTH_CLIENTS: oauthClients,
          FORGEBRIDGE_REFRESH_WINDOW_SECONDS: '86400',
        },
        event: () => ({ 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} }),
        check: (result) => {
          const refreshed = (result as { refreshed?: number } | undefined)?.refreshed;
          if (refreshed !== 1) throw new Error(`refreshed ${refreshed}, not 1`);
        },
      },
      {
        name: 'reconcile',
        handler: 'functions/reconcile/handler.ts',
        floor: 'bench/fixtures/reconcile-floor.ts',
        env: {
          FORGEBRIDGE_BUS_NAME: names.bus,
          FORGEBRIDGE_DEDUPE_TABLE: names.dedupe,
          FORGEBRIDGE_DEDUPE_TTL_SECONDS: '604800',
          FORGEBRIDGE_BUCKET: names.bucket,
          FORGEBRIDGE_MAX_ENTRY_BYTES: '262144',
          FORGEBRIDGE_TOKEN_TABLE: names.tokens,
          FORGEBRIDGE_OAUTH_CLIENTS: oauthClients,
          FORGEBRIDGE_REFRESH_WINDOW_SECONDS: '300',
          FORGEBRIDGE_DELIVERIES_TABLE: names.deliveries,
          FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
            {
              name: 'acme',
              forge: 'github',
              secretParameter: webhookParameter,
              hook: {
                kind: 'repo',
                owner: 'acme',
                repo: 'web',
                id: 1,
                provider: 'forge',
                api: deliveryLog.url,
              },
            },
          ]),
        },
        event: () => {
          void deliveryLog.deliver(HOOK, { event: name, payload, statusCode: 0 });
          return { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
        },
        check: (result) => {
          const redelivered = (result as { redelivered?: number } | undefined)?.redelivered;
          if (redelivered !== 1)
            throw new Error(`redelivered ${redelivered}, not 1: ${JSON.stringify(result)}`);
        },
      },
    ];

    const runner = join(dir, 'runner.mjs');
    writeFileSync(runner, RUNNER);
    const measure = async (bundle: string, test: Case): Promise<Sample> => {
      aws.take();
      const { stdout } = await run(process.execPath, [runner, bundle], {
        env: { ...base, ...test.env, BENCH_EVENT: JSON.stringify(test.event()) },
        maxBuffer: 16 * 1024 * 1024,
      });
      const line = stdout.split('\n').find((text) => text.startsWith('BENCH '));
      if (line === undefined) throw new Error(`no measure from ${bundle}: ${stdout.slice(-500)}`);
      const sample = { ...(JSON.parse(line.slice(6)) as Omit<Sample, 'calls'>), calls: aws.take() };
      test.check(sample.result);
      return sample;
    };

    const rows: string[] = [];
    const pad = (text: string, width: number) => text.padEnd(width);
    const num = (value: number, digits = 1) => value.toFixed(digits).padStart(9);
    console.log(
      `cold start = import + first call in a fresh node process (${process.version}), median of ${RUNS} interleaved runs; ms\n`,
    );
    console.log(
      `${pad('bundle', 22)}${'KiB'.padStart(9)}${'import'.padStart(9)}${'1st call'.padStart(9)}${'total'.padStart(9)}${'CPU'.padStart(9)}   AWS calls`,
    );
    const only = process.env.BENCH_COLD_ONLY;
    for (const test of cases.filter((candidate) => only === undefined || candidate.name === only)) {
      const bundles = {
        ours: join(dir, test.name, 'handler.mjs'),
        floor: join(dir, `${test.name}-floor`, 'handler.mjs'),
      };
      try {
        await build({
          ...options,
          entryPoints: { handler: join(root, test.handler) },
          outdir: join(dir, test.name),
        });
      } catch (error) {
        const message = (error as Error).message.split('\n').slice(0, 3).join(' ');
        console.log(`${pad(test.name, 22)} BUILD FAILED (${test.handler} is mid-change?): ${message}`);
        rows.push(`${test.name}: not measured (build failed)`);
        continue;
      }
      await build({
        ...options,
        entryPoints: { handler: join(root, test.floor) },
        outdir: join(dir, `${test.name}-floor`),
      });
      const samples: Record<'ours' | 'floor', Sample[]> = { ours: [], floor: [] };
      try {
        // One warm-up each (file cache, the servers' JIT, the first token in the table), then alternate.
        await measure(bundles.ours, test);
        await measure(bundles.floor, test);
        for (let i = 0; i < RUNS; i += 1) {
          samples.ours.push(await measure(bundles.ours, test));
          samples.floor.push(await measure(bundles.floor, test));
        }
      } catch (error) {
        const message = (error as Error).message.split('\n').slice(0, 4).join(' ').slice(0, 400);
        console.log(`${pad(test.name, 22)} RUN FAILED: ${message}`);
        rows.push(`${test.name}: not measured (run failed)`);
        continue;
      }
      const summary = (label: string, bundle: string, list: Sample[]) => {
        const entry = {
          kib: statSync(bundle).size / 1024,
          importMs: median(list.map((sample) => sample.importMs)),
          invokeMs: median(list.map((sample) => sample.invokeMs)),
          totalMs: median(list.map((sample) => sample.totalMs)),
          cpuMs: median(list.map((sample) => sample.cpuMs)),
          calls: callsText(list.at(-1)?.calls ?? {}),
        };
        console.log(
          `${pad(label, 22)}${num(entry.kib)}${num(entry.importMs)}${num(entry.invokeMs)}${num(entry.totalMs)}${num(entry.cpuMs)}   ${entry.calls || '-'}`,
        );
        return entry;
      };
      const ours = summary(test.name, bundles.ours, samples.ours);
      const floor = summary(`  floor`, bundles.floor, samples.floor);
      const ratio = ours.totalMs / floor.totalMs;
      const cpuRatio = ours.cpuMs / floor.cpuMs;
      const verdict = ratio <= TARGET ? 'PASS' : 'FAIL';
      const same = ours.calls === floor.calls ? 'same AWS calls' : 'AWS CALLS DIFFER';
      rows.push(
        `${pad(test.name, 12)} ${ratio.toFixed(2)}x wall (${verdict}, target <= ${TARGET}x), ${cpuRatio.toFixed(2)}x CPU, size ${(ours.kib / floor.kib).toFixed(2)}x, ${same}`,
      );
    }
    console.log('\nbundle / floor, cold start:');
    for (const row of rows) console.log(`  ${row}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
