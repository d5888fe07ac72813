// The local stack (`npm start`, and the end-to-end tests): on embedded defaults and with no AWS account it
// starts DynamoDB Local, s3rver, oidc-provider, the forge API (and, asked for, the forge delivery-log
// stand-ins) and `osls offline start` (serverless-offline + serverless-offline-aws-eventbridge), creates the
// tables and the bucket, and points the functions at them.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DEFAULT_SOURCE,
  DeliveryLog,
  readIngestConfig,
  readStageConfig,
  sourceSecretEnv,
  withSourceHooks,
} from '../lib/aws/internal.js';
import type { LocalSource } from '../lib/cli/state-file.js';
import { type Forge, forgeSecret } from '../lib/webhooks/index.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from './authorization-server.js';
import { type AwsCallRecorders, startAwsCallRecorders } from './aws-call-recorder.js';
import { createTables, type DynamoDbLocal, startDynamoDbLocal } from './dynamodb.js';
import { type ForgeApi, parseForgeApiLimits, startForgeApi } from './forge-api.js';
import { type ForgeStandIns, startForgeStandIns } from './forge-stand-ins.js';
import { createFunctionLogReader, type FunctionLogRecord } from './function-logs.js';
import { startInspector } from './inspector/server.js';
import { localConcurrency } from './local-concurrency.js';
import { type Offline, type OfflineOptions, type OfflinePorts, startOffline } from './offline.js';
import { type OrderedFailure, type OrderedStream, startOrderedStream } from './ordered-stream.js';
import { freePort } from './ports.js';
import { type LocalS3, startS3 } from './s3.js';
import { startSqs } from './sqs.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** The region the functions are given (AWS_REGION). */
const REGION = 'us-east-1';

/** The development webhook secret `npm start` uses unless `FORGEBRIDGE_WEBHOOK_SECRET` is set. */
export const DEVELOPMENT_WEBHOOK_SECRET = 'forgebridge-development-secret';

/** The local stack's own settings: config/local.yml's values (`npm start` and the tests both run stage `local`). */
const LOCAL_CONFIG = readStageConfig({
  stage: 'local',
  dir: fileURLToPath(new URL('..', import.meta.url)),
  env: {},
  offline: true,
});

/**
 * The webhook sources of the local stack, as config/local.yml lists them: `default` (`/webhooks`, the generic preset)
 * and one per forge, named after it (`/webhooks/gitlab`), each with its own secret.
 */
export const LOCAL_SOURCES: readonly { name: string; forge: Forge }[] = readIngestConfig({
  ...LOCAL_CONFIG.settings,
  IS_OFFLINE: 'true',
}).sources.map(({ name, forge }) => ({ name, forge }));

/**
 * The secret of a local source: the stack's secret for `default`, else the secret with `-<source>` appended, in
 * the form the source's forge takes (`forgeSecret`: a `whsec_` secret derived from it for `standard` and `svix`).
 */
export function localSourceSecret(secret: string, source: string): string {
  if (source === DEFAULT_SOURCE) return secret;
  const forge = LOCAL_SOURCES.find(({ name }) => name === source)?.forge ?? 'generic';
  return forgeSecret(forge, `${secret}-${source}`);
}

