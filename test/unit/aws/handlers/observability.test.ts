// What each function prints for a scripted run: the EMF lines of its metrics (names, units, dimensions, values,
// namespace), the trace header on the PutEvents entry, and the delivery id and trace id on every log line of the
// ingest and of a subscriber of its event. The composition roots run with their default Powertools Logger and
// Metrics, read back from stdout; AWS is mocked with aws-sdk-client-mock.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConditionalCheckFailedException, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createIngestHandler,
  createRedriveHandler,
  createSubscriberHandler,
} from '../../../../lib/aws/index.js';
import { useIngestMocks } from '../../../helpers/aws-mocks.js';
import { invoke, lambdaContext, SECRET, v2Event } from '../ingest/events.js';

const { dynamo, documents, events } = useIngestMocks();

const NAMESPACE = 'forgebridge/unit';
const TRACE = 'Root=1-65f1a2b3-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1';
const TRACE_ID = '1-65f1a2b3-0123456789abcdef01234567';
const region = { region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
const ENV = {
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_METRIC_NAMESPACE: NAMESPACE,
  FORGEBRIDGE_PUBLISH_BUDGET_MS: '100',
  POWERTOOLS_SERVICE_NAME: 'forgebridge',
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: 'default' }, { name: 'acme' }]),
};

/**
 * Every JSON line written to stdout and stderr (where the Logger's warnings and errors go) while `run` runs,
 * passed on so that the log guard still sees them.
 */
async function stdoutOf(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  streams.forEach((stream, index) => {
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (writes[index] as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
  });
  try {
    await run();
  } finally {
    streams.forEach((stream, index) => {
      stream.write = writes[index] as typeof stream.write;
    });
  }
  return lines
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Emf {
  namespace: string;
  dimensions: Record<string, unknown>;
  metrics: Record<string, { unit: string; value: unknown }>;
}

/** docs/operations.md's metrics table: name -> unit and dimensions besides `service`. */
const CONTRACT = new Map(
  [
    ...readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8').matchAll(
      /^\| `(\w+)` \| (\w+) \| ([^|]+) \|/gm,
    ),
  ].map(([, name, unit, cell]) => [
    name as string,
    {
      unit: unit as string,
      dimensions: [...(cell as string).matchAll(/`(\w+)`/g)]
        .map(([, dimension]) => dimension as string)
        .filter((dimension) => dimension !== 'service')
        .sort(),
      service: !(cell as string).includes('not even'),
    },
  ]),
);

/** An EMF line in a comparable form: its one dimension set with values, and each metric's unit and value. */
function emfOf(line: Record<string, unknown>): Emf {
  const aws = line._aws as {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  expect(aws.CloudWatchMetrics).toHaveLength(1);
  const [directive] = aws.CloudWatchMetrics;
  if (directive === undefined) throw new Error('no directive');
  expect(directive.Dimensions).toHaveLength(1);
  // Every metric with the unit and the exact dimension set the operations page fixes (alarms read exactly those).
  const set = directive.Dimensions[0] ?? [];
  for (const { Name, Unit } of directive.Metrics) {
    const contract = CONTRACT.get(Name);
    expect(contract, `${Name} is in docs/operations.md`).toBeDefined();
    expect(Unit, Name).toBe(contract?.unit);
    expect(set.filter((name) => name !== 'service').sort(), Name).toEqual(contract?.dimensions);
    expect(set.includes('service'), Name).toBe(contract?.service);
  }
  return {
    namespace: directive.Namespace,
    dimensions: Object.fromEntries((directive.Dimensions[0] ?? []).map((name) => [name, line[name]])),
    metrics: Object.fromEntries(
      directive.Metrics.map(({ Name, Unit }) => [Name, { unit: Unit, value: line[Name] }]),
    ),
  };
}

const emfLines = (lines: Record<string, unknown>[]) => lines.filter((line) => '_aws' in line).map(emfOf);
const logLines = (lines: Record<string, unknown>[]) => lines.filter((line) => !('_aws' in line));

const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;
const completed = (id: string) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: marshall({
      pk: keyOf(id),
      status: 'COMPLETED',
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
      data: { delivery: id },
    }),
  });
const down = () => Object.assign(new Error('down'), { name: 'InternalException' });

beforeEach(() => {
  process.env._X_AMZN_TRACE_ID = TRACE;
});

afterEach(() => {
  delete process.env._X_AMZN_TRACE_ID;
});

