// A recording HTTP proxy in front of one AWS endpoint of the local stack (DynamoDB Local, s3rver, the local
// EventBridge, kinesalite): it forwards every request unchanged (method, path, headers as sent, so SigV4 signatures still
// match; the body streamed) and its answer unchanged, and appends one JSON line per IAM authorization the request
// needs (local-stack/aws-calls.ts) to a file, with the function that sent it (its `app/forgebridge-<key>` User-Agent
// section) and the answer's status. The end-to-end tests evaluate these lines against each function's role in the
// packaged template (test/iam). A request the upstream cannot take has its connection dropped, as the endpoint's
// own refusal would be seen.
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type ArnContext, type AwsService, appIdOf, awsCallTargets, functionOfAppId } from './aws-calls.js';

/** One line of the call log: one IAM authorization one request needed. */
export interface AwsCallRecord {
  kind: 'call';
  /** The stack that recorded it (its {@link AwsStackRecord}). */
  stack: string;
  at: string;
  /** The function key in serverless.yml (`ingest`), or null for a client without our app id (a test's own). */
  function: string | null;
  /** The raw app id, or null. */
  appId: string | null;
  service: AwsService;
  operation: string;
  action: string;
  resource: string;
  /** The answer's HTTP status; 0 when the upstream could not be reached. */
  status: number;
}

/** The line a stack writes once before its calls: what its names are, to map them onto the template's resources. */
export interface AwsStackRecord {
  kind: 'stack';
  stack: string;
  at: string;
  stage: string;
  region: string;
  account: string;
  /** The local stack's resource names (`LocalStack['names']`). */
  names: Readonly<Record<string, string>>;
}

export type AwsCallLogLine = AwsCallRecord | AwsStackRecord;

/** Options of {@link startAwsCallRecorder}. */
export interface AwsCallRecorderOptions {
  service: AwsService;
  /** The endpoint requests go on to: `http://127.0.0.1:<port>`. */
  target: string;
  /** The JSON-lines file the records are appended to. */
  file: string;
  /** The id of the stack ({@link AwsStackRecord}). */
  stack: string;
  arn: ArnContext;
}

/** A running recording proxy. */
export interface AwsCallRecorder {
  /** `http://127.0.0.1:<port>`: the endpoint to give the functions. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Appends one line to the call log. */
export function appendAwsCallLog(file: string, line: AwsCallLogLine): void {
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/**
 * Starts a recording proxy on 127.0.0.1 (a free port) in front of `target`.
 *
 * @example
 * ```ts
 * const dynamodb = await startAwsCallRecorder({ service: 'dynamodb', target, file, stack: 'a1', arn });
 * env.AWS_ENDPOINT_URL_DYNAMODB = dynamodb.url;
 * ```
 */
export async function startAwsCallRecorder(options: AwsCallRecorderOptions): Promise<AwsCallRecorder> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  // The JSON services' bodies are read for the table and bus names; S3's (up to megabytes) only streams through.
  const readsBody = options.service !== 's3';

  const record = (request: IncomingMessage, body: Buffer | undefined, status: number) => {
    const appId = appIdOf(request.headers);
    const targets = awsCallTargets(
      options.service,
      { method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body },
      options.arn,
    );
    const at = new Date().toISOString();
    for (const { operation, action, resource } of targets) {
      appendAwsCallLog(options.file, {
        kind: 'call',
        stack: options.stack,
        at,
        function: functionOfAppId(appId),
        appId: appId ?? null,
        service: options.service,
        operation,
        action,
        resource,
        status,
      });
    }
  };

  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    if (readsBody) request.on('data', (chunk: Buffer) => chunks.push(chunk));
    let recorded = false;
    const done = (status: number) => {
      if (recorded) return;
      recorded = true;
      record(request, readsBody ? Buffer.concat(chunks) : undefined, status);
    };
    const upstream = httpRequest({
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: request.url,
      // As sent, in order and case: the signature covers the Host header among others.
      headers: request.rawHeaders as unknown as OutgoingHttpHeaders,
      agent,
    });
    upstream.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(response);
      answer.on('close', () => done(answer.statusCode ?? 0));
      // An answer cut short upstream is cut short here too.
      answer.on('error', () => response.destroy());
    });
    // A client that goes away takes its upstream request with it.
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    upstream.on('error', () => {
      const status = response.headersSent ? response.statusCode : 0;
      const drop = () => {
        done(status);
        request.socket.destroy();
      };
      // The body read to its end first: the record names the table or bus from it.
      if (request.complete) drop();
      else {
        request.once('end', drop);
        request.once('close', drop);
        request.resume();
      }
    });
    request.on('error', () => upstream.destroy());
    request.pipe(upstream);
  };

  const server = createServer(forward);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await closed;
    },
  };
}

/** The recording proxies of one stack, by service. */
export interface AwsCallRecorders {
  /** By service; none for Kinesis when the stack has no ordered stream. */
  readonly urls: Readonly<Record<Exclude<AwsService, 'kinesis'>, string>> & { readonly kinesis?: string };
  readonly ports: Readonly<Record<Exclude<AwsService, 'kinesis'>, number>> & { readonly kinesis?: number };
  stop(): Promise<void>;
}

/** Options of {@link startAwsCallRecorders}. */
export interface AwsCallRecordersOptions {
  /** The JSON-lines file. */
  file: string;
  stage: string;
  region: string;
  /** Default `000000000000` (serverless-offline-aws-eventbridge's account in serverless.yml). */
  account?: string;
  /** The stack's resource names, written once into the log before its calls. */
  names: Readonly<Record<string, string>>;
  /** The real endpoints (Kinesis's only with the ordered stream). */
  targets: Readonly<Record<Exclude<AwsService, 'kinesis'>, string>> & { kinesis?: string | undefined };
}

/**
 * One recording proxy per service the functions reach, and the stack's line in the log.
 *
 * @example
 * ```ts
 * const recorders = await startAwsCallRecorders({ file, stage, region, names, targets });
 * env.AWS_ENDPOINT_URL_S3 = recorders.urls.s3;
 * ```
 */
export async function startAwsCallRecorders(options: AwsCallRecordersOptions): Promise<AwsCallRecorders> {
  const stack = randomBytes(6).toString('hex');
  const arn = { region: options.region, account: options.account ?? '000000000000' };
  appendAwsCallLog(options.file, {
    kind: 'stack',
    stack,
    at: new Date().toISOString(),
    stage: options.stage,
    ...arn,
    names: options.names,
  });
  // Kinesis only when the stack runs the ordered stream.
  const services = (['dynamodb', 's3', 'events', 'kinesis'] as const).filter(
    (service) => options.targets[service] !== undefined,
  );
  const started: AwsCallRecorder[] = [];
  const stop = async () => {
    await Promise.all(started.map((recorder) => recorder.stop()));
  };
  try {
    for (const service of services) {
      started.push(
        await startAwsCallRecorder({
          service,
          target: options.targets[service] as string,
          file: options.file,
          stack,
          arn,
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const by = <T>(pick: (recorder: AwsCallRecorder) => T) =>
    Object.fromEntries(
      services.map((service, i) => [service, pick(started[i] as AwsCallRecorder)]),
    ) as Record<Exclude<AwsService, 'kinesis'>, T> & { kinesis?: T };
  return { urls: by((recorder) => recorder.url), ports: by((recorder) => recorder.port), stop };
}
