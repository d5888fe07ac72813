/**
 * `forgebridge dlq`: the subscriber rules' dead-letter queue. EventBridge puts an event there when it could not
 * hand it to a rule's target (its retries used up): the event as the message body, and as message attributes the
 * rule (`RULE_ARN`), the target (`TARGET_ARN`, the subscriber's function) and why (`ERROR_CODE`, `ERROR_MESSAGE`,
 * `RETRY_ATTEMPTS`). Listing reads every message (each held out of sight while the list is read, then let go);
 * a replay invokes each message's subscriber with its event and deletes the message only once the subscriber
 * took it, so a message it still fails on stays for the next run.
 *
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ReplayRun, ReplayToFunctionOptions, SelectedDelivery } from './bulk-replay.js';
import { replayToFunction } from './bulk-replay.js';

/** One message of the dead-letter queue, read. */
export interface DeadLetter {
  messageId: string;
  receiptHandle: string;
  /** The subscriber's function name (from `TARGET_ARN`, its version or alias dropped). */
  subscriber: string | undefined;
  targetArn: string | undefined;
  ruleArn: string | undefined;
  errorCode: string | undefined;
  errorMessage: string | undefined;
  retryAttempts: number | undefined;
  /** When the queue got it, epoch ms. */
  sentAt: number | undefined;
  /** The delivery the event carries (`detail.delivery`), its source, hook and `detail-type`. */
  deliveryId: string | undefined;
  source: string | undefined;
  hook: string | undefined;
  detailType: string | undefined;
  /** The event as EventBridge would have handed it to the target; `undefined` when the body is not one. */
  event: Record<string, unknown> | undefined;
  /** Why the body is not an event, when it is not. */
  problem: string | undefined;
}

/** Messages read per receive (SQS's most). */
const BATCH = 10;

/** The function name of a Lambda ARN (`arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`). */
export function functionNameOf(arn: string | undefined): string | undefined {
  if (arn === undefined) return undefined;
  const parts = arn.split(':');
  if (parts.length < 7 || parts[0] !== 'arn' || parts[2] !== 'lambda' || parts[5] !== 'function')
    return undefined;
  return parts[6] === '' ? undefined : parts[6];
}

function attribute(message: Message, name: string): string | undefined {
  const value = message.MessageAttributes?.[name]?.StringValue;
  return value === undefined || value === '' ? undefined : value;
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Reads one SQS message as a {@link DeadLetter}; a body that is not an EventBridge event says why. */
export function deadLetterOf(message: Message): DeadLetter {
  const targetArn = attribute(message, 'TARGET_ARN');
  const attempts = Number(attribute(message, 'RETRY_ATTEMPTS'));
  const sent = Number(message.Attributes?.SentTimestamp);
  let event: Record<string, unknown> | undefined;
  let problem: string | undefined;
  try {
    const parsed = JSON.parse(message.Body ?? '') as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      problem = 'the body is not an object';
    else if (typeof (parsed as { detail?: unknown }).detail !== 'object')
      problem = 'the body is not an EventBridge event (no "detail")';
    else event = parsed as Record<string, unknown>;
  } catch {
    problem = 'the body is not JSON';
  }
  const detail = (event?.detail ?? {}) as Record<string, unknown>;
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    subscriber: functionNameOf(targetArn),
    targetArn,
    ruleArn: attribute(message, 'RULE_ARN'),
    errorCode: attribute(message, 'ERROR_CODE'),
    errorMessage: attribute(message, 'ERROR_MESSAGE'),
    retryAttempts: Number.isInteger(attempts) && attempts >= 0 ? attempts : undefined,
    sentAt: Number.isFinite(sent) && sent > 0 ? sent : undefined,
    deliveryId: stringField(detail.delivery),
    source: stringField(detail.source),
    hook: stringField(detail.hook),
    detailType: stringField(event?.['detail-type']),
    event,
    problem,
  };
}

/** Options of {@link readDeadLetters}. */
export interface ReadDeadLettersOptions {
  sqs: Pick<SQSClient, 'send'>;
  queueUrl: string;
  /** How long each message read stays out of other readers' sight, s (until let go or deleted). */
  holdSeconds: number;
  /** Most messages read. */
  limit: number;
  /** Long-poll wait of each receive, s: how long an empty queue takes to tell. Default 1. */
  waitSeconds?: number;
  /** How a message is read. Default {@link deadLetterOf} (the rules' queue: an EventBridge event). */
  parse?: ((message: Message) => DeadLetter) | undefined;
}

/**
 * Reads the queue's messages until a receive finds none or `limit` are read, each once (held for `holdSeconds`,
 * so the next receive gets the others).
 */
export async function readDeadLetters(options: ReadDeadLettersOptions): Promise<DeadLetter[]> {
  const seen = new Map<string, DeadLetter>();
  while (seen.size < options.limit) {
    const answer = await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: Math.min(BATCH, options.limit - seen.size),
        VisibilityTimeout: options.holdSeconds,
        WaitTimeSeconds: options.waitSeconds ?? 1,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
      }),
    );
    const messages = answer.Messages ?? [];
    if (messages.length === 0) break;
    let fresh = 0;
    for (const message of messages) {
      if (message.MessageId === undefined || message.ReceiptHandle === undefined) continue;
      if (!seen.has(message.MessageId)) fresh += 1;
      // A message seen again (its hold ran out): the newer receipt handle is the one that works.
      seen.set(message.MessageId, (options.parse ?? deadLetterOf)(message));
    }
    // Only messages seen already: their hold ran out before the queue was read through, which is all of it.
    if (fresh === 0) break;
  }
  return [...seen.values()].sort((a, b) => (a.sentAt ?? 0) - (b.sentAt ?? 0));
}