const ingest = () =>
  createIngestHandler({
    env: ENV,
    clients: { dynamodb: new DynamoDBClient(region), eventBridge: new EventBridgeClient(region) },
    sourceSecret: ({ name }) => `${SECRET}-${name}`,
  });
const routed = (id: string, source: string, secret = `${SECRET}-${source}`) => {
  const event = v2Event({ id, secret });
  return source === 'default'
    ? event
    : { ...event, rawPath: `/webhooks/${source}`, pathParameters: { source } };
};

describe('the ingest', () => {
  it('prints Deliveries by source, verdict and outcome, IngestDuration and BodyBytes for each answer', async () => {
    const handler = ingest();
    const body = Buffer.byteLength(v2Event().body ?? '');
    const answers: number[] = [];
    const lines = await stdoutOf(async () => {
      answers.push((await invoke(handler, routed('m-published', 'default'))).statusCode);
      dynamo.on(PutItemCommand).rejects(completed('m-published'));
      answers.push((await invoke(handler, routed('m-published', 'default'))).statusCode);
      dynamo.on(PutItemCommand).resolves({});
      answers.push((await invoke(handler, routed('m-refused', 'acme', 'wrong'))).statusCode);
      answers.push((await invoke(handler, routed('m-nowhere', 'nowhere'))).statusCode);
      events.on(PutEventsCommand).rejects(down());
      answers.push((await invoke(handler, routed('m-queued', 'acme'))).statusCode);
      documents.on(PutCommand).rejects(down());
      answers.push((await invoke(handler, routed('m-failed', 'default'))).statusCode);
    });
    expect(answers).toEqual([202, 200, 401, 404, 202, 503]);
    const emf = emfLines(lines);
    const service = { service: 'forgebridge' };
    const expected = [
      ['default', 'verified', 'published'],
      ['default', 'verified', 'duplicate'],
      ['acme', 'bad_signature', 'rejected'],
      ['_unknown', 'unknown_source', 'rejected'],
      ['acme', 'verified', 'queued'],
      ['default', 'verified', 'failed'],
    ];
    expect(emf).toHaveLength(2 * expected.length);
    expected.forEach(([Source, Verdict, Outcome], index) => {
      expect(emf[2 * index]).toEqual({
        namespace: NAMESPACE,
        dimensions: { ...service, Source, Verdict, Outcome },
        metrics: { Deliveries: { unit: 'Count', value: 1 } },
      });
      const timing = emf[2 * index + 1];
      expect(timing).toEqual({
        namespace: NAMESPACE,
        dimensions: service,
        metrics: {
          IngestDuration: { unit: 'Milliseconds', value: expect.any(Number) },
          BodyBytes: { unit: 'Bytes', value: body },
        },
      });
      expect(timing?.metrics.IngestDuration?.value).toBeGreaterThanOrEqual(0);
    });
    // Never a delivery id (nor a path) in a metric line.
    for (const line of lines.filter((record) => '_aws' in record)) {
      expect(JSON.stringify(line)).not.toMatch(/m-(published|refused|queued|failed|nowhere)|nowhere/);
    }
  });

  it("puts the invocation's trace header on the PutEvents entry, and none without one", async () => {
    const handler = ingest();
    await stdoutOf(() => invoke(handler, routed('t-1', 'default')));
    delete process.env._X_AMZN_TRACE_ID;
    await stdoutOf(() => invoke(handler, routed('t-2', 'default')));
    const entries = events.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.[0]);
    expect(entries.map((entry) => entry?.TraceHeader)).toEqual([TRACE, undefined]);
  });

  it("carries the delivery id and the trace id on every log line once verified; a subscriber's lines carry the ingest's id", async () => {
    const handler = ingest();
    events.on(PutEventsCommand).rejects(down());
    const ingestLines = logLines(await stdoutOf(() => invoke(handler, routed('trace-1', 'default'))));
    // The publisher's retry lines name no delivery themselves: the key does.
    expect(ingestLines.map((line) => line.message)).toEqual(
      expect.arrayContaining([
        'putevents attempt failed, retrying',
        'publish failed, delivery queued',
        'delivery queued',
      ]),
    );
    for (const line of ingestLines)
      expect(line).toMatchObject({ delivery: 'trace-1', xray_trace_id: TRACE_ID });

    // The entry the ingest tried to publish, as EventBridge hands it to a subscriber.
    const entry = events.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0];
    const busEvent = { 'detail-type': entry?.DetailType, detail: JSON.parse(entry?.Detail ?? '{}') };
    const subscriber = createSubscriberHandler({
      env: { POWERTOOLS_SERVICE_NAME: 'forgebridge' },
      register: (bus, { logger }) => bus.on('issues.opened', () => logger.info('issue handled')),
      clients: { s3: {} as never },
    });
    const subscriberLines = logLines(await stdoutOf(() => subscriber(busEvent as never, lambdaContext())));
    expect(subscriberLines.map((line) => line.message)).toEqual(['issue handled', 'delivery received']);
    for (const line of subscriberLines)
      expect(line).toMatchObject({ delivery: 'trace-1', xray_trace_id: TRACE_ID });
    // Keys of one invocation do not leak into the next one's lines.
    const other = { ...busEvent, detail: { ...busEvent.detail, delivery: 'trace-2' } };
    const next = logLines(await stdoutOf(() => subscriber(other as never, lambdaContext())));
    expect(next.map((line) => line.delivery)).toEqual(['trace-2', 'trace-2']);
  });
});