/** One webhook source of a running local stack, as its state file lists it. */
export type { LocalSource };

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Stage: names the bus, tables and bucket (`forgebridge-<stage>-…`). Default `local`. */
  stage?: string;
  /** The webhook secret(s), comma-separated. Default: a random one (tests) — `npm start` passes its own. */
  webhookSecret?: string;
  /**
   * A source's own secret(s), comma-separated, by source name, over the stack's convention (`npm start` takes
   * them from FORGEBRIDGE_WEBHOOK_SECRET_<NAME>: a rotation restarts the stack with the source's new list).
   */
  sourceSecrets?: Readonly<Record<string, string>>;
  /** Ports of serverless-offline and the EventBridge mock; each one left out is a free port. */
  ports?: Partial<OfflinePorts>;
  /** Put a stoppable TCP proxy between the ingest and the local bus (tests make the bus fail with it). */
  busProxy?: boolean;
  /** `FORGEBRIDGE_MAX_ENTRY_BYTES` of the ingest. Default: lib/aws' default (256 KB). */
  maxEntryBytes?: number;
  /** Powertools log level of the functions. Default: config/local.yml's (`INFO`). */
  logLevel?: string;
  /**
   * `FORGEBRIDGE_PUBLISH_BUDGET_MS` of the ingest and the retrier: how long a publish may retry a bus that refuses,
   * before the delivery is queued. Default: config/local.yml's (12000).
   */
  publishBudgetMs?: number;
  /**
   * How often the stack invokes the retrier of queued deliveries through serverless-offline's Lambda API, one run
   * after the other, in ms (serverless-offline's own schedule runs it once a minute only). Default 2000; 0 turns it off.
   */
  redriveIntervalMs?: number;
  /** Where `osls offline`'s output goes: this terminal (`'inherit'`) or a log file (`'file'`, the default). */
  output?: 'inherit' | 'file';
  /**
   * Rebuild the functions on every change of their code, and serve the new build from the next invocation on
   * (`npm start`; see `startOffline`'s `watch`). Default: built once.
   */
  watch?: OfflineOptions['watch'];
  /**
   * Run the GitHub and GitLab delivery-log stand-ins (local-stack/forge-stand-ins.ts), delivering into the
   * `github` and `gitlab` sources, which then name their `hook`: the reconciler reads them. Default off.
   */
  forgeStandIns?: boolean;
  /**
   * How long the example ordered subscriber works on each delivery, in ms (`FORGEBRIDGE_EXAMPLE_WORK_MS`).
   * Default: the function's own (300).
   */
  orderedWorkMs?: number;
  /**
   * How many instances of a function run at once, per function key, over the stack's own limits
   * (local-stack/local-concurrency.ts). Default: those limits.
   */
  concurrency?: Record<string, number>;
  /**
   * Record every AWS call of the functions into this JSON-lines file: a recording proxy in front of each endpoint
   * they reach (DynamoDB, S3, EventBridge; local-stack/aws-call-recorder.ts) forwards it and appends the IAM action
   * and resource it needs, attributed by the function's User-Agent app id. Default off.
   */
  awsCallLog?: string;
  /**
   * Stage settings over config/local.yml's, by name (`{ FORGEBRIDGE_FORGE_API_GOVERNOR: 'off' }`): what a
   * `FORGEBRIDGE_*` variable in the environment of `osls` does for a deployed stage. Default none.
   */
  settings?: Readonly<Record<string, string>>;
}

