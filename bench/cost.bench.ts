// What a million deliveries cost (`npm run bench -- cost`): the real ingest (createIngestHandler) and a
// reporting subscriber (createSubscriberHandler) over a mix of deliveries, with SDK clients whose request
// handler (bench/fixtures/aws-recorder.ts) answers in process and counts what AWS bills from the requests
// themselves; the functions' own log lines are counted as they are printed; CPU time is measured per
// invocation. Prices and the duration model are in bench/cost-model.ts; docs/cost.md explains them.
import { createHmac, randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import {
  AwsDefaults,
  createIngestHandler,
  createOrderedSubscriberHandler,
  createSubscriberHandler,
  DeliveryLogTable,
  withoutSdkCallLog,
} from '../lib/aws/internal.js';
import { exampleDeliveries } from '../local-stack/sample-deliveries.js';
import {
  addUnits,
  billedMs,
  CallLatencyMs,
  costLines,
  httpApiRequests,
  LAMBDA_PLATFORM_LOG_BYTES,
  noUnits,
  Prices,
  total,
  type Units,
} from './cost-model.js';
import { AwsRecorder, type Recorded } from './fixtures/aws-recorder.js';
import { warmFloor } from './fixtures/warm-floor.js';

const SECRET = 'cost-bench-secret';
/** The deployment's function memory (serverless.yml `provider.memorySize`). */
export const MEMORY_MB = Number(process.env.BENCH_MEMORY_MB ?? 256);
const MEMORY_SIZES = [128, 256, 512, 1024];
const MIX_SIZE = Number(process.env.BENCH_COST_DELIVERIES ?? 400);
/** The functions' log level (serverless.yml `custom.forgebridge.logLevel`, FORGEBRIDGE_LOG_LEVEL). */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'WARN';
const LARGE = [512 * 1024, 1024 * 1024, 2 * 1024 * 1024, 4 * 1024 * 1024];

/** The ingest as Lambda calls it. */
type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

interface Delivery {
  id: string;
  name: string;
  body: string;
}

/** z of the standard normal at probability p (Acklam's rational approximation is overkill here: bisection). */
function normalQuantile(p: number): number {
  let lo = -8;
  let hi = 8;
  for (let i = 0; i < 60; i += 1) {
    const mid = (lo + hi) / 2;
    if (0.5 * (1 + erf(mid / Math.SQRT2)) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
function erf(x: number): number {
  // Abramowitz and Stegun 7.1.26: enough for picking sizes.
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return x >= 0 ? y : -y;
}

/**
 * The mix: the catalogue's 329 example payloads taken in turn, each grown to a size drawn at evenly spaced
 * quantiles of a log-normal (median 20 KB, sigma 1.0: p90 72 KB, p99 205 KB), plus 4 large deliveries (0.5,
 * 1, 2 and 4 MB, 1% of the mix) for the tail. A payload is grown with a text field (`body` of a comment, say):
 * what a delivery costs depends on its bytes, not on which field holds them.
 */
export function deliveryMix(count = MIX_SIZE): Delivery[] {
  const examples = exampleDeliveries();
  const sizes = Array.from({ length: count }, (_, i) =>
    Math.round(20 * 1024 * Math.exp(1.0 * normalQuantile((i + 0.5) / count))),
  );
  sizes.push(...LARGE);
  return sizes.map((size, i) => {
    const example = examples[(i * 7) % examples.length] as (typeof examples)[number];
    const base = JSON.stringify(example.payload);
    const grow = Math.max(0, size - Buffer.byteLength(base) - 16);
    const body = grow === 0 ? base : JSON.stringify({ ...example.payload, bench_text: 'x'.repeat(grow) });
    return { id: randomUUID(), name: example.name, body };
  });
}

/** A GitHub delivery as a Function URL hands it over: GitHub's headers, then the ones AWS's front door adds. */
function event(delivery: Delivery) {
  const body = delivery.body;
  const headers = {
    accept: '*/*',
    'content-length': `${Buffer.byteLength(body)}`,
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/7f3c1d2',
    'x-github-delivery': delivery.id,
    'x-github-event': delivery.name,
    'x-github-hook-id': '292430182',
    'x-github-hook-installation-target-id': '79929171',
    'x-github-hook-installation-target-type': 'repository',
    'x-hub-signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`,
    'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    host: 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws',
    'x-amzn-tls-cipher-suite': 'TLS_AES_128_GCM_SHA256',
    'x-amzn-tls-version': 'TLSv1.3',
    'x-amzn-trace-id': 'Root=1-67891233-abcdef012345678912345678',
    'x-forwarded-for': '140.82.115.1',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
  };
  const time = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnopqrstuvwxyz012345',
      domainName: headers.host,
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz012345',
      http: {
        method: 'POST',
        path: '/webhooks',
        protocol: 'HTTP/1.1',
        sourceIp: '140.82.115.1',
        userAgent: headers['user-agent'],
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: time.toISOString(),
      timeEpoch: time.getTime(),
    },
    body,
    isBase64Encoded: false,
  } satisfies APIGatewayProxyEventV2;
}

const context = (name: string): Context =>
  ({
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: `${MEMORY_MB}`,
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 10_000,
    callbackWaitsForEmptyEventLoop: true,
  }) as Context;

/** Runs `work` with stdout and stderr counted (and kept off the terminal); its CPU time without the recorder's. */
async function measured<T>(recorder: AwsRecorder, work: () => Promise<T>) {
  const write = { out: process.stdout.write, err: process.stderr.write };
  let logBytes = 0;
  let emfLines = 0;
  let lines = 0;
  const counting = (chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    logBytes += Buffer.byteLength(text);
    const printed = text.split('\n').filter((line) => line.trim() !== '');
    lines += printed.length;
    emfLines += printed.filter((line) => line.includes('"_aws"')).length;
    if (process.env.BENCH_COST_SHOW_LOGS === '1') write.err.call(process.stderr, text);
    return true;
  };
  process.stdout.write = counting as typeof process.stdout.write;
  process.stderr.write = counting as typeof process.stderr.write;
  const recorderBefore = recorder.cpuMicros;
  const before = process.cpuUsage();
  try {
    const result = await work();
    const used = process.cpuUsage(before);
    const cpuMs = (used.user + used.system - (recorder.cpuMicros - recorderBefore)) / 1000;
    return { result, cpuMs, logBytes, emfLines, lines };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

function waitMs(recorded: Recorded): number {
  const calls = recorded.calls;
  const dynamodb = Object.entries(calls)
    .filter(([name]) => name.startsWith('DynamoDB.'))
    .reduce((sum, [, count]) => sum + count, 0);
  const s3 = recorded.s3Puts + recorded.s3Gets;
  return (
    dynamodb * CallLatencyMs.dynamodb +
    (calls['EventBridge.PutEvents'] ?? 0) * CallLatencyMs.eventbridge +
    (calls['Kinesis.PutRecord'] ?? 0) * CallLatencyMs.kinesis +
    s3 * CallLatencyMs.s3 +
    (recorded.s3Bytes / 1024 ** 2) * CallLatencyMs.s3PerMb
  );
}

/** One function invocation, as billed. */
interface Invocation {
  cpuMs: number;
  waitMs: number;
  logBytes: number;
  emfLines: number;
  lines: number;
  recorded: Recorded;
}

function unitsOf(invocations: readonly Invocation[], memoryMb: number, requestBytes = 0): Units {
  const units = noUnits();
  for (const call of invocations) {
    units.invocations += 1;
    units.gbSeconds += (billedMs(call.cpuMs, call.waitMs, memoryMb) / 1000) * (memoryMb / 1024);
    units.putEventsChunks += call.recorded.putEventsChunks;
    units.writeUnits += call.recorded.writeUnits;
    units.readUnits += call.recorded.readUnits;
    units.s3Puts += call.recorded.s3Puts;
    units.s3Gets += call.recorded.s3Gets;
    units.kinesisPutUnits += call.recorded.kinesisPutUnits;
    units.logBytes += call.logBytes + LAMBDA_PLATFORM_LOG_BYTES;
  }
  if (requestBytes > 0) units.ingressRequests += httpApiRequests(requestBytes);
  return units;
}

export interface Deployment {
  log: boolean;
  payload: boolean;
  maxEntryBytes: number;
  /** The functions' Powertools log level. Default {@link LOG_LEVEL}. */
  logLevel?: string;
  /**
   * One ordered subscriber on every delivery (FORGEBRIDGE_ORDERED_SUBSCRIBERS): the ingest also writes the ordered
   * stream, and the ordered subscriber (reporting into the delivery log) gets each record in a batch of its own, the
   * most invocations a quiet stream makes (Lambda batches what arrives within its polling interval).
   */
  ordered?: boolean;
}

/** Drives one deployment over the mix; what each delivery's ingest and subscriber invocations were billed. */
export async function runMix(mix: readonly Delivery[], deployment: Deployment) {
  const recorder = new AwsRecorder([
    {
      table: 'deliveries',
      keys: [DeliveryLogTable.dayAttribute, DeliveryLogTable.atAttribute],
      projected: [
        DeliveryLogTable.partitionKey,
        DeliveryLogTable.sortKey,
        ...DeliveryLogTable.listAttributes,
      ],
    },
  ]);
  const clientConfig = {
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: recorder.requestHandler,
  };
  const env = {
    FORGEBRIDGE_BUS_NAME: 'bus',
    FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
    FORGEBRIDGE_BUCKET: 'claims',
    FORGEBRIDGE_FORGE: 'github',
    FORGEBRIDGE_MAX_ENTRY_BYTES: `${deployment.maxEntryBytes}`,
    FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/bench/secret',
    ...(deployment.ordered === true ? { FORGEBRIDGE_STREAM_NAME: 'forgebridge-prod-ordered' } : {}),
    ...(deployment.log
      ? {
          FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries',
          FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: `${deployment.payload}`,
        }
      : {}),
  };
  const clients = {
    dynamodb: withoutSdkCallLog(new DynamoDBClient(clientConfig)),
    eventBridge: withoutSdkCallLog(new EventBridgeClient({ ...clientConfig, maxAttempts: 1 })),
    s3: withoutSdkCallLog(new S3Client(clientConfig)),
    kinesis: withoutSdkCallLog(new KinesisClient({ ...clientConfig, maxAttempts: 1 })),
  };
  const logLevel = (deployment.logLevel ?? LOG_LEVEL) as 'INFO';
  const ingest = createIngestHandler({
    env,
    clients,
    secret: SECRET,
    logger: new Logger({ serviceName: 'forgebridge-ingest', logLevel }),
  }) as unknown as Handler;
  const subscriber = createSubscriberHandler({
    env: { ...env, AWS_LAMBDA_FUNCTION_NAME: 'forgebridge-prod-subscriber' },
    clients: { s3: clients.s3, dynamodb: clients.dynamodb },
    logger: new Logger({ serviceName: 'forgebridge-subscriber', logLevel }),
  });
  const ordered = createOrderedSubscriberHandler({
    env: { ...env, AWS_LAMBDA_FUNCTION_NAME: 'forgebridge-prod-ordered' },
    clients: { s3: clients.s3, dynamodb: clients.dynamodb },
    logger: new Logger({ serviceName: 'forgebridge-subscriber', logLevel }),
  });
  const results: {
    delivery: Delivery;
    ingest: Invocation;
    subscriber: Invocation[];
    requestBytes: number;
  }[] = [];
  for (const delivery of mix) {
    const request = event(delivery);
    const requestBytes =
      Buffer.byteLength(request.body) +
      Object.entries(request.headers).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
    const run = await measured(recorder, () => ingest(request, context('forgebridge-prod-ingest')));
    const status = (run.result as { statusCode?: number }).statusCode;
    if (status !== 202)
      throw new Error(`the ingest answered ${status} to a ${delivery.body.length} byte delivery`);
    const recorded = recorder.take();
    const ingestCall = { ...run, waitMs: waitMs(recorded), recorded };
    const subscriberCalls: Invocation[] = [];
    for (const entry of recorded.entries) {
      const bridgeEvent = {
        version: '0',
        id: randomUUID(),
        'detail-type': entry.DetailType,
        source: entry.Source,
        account: '000000000000',
        time: new Date().toISOString(),
        region: 'us-east-1',
        resources: [],
        detail: JSON.parse(entry.Detail),
      };
      const received = await measured(recorder, () =>
        subscriber(bridgeEvent, context('forgebridge-prod-subscriber')),
      );
      const taken = recorder.take();
      subscriberCalls.push({ ...received, waitMs: waitMs(taken), recorded: taken });
    }
    for (const record of recorded.records) {
      const received = await measured(recorder, () =>
        ordered({ Records: [{ kinesis: record }] }, context('forgebridge-prod-ordered')),
      );
      const taken = recorder.take();
      subscriberCalls.push({ ...received, waitMs: waitMs(taken), recorded: taken });
    }
    results.push({ delivery, ingest: ingestCall, subscriber: subscriberCalls, requestBytes });
  }
  return results;
}

type Results = Awaited<ReturnType<typeof runMix>>;

function totals(results: Results, memoryMb: number) {
  let units = noUnits();
  for (const result of results) {
    units = addUnits(units, unitsOf([result.ingest], memoryMb, result.requestBytes));
    units = addUnits(units, unitsOf(result.subscriber, memoryMb));
  }
  return units;
}

const money = (value: number) => `$${value.toFixed(2)}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export default async function costBench() {
  const mix = deliveryMix();
  const sizes = mix.map((delivery) => Buffer.byteLength(delivery.body));
  console.log(
    `mix: ${mix.length} deliveries, median ${(median(sizes) / 1024).toFixed(1)} KB, largest ${(Math.max(...sizes) / 1024 ** 2).toFixed(1)} MB; prices of ${Prices.date} (us-east-1, arm64); ${MEMORY_MB} MB functions, log level ${LOG_LEVEL}\n`,
  );
  const maxEntryBytes = Number(process.env.BENCH_MAX_ENTRY_BYTES ?? AwsDefaults.maxEntryBytes);
  // A first pass warms the code paths (JIT), so CPU time is the warm path's.
  await runMix(mix.slice(0, 60), { log: true, payload: false, maxEntryBytes });
  const logOn = await runMix(mix, { log: true, payload: false, maxEntryBytes });
  const logOff = await runMix(mix, { log: false, payload: false, maxEntryBytes });
  const payloadOn = await runMix(mix, { log: true, payload: true, maxEntryBytes });
  const infoLines = await runMix(mix, { log: true, payload: false, maxEntryBytes, logLevel: 'INFO' });
  const orderedOn = await runMix(mix, { log: true, payload: false, maxEntryBytes, ordered: true });

  const defaultUnits = totals(logOn, MEMORY_MB);
  const lines = costLines(defaultUnits, mix.length, 'function-url');
  console.log(
    '| item (default: Function URL, delivery log on) | units per delivery | unit price | per million |',
  );
  console.log('| --- | ---: | ---: | ---: |');
  for (const line of lines) {
    console.log(
      `| ${line.item} | ${line.unitsPerDelivery.toPrecision(4)} | $${line.unitPrice.toPrecision(4)} | ${money(line.perMillion)} |`,
    );
  }
  const ingestCpu = logOn.map((result) => result.ingest.cpuMs);
  const subscriberCpu = logOn.flatMap((result) => result.subscriber.map((call) => call.cpuMs));
  const ingestItems = logOn.flatMap((result) => result.ingest.recorded.itemBytes.deliveries ?? []);
  const emf = logOn.reduce((sum, result) => sum + result.ingest.emfLines, 0);
  console.log(
    `\nCPU per invocation (this machine, one core): ingest median ${median(ingestCpu).toFixed(2)} ms, subscriber median ${median(subscriberCpu).toFixed(2)} ms; ` +
      `delivery-log item median ${median(ingestItems)} B (largest ${Math.max(0, ...ingestItems)} B); EMF lines per ingest ${(emf / mix.length).toFixed(2)}; ` +
      `calls per delivery: ${JSON.stringify(callsPerDelivery(logOn))}`,
  );

  let ingestUnits = noUnits();
  for (const result of logOn) ingestUnits = addUnits(ingestUnits, unitsOf([result.ingest], MEMORY_MB));
  console.log(
    `of which the ingest alone (the rest is the reporting subscriber): ${money(total(costLines(ingestUnits, mix.length, 'function-url')))}`,
  );

  console.log('\n| deployment option | per million |');
  console.log('| --- | ---: |');
  for (const [label, results] of [
    ['delivery log on', logOn],
    ['delivery log off', logOff],
    ['delivery log on, payload stored', payloadOn],
    ['delivery log on, log level INFO', infoLines],
    ['delivery log on, one ordered subscriber', orderedOn],
  ] as const) {
    const units = totals(results, MEMORY_MB);
    for (const ingress of ['function-url', 'http-api'] as const) {
      const name = ingress === 'function-url' ? 'Function URL' : 'HTTP API';
      console.log(`| ${name}, ${label} | ${money(total(costLines(units, mix.length, ingress)))} |`);
    }
  }

  console.log(
    '\n| memory (Function URL, log on) | billed ms per ingest (median) | Lambda GB-s cost per million | total per million |',
  );
  console.log('| ---: | ---: | ---: | ---: |');
  for (const memory of MEMORY_SIZES) {
    const units = totals(logOn, memory);
    const bill = costLines(units, mix.length, 'function-url');
    const ms = median(logOn.map((result) => billedMs(result.ingest.cpuMs, result.ingest.waitMs, memory)));
    console.log(`| ${memory} MB | ${ms} | ${money(bill[2]?.perMillion ?? 0)} | ${money(total(bill))} |`);
  }

  const shardMonth = Prices.kinesisShardHour * 730;
  console.log(
    `\none ordered subscriber: its stream's shard costs ${money(shardMonth)} a month whatever the traffic ($${Prices.kinesisShardHour} an hour; one shard takes 1,000 records or 1 MB a second); ` +
      `the row above is per million deliveries on top of it, each record in a batch of its own (the most invocations; a busy stream batches up to 10 records per invocation)`,
  );

  await warmPathLine(mix);

  console.log(
    `\ncost: ${money(total(lines))} per million deliveries (default deployment, delivery log on, 20 KB median)`,
  );
}

function callsPerDelivery(results: Results): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) {
    for (const call of [result.ingest, ...result.subscriber]) {
      for (const [name, count] of Object.entries(call.recorded.calls))
        counts[name] = (counts[name] ?? 0) + count;
    }
  }
  return Object.fromEntries(
    Object.entries(counts).map(([name, count]) => [name, +(count / results.length).toFixed(2)]),
  );
}

/**
 * Warm ingest CPU per delivery next to a floor making the same calls with the bare SDK (target 1.2x). Both
 * handlers are built once and warmed; then each delivery of the mix goes to both in turn (the order flips
 * every delivery), so a burst of load on a shared machine, or a garbage collection one of them caused, lands
 * on both sides alike. The line gives the median of the rounds' ratios.
 */
export async function warmPathLine(mix: readonly Delivery[]) {
  const small = mix.filter((delivery) => delivery.body.length < 200 * 1024);
  const rounds = Number(process.env.BENCH_WARM_ROUNDS ?? 9);
  const ingest = warmRig('ingest');
  const floor = warmRig('floor');
  for (let pass = 0; pass < 2; pass += 1) {
    for (const delivery of small) {
      await ingest(delivery);
      await floor(delivery);
    }
  }
  const ratios: number[] = [];
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    let a = 0;
    let b = 0;
    for (const [i, delivery] of small.entries()) {
      if ((i + round) % 2 === 0) {
        a += await ingest(delivery);
        b += await floor(delivery);
      } else {
        b += await floor(delivery);
        a += await ingest(delivery);
      }
    }
    ratios.push(a / b);
    ours.push(a / small.length);
    theirs.push(b / small.length);
  }
  console.log(
    `\nwarm ingest CPU per delivery (log on, log level ${LOG_LEVEL}, ${small.length} deliveries under 200 KB, median of ${rounds} interleaved rounds): ${median(ours).toFixed(3)} ms, floor ${median(theirs).toFixed(3)} ms, ${median(ratios).toFixed(2)}x (target 1.2x; rounds ${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x)`,
  );
}