describe('the retrier', () => {
  const record = (id: string, ageSeconds: number) => ({
    pk: `queue#${id}`,
    delivery: id,
    event: 'issues',
    queuedAt: Date.now() - ageSeconds * 1000,
    attempts: 3,
    body: Buffer.from(JSON.stringify({ action: 'opened' })),
    leaseOwner: 'owner',
  });
  const queueMetrics = (depth: number, age: number, published: number) => ({
    namespace: NAMESPACE,
    dimensions: { service: 'forgebridge' },
    metrics: {
      QueueDepth: { unit: 'Count', value: depth },
      QueueOldestAgeSeconds: { unit: 'Seconds', value: age },
      RedrivePublished: { unit: 'Count', value: published },
    },
  });
  const due = { KeyConditionExpression: '#queue = :due AND #dueAt <= :now' };
  const waiting = { KeyConditionExpression: '#queue = :due' };

  it('prints the queue depth, the oldest age and published on every run, 0 when empty, and a dead letter on its line', async () => {
    const handler = createRedriveHandler({
      env: { ...ENV, FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS: '3600' },
      clients: { dynamodb: new DynamoDBClient(region), eventBridge: new EventBridgeClient(region) },
    });
    documents.on(DeleteCommand).resolves({});
    documents.on(UpdateCommand).resolves({});
    // No dedupe record for a queued delivery: the retrier publishes it, then writes the completed record.
    documents.on(GetCommand).resolves({});
    documents.on(PutCommand).resolves({});
    const runs: Record<string, unknown>[][] = [];

    // Run 1: nothing queued.
    documents.on(QueryCommand, due).resolves({ Items: [] });
    documents.on(QueryCommand, waiting).resolves({ Items: [], Count: 0 });
    runs.push(await stdoutOf(() => handler({}, lambdaContext())));

    // Run 2: one published; two wait for later (over two pages), the older queued 600 s ago.
    documents.on(QueryCommand, due).resolves({ Items: [{ pk: 'queue#r-1' }] });
    documents.on(UpdateCommand, { Key: { pk: 'queue#r-1' } }).resolves({ Attributes: record('r-1', 30) });
    documents
      .on(QueryCommand, waiting)
      .callsFake((input: { ExclusiveStartKey?: unknown }) =>
        input.ExclusiveStartKey === undefined
          ? { Items: [{ pk: 'queue#r-2' }], Count: 1, LastEvaluatedKey: { pk: 'queue#r-2' } }
          : { Items: [{ pk: 'queue#r-3' }], Count: 1 },
      );
    documents.on(BatchGetCommand).resolves({
      Responses: { dedupe: [{ queuedAt: Date.now() - 600_500 }, { queuedAt: Date.now() - 20_000 }] },
    });
    runs.push(await stdoutOf(() => handler({}, lambdaContext())));

    // Run 3: the bus is down and one record is past the maximum age: dead-lettered; the queue is empty after.
    events.on(PutEventsCommand).rejects(down());
    documents.on(QueryCommand, due).resolves({ Items: [{ pk: 'queue#r-4' }] });
    documents.on(UpdateCommand, { Key: { pk: 'queue#r-4' } }).resolves({ Attributes: record('r-4', 7200) });
    documents.on(QueryCommand, waiting).resolves({ Items: [], Count: 0 });
    runs.push(await stdoutOf(() => handler({}, lambdaContext())));

    expect(runs.map((lines) => emfLines(lines).filter((emf) => 'QueueDepth' in emf.metrics))).toEqual([
      [queueMetrics(0, 0, 0)],
      [queueMetrics(2, 600, 1)],
      [queueMetrics(0, 0, 0)],
    ]);
    // The dead letter is counted on its own line, with its metric (no dimension at all), and nowhere else.
    const deadLine = runs[2]?.find((line) => line.message === 'queued delivery dead-lettered');
    expect(deadLine).toMatchObject({ delivery: 'r-4', DeadLetteredDeliveries: 1 });
    expect(emfOf(deadLine ?? {})).toEqual({
      namespace: NAMESPACE,
      dimensions: {},
      metrics: { DeadLetteredDeliveries: { unit: 'Count', value: 1 } },
    });
    expect(runs.flat().filter((line) => 'DeadLetteredDeliveries' in line)).toEqual([deadLine]);
  });

  it('prints QueueStatsFailed instead of the depth and age when the queue cannot be read, and still publishes', async () => {
    const handler = createRedriveHandler({
      env: ENV,
      clients: { dynamodb: new DynamoDBClient(region), eventBridge: new EventBridgeClient(region) },
    });
    documents.on(DeleteCommand).resolves({});
    documents.on(GetCommand).resolves({});
    documents.on(QueryCommand, due).resolves({ Items: [{ pk: 'queue#r-5' }] });
    documents.on(UpdateCommand, { Key: { pk: 'queue#r-5' } }).resolves({ Attributes: record('r-5', 30) });
    documents.on(QueryCommand, waiting).resolves({ Items: [{ pk: 'queue#r-6' }], Count: 1 });
    // The role without dynamodb:BatchGetItem (issue 26): AWS answers AccessDeniedException.
    documents.on(BatchGetCommand).rejects(
      Object.assign(new Error('User: arn:aws:sts::123456789012:assumed-role/redrive is not authorized'), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    const lines = await stdoutOf(() => handler({}, lambdaContext()));

    expect(events.commandCalls(PutEventsCommand)).toHaveLength(1);
    expect(emfLines(lines).filter((emf) => 'RedrivePublished' in emf.metrics)).toEqual([
      {
        namespace: NAMESPACE,
        dimensions: { service: 'forgebridge' },
        metrics: {
          QueueStatsFailed: { unit: 'Count', value: 1 },
          RedrivePublished: { unit: 'Count', value: 1 },
        },
      },
    ]);
    const warning = logLines(lines).find((line) => line.message === 'queue depth not read');
    expect(warning).toMatchObject({ level: 'WARN', errorCode: 'AccessDeniedException' });
    // The error's code only: its message (the caller's role and account) stays out of the line.
    expect(JSON.stringify(warning)).not.toMatch(/assumed-role|123456789012|not authorized/);
  });
});

describe('a subscriber', () => {
  const busEvent = (delivery: string) => ({
    'detail-type': 'issues.opened',
    detail: { delivery, event: 'issues', action: 'opened', payload: { action: 'opened' } },
  });

  it('prints SubscriberOutcome and SubscriberDuration by function and outcome when it reports', async () => {
    let fail = false;
    const handler = createSubscriberHandler({
      env: { POWERTOOLS_SERVICE_NAME: 'forgebridge', FORGEBRIDGE_METRIC_NAMESPACE: NAMESPACE },
      name: 'forgebridge-unit-onIssuesOpened',
      register: (bus) =>
        bus.on('issues.opened', () => {
          if (fail) throw new Error('subscriber failed');
        }),
      deliveryLog: { recordSubscriber: async () => undefined },
    });
    const lines = await stdoutOf(async () => {
      await handler(busEvent('s-1') as never, lambdaContext());
      fail = true;
      await expect(handler(busEvent('s-2') as never, lambdaContext())).rejects.toThrow('subscriber failed');
    });
    const line = (Outcome: string) => ({
      namespace: NAMESPACE,
      dimensions: { service: 'forgebridge', Function: 'forgebridge-unit-onIssuesOpened', Outcome },
      metrics: {
        SubscriberOutcome: { unit: 'Count', value: 1 },
        SubscriberDuration: { unit: 'Milliseconds', value: expect.any(Number) },
      },
    });
    expect(emfLines(lines)).toEqual([line('ok'), line('error')]);
  });

  it('prints no metric when it does not report', async () => {
    const handler = createSubscriberHandler({ env: {}, clients: { s3: {} as never } });
    const lines = await stdoutOf(() => handler(busEvent('s-3') as never, lambdaContext()));
    expect(emfLines(lines)).toEqual([]);
    expect(logLines(lines).map((line) => line.message)).toEqual(['delivery received']);
  });
});