/** A running local stack. */
export interface LocalStack {
  /** Where the forge posts deliveries (the `default` source: generic preset). */
  readonly webhookUrl: string;
  /** The webhook secret(s) the default source accepts. */
  readonly secret: string;
  /** Every webhook source: `default` and one per forge ({@link LOCAL_SOURCES}). */
  readonly sources: readonly LocalSource[];
  readonly stage: string;
  readonly names: {
    bus: string;
    dedupeTable: string;
    tokenTable: string;
    /** The delivery log (it keeps payloads here: `FORGEBRIDGE_DELIVERY_LOG_PAYLOAD=true`). */
    deliveriesTable: string;
    bucket: string;
    /** The ordered stream's name (kinesalite runs it only with an ordered subscriber configured). */
    orderedStream: string;
    /** The subscriber rules' dead-letter queue (fauxqs), as the template names it. */
    subscriberDlq: string;
    /** The ordered subscribers' failure queue (fauxqs), as the template names it. */
    orderedFailureQueue: string;
  };
  readonly endpoints: {
    dynamodb: string;
    s3: string;
    eventBridge: string;
    issuer: string;
    forgeApi: string;
    /** serverless-offline's Lambda API (`forgebridge reconcile` invokes the reconcile function there). */
    lambda: string;
    /** fauxqs, the SQS API of the subscriber rules' dead-letter queue (`forgebridge dlq`). */
    sqs: string;
    /** kinesalite, the ordered stream, when an ordered subscriber is configured. */
    kinesis: string | undefined;
  };
  readonly ports: OfflinePorts;
  readonly dynamodb: DynamoDbLocal;
  readonly s3: LocalS3;
  readonly authorizationServer: AuthorizationServer;
  readonly forgeApi: ForgeApi;
  /** The forge stand-ins, with `forgeStandIns: true`. */
  readonly forgeStandIns: ForgeStandIns | undefined;
  /** `osls offline`'s log file (with `output: 'file'`): `npm start` follows it through its console filter. */
  readonly logFile: string | undefined;
  /** The last lines of `osls offline`'s log (with `output: 'file'`). */
  logTail(lines?: number): string;
  /**
   * Every function's Powertools log lines so far, parsed (with `output: 'file'`; empty with `'inherit'`):
   * each subscriber's `delivery received`, the local recorder's `delivery recorded`, and the rest.
   */
  functionLogs(): readonly FunctionLogRecord[];
  /**
   * The example catch-all subscribers' failure switch, a test aid of the local stack only: while this file holds
   * `{ "fail": ["onEverything"] }`, each function it names fails every delivery (functions/catch-all/fail-switch.ts).
   * `FORGEBRIDGE_EXAMPLE_FAIL_FILE` sets its path for `npm start`.
   */
  readonly exampleFailFile: string;
  /** Present with `busProxy: true`: stop it to make PutEvents fail, start it to heal. */
  readonly busProxy: TcpProxy | undefined;
  /** The delivery inspector page on 127.0.0.1 (local-stack/inspector). */
  readonly inspectorUrl: string;
  /**
   * The ordered stream on kinesalite, when config/local.yml lists ordered subscribers: its name, its endpoint, and
   * what its failure destination holds so far (one message per record an ordered subscriber gave up on).
   */
  readonly orderedStream:
    | { readonly streamName: string; readonly endpoint: string; failures(): OrderedFailure[] }
    | undefined;
  /** Stops every server and child process (DynamoDB Local's Java included). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the whole local stack and resolves once a delivery can be posted to `webhookUrl`.
 *
 * @example
 * ```ts
 * const stack = await startLocalStack();
 * await fetch(stack.webhookUrl, { method: 'POST', headers, body });
 * await stack.stop();
 * ```
 * @see https://github.com/dherault/serverless-offline
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stage = options.stage ?? 'local';
  const secret = options.webhookSecret ?? randomBytes(24).toString('base64url');
  const sourceSecretOf = (name: string): string =>
    (name === DEFAULT_SOURCE ? undefined : options.sourceSecrets?.[name]) ?? localSourceSecret(secret, name);
  const names = {
    bus: `forgebridge-${stage}`,
    dedupeTable: `forgebridge-${stage}-dedupe`,
    tokenTable: `forgebridge-${stage}-tokens`,
    deliveriesTable: `forgebridge-${stage}-deliveries`,
    bucket: `forgebridge-${stage}-claim-checks`,
    /** The ordered stream (kinesalite), when config/local.yml lists ordered subscribers. */
    orderedStream: `forgebridge-${stage}-ordered`,
    subscriberDlq: `forgebridge-${stage}-subscriber-dlq`,
    /** The ordered subscribers' failure queue (fauxqs), as the template names it. */
    orderedFailureQueue: `forgebridge-${stage}-ordered-failures`,
  };
  const stops: (() => Promise<void>)[] = [];
  const home = mkdtempSync(join(tmpdir(), 'forgebridge-stack-home-'));
  const exampleFailFile = process.env.FORGEBRIDGE_EXAMPLE_FAIL_FILE || join(home, 'example-failures.json');
  stops.push(async () => rmSync(home, { recursive: true, force: true }));
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    const errors: unknown[] = [];
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, 'local stack did not stop cleanly');
  };

  try {
    // DynamoDB Local (a JVM, about 2 s) and `osls offline` (it bundles every function, the longest step) start
    // side by side further down: the functions reach DynamoDB only when invoked, so its port is chosen first.
    const dynamodbPort = await freePort();
    // Both settle before a failure of one is thrown: the other has then registered its stop.
    const sqs = await startSqs({ queues: [names.subscriberDlq, names.orderedFailureQueue] });
    stops.push(() => sqs.stop());
    const [s3, authorizationServer] = await bothStarted(
      startS3({ buckets: [names.bucket] }).then((server) => {
        stops.push(() => server.stop());
        return server;
      }),
      startAuthorizationServer().then((server) => {
        stops.push(() => server.stop());
        return server;
      }),
    );
    // GitHub's secondary limits, scaled down (FORGEBRIDGE_LOCAL_FORGE_LIMITS); each answer takes 20 ms, as a real
    // forge's does, so that calls overlap.
    const forgeApi = await startForgeApi({
      issuer: authorizationServer.issuer,
      jwksUri: authorizationServer.jwksUri,
      audience: FORGE_API_RESOURCE,
      limits: parseForgeApiLimits(process.env.FORGEBRIDGE_LOCAL_FORGE_LIMITS),
      delayMs: 20,
    });
    stops.push(() => forgeApi.stop());
    let standIns: ForgeStandIns | undefined;
    if (options.forgeStandIns === true) {
      standIns = await startForgeStandIns({
        issuer: authorizationServer.issuer,
        jwksUri: authorizationServer.jwksUri,
        audience: FORGE_API_RESOURCE,
        provider: 'forge',
        secrets: { github: sourceSecretOf('github'), gitlab: sourceSecretOf('gitlab') },
      });
      const started = standIns;
      stops.push(() => started.stop());
    }

    const eventBridgePort = options.ports?.eventBridge ?? (await freePort());
    // kinesalite's port, chosen before the call recorders that stand in front of it.
    const orderedSettings = LOCAL_CONFIG.ordered;
    const kinesisPort = orderedSettings.subscribers.length > 0 ? await freePort() : undefined;
    const eventBridge = `http://127.0.0.1:${eventBridgePort}`;
    let recorders: AwsCallRecorders | undefined;
    if (options.awsCallLog !== undefined) {
      recorders = await startAwsCallRecorders({
        file: options.awsCallLog,
        stage,
        region: REGION,
        names,
        targets: {
          dynamodb: `http://127.0.0.1:${dynamodbPort}`,
          s3: s3.endpoint,
          events: eventBridge,
          kinesis: kinesisPort === undefined ? undefined : `http://127.0.0.1:${kinesisPort}`,
        },
      });
      const started = recorders;
      stops.push(() => started.stop());
    }
    let busProxy: TcpProxy | undefined;
    if (options.busProxy === true) {
      // In front of the recorder: a stopped bus proxy refuses connections, as a bus that is down would.
      busProxy = await startTcpProxy({ targetPort: recorders?.ports.events ?? eventBridgePort });
      const proxy = busProxy;
      stops.push(() => proxy.stop());
    }

    const oauthClients = [
      {
        provider: 'forge',
        clientId: DEFAULT_CLIENT.client_id,
        scope: 'forge:read',
        resource: FORGE_API_RESOURCE,
        site: authorizationServer.issuer,
        tokenUrl: authorizationServer.tokenEndpoint,
      },
    ];
    const env: Record<string, string> = {
      // The AWS SDK reads service endpoints from AWS_ENDPOINT_URL_<SERVICE>; serverless-offline passes every
      // AWS_* variable to the functions. s3rver checks signatures made with its own fixed key pair.
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_ENDPOINT_URL_DYNAMODB: recorders?.urls.dynamodb ?? `http://127.0.0.1:${dynamodbPort}`,
      AWS_ENDPOINT_URL_S3: recorders?.urls.s3 ?? s3.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: busProxy?.url ?? recorders?.urls.events ?? eventBridge,
      FORGEBRIDGE_BUS_NAME: names.bus,
      FORGEBRIDGE_DEDUPE_TABLE: names.dedupeTable,
      FORGEBRIDGE_TOKEN_TABLE: names.tokenTable,
      FORGEBRIDGE_DELIVERIES_TABLE: names.deliveriesTable,
      FORGEBRIDGE_BUCKET: names.bucket,
      FORGEBRIDGE_WEBHOOK_SECRET: secret,
      // Offline, each source's secret comes from FORGEBRIDGE_WEBHOOK_SECRET[_<NAME>]. config/local.yml's sources; with the stand-ins, the github and gitlab ones name the hook the reconciler reads.
      FORGEBRIDGE_WEBHOOK_SOURCES: withSourceHooks(LOCAL_CONFIG.settings, standIns?.hooks ?? {}),
      ...Object.fromEntries(
        LOCAL_SOURCES.filter(({ name }) => name !== DEFAULT_SOURCE).map(({ name }) => [
          sourceSecretEnv(name),
          sourceSecretOf(name),
        ]),
      ),
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify(oauthClients),
      FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
      FORGEBRIDGE_FORGE_API_URL: forgeApi.url,
      // A test aid of the local stack only: while this file names a catch-all
      // subscriber, it fails every delivery, as a bad deploy would (functions/catch-all/fail-switch.ts).
      FORGEBRIDGE_EXAMPLE_FAIL_FILE: exampleFailFile,
    };
    // The rest of the functions' settings come from config/local.yml, through serverless.yml, or from `settings`.
    for (const [name, value] of Object.entries(options.settings ?? {})) {
      if (!name.startsWith('FORGEBRIDGE_'))
        throw new TypeError(`"settings": "${name}" is not a FORGEBRIDGE_* setting`);
      env[name] = value;
    }
    if (options.logLevel !== undefined) env.FORGEBRIDGE_LOG_LEVEL = options.logLevel;
    if (options.maxEntryBytes !== undefined) env.FORGEBRIDGE_MAX_ENTRY_BYTES = String(options.maxEntryBytes);
    if (options.publishBudgetMs !== undefined)
      env.FORGEBRIDGE_PUBLISH_BUDGET_MS = String(options.publishBudgetMs);

    // The ordered stream, when an ordered subscriber is configured: kinesalite before the ingest can write to it.
    let ordered: OrderedStream | undefined;
    const streamName = names.orderedStream;
    const failureFile = join(home, 'ordered-failures.jsonl');
    if (kinesisPort !== undefined) {
      ordered = await startOrderedStream({
        port: kinesisPort,
        streamName,
        shards: orderedSettings.shards,
        failureFile,
        failureQueue: {
          clientConfig: sqs.clientConfig,
          queueUrl: sqs.queueUrls[names.orderedFailureQueue] as string,
        },
      });
      const started = ordered;
      stops.push(() => started.stop());
      env.AWS_ENDPOINT_URL_KINESIS = recorders?.urls.kinesis ?? ordered.endpoint;
      env.FORGEBRIDGE_STREAM_NAME = streamName;
      if (options.orderedWorkMs !== undefined)
        env.FORGEBRIDGE_EXAMPLE_WORK_MS = String(options.orderedWorkMs);
    }

    const [dynamodb, offline] = await bothStarted(
      // The client compiler only: the JVM's start takes about 1.6 s of CPU instead of 3, beside osls on the same
      // cores; a local stack never serves enough requests to miss the optimising compiler.
      startDynamoDbLocal({
        port: dynamodbPort,
        javaOptions: ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'],
      }).then((server) => {
        stops.push(() => server.stop());
        return createTables(server.endpoint, {
          dedupe: names.dedupeTable,
          tokens: names.tokenTable,
          deliveries: names.deliveriesTable,
        }).then(() => server);
      }),
      startOffline({
        stage,
        env,
        home: join(home, 'home'),
        ports: { ...options.ports, eventBridge: eventBridgePort },
        output: options.output ?? 'file',
        watch: options.watch,
        concurrency: {
          ...localConcurrency(orderedSettings.subscribers, orderedSettings.shards),
          ...options.concurrency,
        },
      }).then((started: Offline) => {
        stops.push(() => started.stop());
        return started;
      }),
    );
    const redriveIntervalMs = options.redriveIntervalMs ?? 2_000;
    if (redriveIntervalMs > 0) {
      const timer = startRedriveTimer(
        `http://127.0.0.1:${offline.ports.lambda}/2015-03-31/functions/forgebridge-${stage}-redrive/invocations`,
        redriveIntervalMs,
      );
      // Stopped before osls offline (stops run in reverse).
      stops.push(() => timer.stop());
    }
    const logs = offline.logFile === undefined ? undefined : createFunctionLogReader(offline.logFile);
    ordered?.startPollers({
      lambdaEndpoint: `http://127.0.0.1:${offline.ports.lambda}`,
      stage,
      subscribers: orderedSettings.subscribers,
    });

    const webhookUrl = `http://127.0.0.1:${offline.ports.http}/webhooks`;
    standIns?.target({ github: `${webhookUrl}/github`, gitlab: `${webhookUrl}/gitlab` });
    const sources = LOCAL_SOURCES.map(({ name, forge }) => ({
      name,
      forge,
      url: name === DEFAULT_SOURCE ? webhookUrl : `${webhookUrl}/${name}`,
      secret: sourceSecretOf(name),
    }));
    const logClient = new DynamoDBClient(dynamodb.clientConfig);
    const inspector = await startInspector({
      log: new DeliveryLog({ client: logClient, tableName: names.deliveriesTable }),
      sources,
      // Its replay to one subscriber invokes the subscriber's function here.
      lambda: `http://127.0.0.1:${offline.ports.lambda}`,
      stage,
    });
    stops.push(async () => {
      await inspector.stop();
      logClient.destroy();
    });

    return {
      webhookUrl,
      secret,
      sources,
      exampleFailFile,
      inspectorUrl: inspector.url,
      stage,
      names,
      endpoints: {
        dynamodb: dynamodb.endpoint,
        s3: s3.endpoint,
        eventBridge,
        issuer: authorizationServer.issuer,
        forgeApi: forgeApi.url,
        lambda: `http://127.0.0.1:${offline.ports.lambda}`,
        sqs: sqs.endpoint,
        kinesis: ordered?.endpoint,
      },
      ports: offline.ports,
      dynamodb,
      s3,
      authorizationServer,
      forgeApi,
      forgeStandIns: standIns,
      busProxy,
      orderedStream:
        ordered === undefined
          ? undefined
          : {
              streamName,
              endpoint: ordered.endpoint,
              failures: () =>
                existsSync(failureFile)
                  ? readFileSync(failureFile, 'utf8')
                      .split('\n')
                      .filter((line) => line !== '')
                      .map((line) => JSON.parse(line) as OrderedFailure)
                  : [],
            },
      logTail: (lines) => offline.logTail(lines),
      logFile: offline.logFile,
      functionLogs: () => logs?.records() ?? [],
      stop: stopAll,
    };
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
}

/**
 * Both results once both have settled: when one fails, the other has still registered its stop before the
 * caller stops everything.
 */
async function bothStarted<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

/**
 * Invokes the scheduled retrier through serverless-offline's Lambda API every `intervalMs`, each run after the
 * previous one ended (as the schedule would, never two at once from here); a failed invocation is retried next time.
 */
function startRedriveTimer(url: string, intervalMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const aborted = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.any([aborted.signal, AbortSignal.timeout(120_000)]),
    })
      .then((response) => response.arrayBuffer())
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      aborted.abort();
      await running;
    },
  };
}
