/**
 * Where `forgebridge dlq` reads: the rules' dead-letter queue or the ordered subscribers' failure queue, of the
 * local stack (fauxqs; kinesalite for the ordered stream) or of a stage (its stack's outputs), and how.
 */
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { awsFailure, type LogTarget, stackOutputs, stageRegion } from '../delivery-log.js';
import { type DeadLetter, readDeadLetters } from '../dlq.js';
import { CliError, ExitCodes } from '../errors.js';
import { readOrderedFailures } from '../ordered-failures.js';
import { readStackState, stateFile } from '../state-file.js';

/** The CloudFormation output naming a deployed stage's subscriber dead-letter queue. */
export const DLQ_URL_OUTPUT = 'SubscriberDeadLetterQueueUrl';
/** ... and its ordered subscribers' failure queue (only with an ordered subscriber). */
export const ORDERED_FAILURES_OUTPUT = 'OrderedFailureQueueUrl';
/** `--queue`: the rules' dead-letter queue, or the ordered subscribers' failure queue. */
export const DlqQueues = ['rules', 'ordered'] as const;

export interface DlqOptions {
  subscriber?: string | undefined;
  limit: number;
  json?: boolean | undefined;
  dryRun?: boolean | undefined;
  yes?: boolean | undefined;
  rate: number;
  stage?: string | undefined;
  region?: string | undefined;
  stack?: string | undefined;
  queueUrl?: string | undefined;
  queue?: string | undefined;
}

/** Where the queue is and how to reach it. */
export interface DlqTarget {
  kind: 'local' | 'aws';
  region: string | undefined;
  queueUrl: string;
  label: string;
  sqs: SQSClient;
  /** The ordered failure queue's stream (its records are read back), else `undefined`. */
  kinesis?: (() => KinesisClient) | undefined;
}

/**
 * The Kinesis client's handler: HTTP/1.1 (the SDK's Kinesis default is HTTP/2, which kinesalite does not speak;
 * GetShardIterator and GetRecords take either on AWS), with short timeouts.
 */
const KINESIS_HTTP = {
  requestHandler: new NodeHttpHandler({ connectionTimeout: 2_000, requestTimeout: 10_000 }),
};

/** The queue's name in what the command prints. */
export function queueName(options: Pick<DlqOptions, 'queue'>): string {
  return options.queue === 'ordered' ? 'the ordered failure queue' : 'the dead-letter queue';
}

/** Resolves the queue: `--queue-url`, a stage's stack output, or the running local stack's (its state file). */
export async function resolveDlq(
  options: DlqOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DlqTarget> {
  if (options.queue !== undefined && !(DlqQueues as readonly string[]).includes(options.queue)) {
    throw new CliError(`"--queue" must be one of ${DlqQueues.map((queue) => `"${queue}"`).join(', ')}`);
  }
  const ordered = options.queue === 'ordered';
  const state = readStackState(stateFile(env));
  if (options.stage !== undefined) {
    const region = stageRegion(options, env);
    const stack = options.stack ?? `forgebridge-${options.stage}`;
    const output = ordered ? ORDERED_FAILURES_OUTPUT : DLQ_URL_OUTPUT;
    const queueUrl = options.queueUrl ?? (await stackOutputs(stack, region))[output];
    if (queueUrl === undefined || queueUrl === '') {
      throw new CliError(
        `stack "${stack}" has no "${output}" output${ordered ? ' (no ordered subscriber on the stage)' : ''}: pass "--queue-url"`,
      );
    }
    const config = region === undefined ? {} : { region };
    return {
      kind: 'aws',
      region,
      queueUrl,
      label: `stage "${options.stage}"`,
      sqs: new SQSClient({ ...config, maxAttempts: 3 }),
      ...(ordered
        ? { kinesis: () => new KinesisClient({ ...config, ...KINESIS_HTTP, maxAttempts: 3 }) }
        : {}),
    };
  }
  const endpoint = env.FORGEBRIDGE_SQS_ENDPOINT || state.endpoints?.sqs;
  if (endpoint === undefined) {
    throw new CliError(
      'the local stack is not running (no SQS endpoint in .tmp/local-stack.json): start it with "npm start", or pass "--stage"',
      ExitCodes.unreachable,
    );
  }
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
  });
  const kinesisEndpoint = env.FORGEBRIDGE_KINESIS_ENDPOINT || state.endpoints?.kinesis;
  if (ordered && kinesisEndpoint === undefined) {
    sqs.destroy();
    throw new CliError(
      'the local stack runs no ordered stream (no Kinesis endpoint in .tmp/local-stack.json): configure an ordered subscriber, or pass "--stage"',
      ExitCodes.unreachable,
    );
  }
  const target = {
    kind: 'local' as const,
    region: undefined,
    label: 'local stack',
    sqs,
    ...(ordered
      ? {
          kinesis: () =>
            new KinesisClient({
              endpoint: kinesisEndpoint as string,
              region: 'us-east-1',
              credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
              ...KINESIS_HTTP,
              maxAttempts: 1,
            }),
        }
      : {}),
  };
  if (options.queueUrl !== undefined) return { ...target, queueUrl: options.queueUrl };
  const name = ordered
    ? (state.names?.orderedFailureQueue ?? 'forgebridge-local-ordered-failures')
    : (state.names?.subscriberDlq ?? 'forgebridge-local-subscriber-dlq');
  try {
    const found = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (found.QueueUrl === undefined) throw new CliError(`the local stack has no queue "${name}"`);
    return { ...target, queueUrl: found.QueueUrl };
  } catch (error) {
    sqs.destroy();
    throw failure(error, target, `queue "${name}"`);
  }
}

export function failure(error: unknown, target: Pick<DlqTarget, 'kind' | 'label'>, what: string): Error {
  if (error instanceof CliError) return error;
  const logTarget: LogTarget = {
    kind: target.kind,
    tableName: '',
    endpoint: undefined,
    region: undefined,
    fromState: target.kind === 'local',
    label: target.label,
  };
  return awsFailure(error, logTarget, what);
}

/** The queue's messages: the rules' as they are, the ordered failures' with their records read back. */
export async function readLetters(
  target: DlqTarget,
  holdSeconds: number,
  limit: number,
): Promise<DeadLetter[]> {
  const read = { sqs: target.sqs, queueUrl: target.queueUrl, holdSeconds, limit };
  if (target.kinesis === undefined) return readDeadLetters(read);
  const kinesis = target.kinesis();
  try {
    return await readOrderedFailures({ ...read, kinesis });
  } finally {
    kinesis.destroy();
  }
}