/** Lets held messages be seen again now (visibility 0), ten at a time; what SQS refuses to let go comes back later anyway. */
export async function letGo(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  letters: readonly DeadLetter[],
): Promise<void> {
  for (let at = 0; at < letters.length; at += BATCH) {
    const batch = letters.slice(at, at + BATCH);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((letter, n) => ({
          Id: String(n),
          ReceiptHandle: letter.receiptHandle,
          VisibilityTimeout: 0,
        })),
      }),
    );
  }
}

/** Deletes messages, ten at a time; returns the ids SQS did not delete. */
export async function deleteDeadLetters(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  letters: readonly DeadLetter[],
): Promise<string[]> {
  const failed: string[] = [];
  for (let at = 0; at < letters.length; at += BATCH) {
    const batch = letters.slice(at, at + BATCH);
    const answer = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((letter, n) => ({ Id: String(n), ReceiptHandle: letter.receiptHandle })),
      }),
    );
    for (const entry of answer.Failed ?? []) {
      const letter = batch[Number(entry.Id)];
      if (letter !== undefined) failed.push(letter.messageId);
    }
  }
  return failed;
}

/**
 * The messages of one delivery (a delivery's event dead-lettered twice is sent once): by source, hook and
 * delivery id, else by the event's own id. Oldest first.
 */
export function groupByDelivery(letters: readonly DeadLetter[]): DeadLetter[][] {
  const groups = new Map<string, DeadLetter[]>();
  for (const letter of letters) {
    const key =
      letter.deliveryId === undefined
        ? `event\n${stringField(letter.event?.id) ?? letter.messageId}`
        : `delivery\n${letter.source ?? ''}\n${letter.hook ?? ''}\n${letter.deliveryId}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [letter]);
    else group.push(letter);
  }
  return [...groups.values()];
}

/** What {@link replayDeadLetters} did. */
export interface DeadLetterRun extends ReplayRun {
  /** Messages deleted (their subscriber took the event). */
  deleted: number;
}

/** Options of {@link replayDeadLetters}. */
export interface ReplayDeadLettersOptions
  extends Pick<
    ReplayToFunctionOptions,
    'lambda' | 'ratePerSecond' | 'concurrency' | 'onProgress' | 'sleep' | 'now'
  > {
  sqs: Pick<SQSClient, 'send'>;
  queueUrl: string;
  /** The subscriber's function: every letter given is one it failed. */
  functionName: string;
  /** The subscriber's messages, held (read with a hold long enough for the run). */
  letters: readonly DeadLetter[];
}

/**
 * Invokes the subscriber once per delivery with the event its rule could not hand it, paced as `replay --since`
 * is, and deletes the delivery's messages once it took the event; a message it failed on, or whose delete SQS
 * refused, is let go again for a later run (a delete that failed after a success is said, never hidden).
 */
export async function replayDeadLetters(options: ReplayDeadLettersOptions): Promise<DeadLetterRun> {
  const groups = groupByDelivery(options.letters.filter((letter) => letter.event !== undefined));
  const groupOf = new Map<SelectedDelivery, DeadLetter[]>();
  for (const group of groups) {
    const first = group[0] as DeadLetter;
    groupOf.set(
      {
        deliveryId: first.deliveryId ?? stringField(first.event?.id) ?? first.messageId,
        ...(first.source === undefined ? {} : { source: first.source }),
        ...(first.hook === undefined ? {} : { hook: first.hook }),
        event: first.detailType ?? '',
        receivedAt: first.sentAt ?? 0,
        outcome: 'error',
      },
      group,
    );
  }
  let deleted = 0;
  const deleteFailures: { deliveryId: string; error: string }[] = [];
  const run = await replayToFunction({
    lambda: options.lambda,
    functionName: options.functionName,
    deliveries: [...groupOf.keys()],
    ratePerSecond: options.ratePerSecond,
    concurrency: options.concurrency,
    onProgress: options.onProgress,
    sleep: options.sleep,
    now: options.now,
    eventOf: async (delivery) => groupOf.get(delivery)?.[0]?.event as Record<string, unknown>,
    onResult: async (delivery, error) => {
      const group = groupOf.get(delivery) ?? [];
      try {
        if (error === undefined) {
          const failed = await deleteDeadLetters(options.sqs, options.queueUrl, group);
          deleted += group.length - failed.length;
          if (failed.length > 0) {
            deleteFailures.push({
              deliveryId: delivery.deliveryId,
              error: `taken, but SQS did not delete message ${failed.join(', ')}: it will be seen again`,
            });
          }
        } else await letGo(options.sqs, options.queueUrl, group);
      } catch (problem) {
        deleteFailures.push({
          deliveryId: delivery.deliveryId,
          error: `${error === undefined ? 'taken, but its message was not deleted' : 'its message was not let go'}: ${problem instanceof Error ? problem.message : String(problem)}`,
        });
      }
    },
  });
  return {
    ...run,
    deleted,
    failures: [...run.failures, ...deleteFailures].slice(0, 10),
  };
}