/** One warm handler (ours or the floor) with its own recorder: returns the CPU ms a delivery took. */
export function warmRig(which: 'ingest' | 'floor'): (delivery: Delivery) => Promise<number> {
  const recorder = new AwsRecorder();
  const clientConfig = {
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: recorder.requestHandler,
  };
  // The floor's clients are the SDK's defaults; ours are built the way the functions build theirs.
  const ours = which === 'ingest' ? withoutSdkCallLog : <C>(client: C) => client;
  const dynamodb = ours(new DynamoDBClient(clientConfig));
  const eventBridge = ours(new EventBridgeClient({ ...clientConfig, maxAttempts: 1 }));
  const s3 = ours(new S3Client(clientConfig));
  const handler: Handler =
    which === 'floor'
      ? warmFloor({ dynamodb, eventBridge, secret: SECRET, deliveriesTable: 'deliveries' })
      : (createIngestHandler({
          env: {
            FORGEBRIDGE_BUS_NAME: 'bus',
            FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
            FORGEBRIDGE_BUCKET: 'claims',
            FORGEBRIDGE_FORGE: 'github',
            FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/bench/secret',
            FORGEBRIDGE_DELIVERIES_TABLE: 'deliveries',
          },
          clients: { dynamodb, eventBridge, s3 },
          secret: SECRET,
          logger: new Logger({ serviceName: 'forgebridge-ingest', logLevel: LOG_LEVEL as 'INFO' }),
        }) as unknown as Handler);
  return async (delivery) => {
    // A fresh id each time: every delivery is new, none is a duplicate. The recorder forgets its items, so
    // both sides work on the same small store.
    const request = event({ ...delivery, id: randomUUID() });
    const run = await measured(recorder, () => handler(request, context('warm')));
    recorder.take();
    recorder.forget();
    return run.cpuMs;
  };
}
