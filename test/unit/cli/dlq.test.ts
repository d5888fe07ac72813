import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deadLetterOf,
  functionNameOf,
  groupByDelivery,
  readDeadLetters,
  replayDeadLetters,
} from '../../../lib/cli/dlq.js';

const TARGET = 'arn:aws:lambda:eu-west-1:123456789012:function:forgebridge-prod-onPush';

function message(
  n: number,
  detail: Record<string, unknown> = { delivery: `d-${n}`, event: 'push' },
): Message {
  return {
    MessageId: `m-${n}`,
    ReceiptHandle: `r-${n}`,
    Body: JSON.stringify({ id: `e-${n}`, 'detail-type': 'push', source: 'forge.webhooks', detail }),
    Attributes: { SentTimestamp: String(1_700_000_000_000 + n) },
    MessageAttributes: {
      TARGET_ARN: { DataType: 'String', StringValue: TARGET },
      RULE_ARN: {
        DataType: 'String',
        StringValue: 'arn:aws:events:eu-west-1:123456789012:rule/forgebridge-prod/r',
      },
      ERROR_CODE: { DataType: 'String', StringValue: 'Lambda.TooManyRequestsException' },
      RETRY_ATTEMPTS: { DataType: 'String', StringValue: '185' },
    },
  };
}

describe('functionNameOf()', () => {
  it('reads the function of a Lambda ARN, with or without a qualifier, and nothing else', () => {
    expect(functionNameOf(TARGET)).toBe('forgebridge-prod-onPush');
    expect(functionNameOf(`${TARGET}:live`)).toBe('forgebridge-prod-onPush');
    expect(functionNameOf('arn:aws:sqs:eu-west-1:123456789012:queue')).toBeUndefined();
    expect(functionNameOf('onPush')).toBeUndefined();
    expect(functionNameOf(undefined)).toBeUndefined();
  });
});

describe('deadLetterOf()', () => {
  it('reads the subscriber, the delivery and the error EventBridge put on the message', () => {
    expect(
      deadLetterOf(message(1, { delivery: 'd-1', event: 'push', source: 'github', hook: '42' })),
    ).toMatchObject({
      messageId: 'm-1',
      subscriber: 'forgebridge-prod-onPush',
      deliveryId: 'd-1',
      source: 'github',
      hook: '42',
      detailType: 'push',
      errorCode: 'Lambda.TooManyRequestsException',
      retryAttempts: 185,
      sentAt: 1_700_000_000_001,
      problem: undefined,
    });
  });

  it('says why a body is not an event, and carries no event then', () => {
    for (const [body, problem] of [
      ['not json', 'the body is not JSON'],
      ['[1]', 'the body is not an object'],
      ['{"id":"x"}', 'the body is not an EventBridge event (no "detail")'],
    ] as const) {
      const letter = deadLetterOf({ ...message(2), Body: body });
      expect(letter.problem).toBe(problem);
      expect(letter.event).toBeUndefined();
    }
  });
});

describe('groupByDelivery()', () => {
  it('puts the messages of one delivery together (by source, hook and id), else by event id', () => {
    const a = deadLetterOf(message(1));
    const twice = deadLetterOf({ ...message(1), MessageId: 'm-1b', ReceiptHandle: 'r-1b' });
    const otherHook = deadLetterOf({ ...message(1, { delivery: 'd-1', hook: '7' }), MessageId: 'm-1c' });
    const noId = deadLetterOf(message(3, { event: 'push' }));
    expect(
      groupByDelivery([a, twice, otherHook, noId]).map((group) => group.map((l) => l.messageId)),
    ).toEqual([['m-1', 'm-1b'], ['m-1c'], ['m-3']]);
  });
});

// One mock of each client for the file: a second mockClient() of a class would stub it anew.
const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
afterEach(() => {
  sqs.reset();
  lambda.reset();
});

describe('readDeadLetters()', () => {
  it('receives until the queue answers none, holding each, each once', async () => {
    const answers = [[message(2), message(1)], [{ ...message(1), ReceiptHandle: 'r-1-again' }]];
    sqs.on(ReceiveMessageCommand).callsFake(() => ({ Messages: answers.shift() ?? [] }));
    const letters = await readDeadLetters({
      sqs: new SQSClient({ region: 'eu-west-1' }),
      queueUrl: 'q',
      holdSeconds: 900,
      limit: 100,
    });
    expect(letters.map((l) => [l.messageId, l.receiptHandle])).toEqual([
      ['m-1', 'r-1-again'],
      ['m-2', 'r-2'],
    ]);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toMatchObject({
      VisibilityTimeout: 900,
      MaxNumberOfMessages: 10,
      MessageAttributeNames: ['All'],
    });
  });

  it('stops at the limit', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [message(1), message(2)] });
    const calls = () => sqs.commandCalls(ReceiveMessageCommand).length;
    await readDeadLetters({
      sqs: new SQSClient({ region: 'eu-west-1' }),
      queueUrl: 'q',
      holdSeconds: 60,
      limit: 2,
    });
    expect(calls()).toBe(1);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input.MaxNumberOfMessages).toBe(2);
  });
});

describe('replayDeadLetters()', () => {
  it('invokes once per delivery, deletes what was taken, lets go what failed', async () => {
    const letters = [
      deadLetterOf(message(1)),
      deadLetterOf({ ...message(1), MessageId: 'm-1b', ReceiptHandle: 'r-1b' }),
      deadLetterOf(message(2)),
    ];
    lambda.on(InvokeCommand).callsFake((input: { Payload: Uint8Array }) => {
      const event = JSON.parse(Buffer.from(input.Payload).toString()) as { detail: { delivery: string } };
      return event.detail.delivery === 'd-2'
        ? {
            StatusCode: 200,
            FunctionError: 'Unhandled',
            Payload: Buffer.from('{"errorMessage":"still broken"}'),
          }
        : { StatusCode: 200 };
    });
    sqs.on(DeleteMessageBatchCommand).resolves({ Successful: [{ Id: '0' }, { Id: '1' }], Failed: [] });
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
    const run = await replayDeadLetters({
      sqs: new SQSClient({ region: 'eu-west-1' }),
      lambda: new LambdaClient({ region: 'eu-west-1' }),
      queueUrl: 'q',
      functionName: 'forgebridge-prod-onPush',
      letters,
      ratePerSecond: 1000,
    });
    expect(run.failures).toEqual([{ deliveryId: 'd-2', error: 'the function failed: still broken' }]);
    expect(lambda.commandCalls(InvokeCommand)).toHaveLength(2);
    expect(sqs.commandCalls(DeleteMessageBatchCommand)[0]?.args[0].input.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'r-1' },
      { Id: '1', ReceiptHandle: 'r-1b' },
    ]);
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'r-2', VisibilityTimeout: 0 },
    ]);
    expect(run).toMatchObject({ sent: 1, failed: 1, deleted: 2 });
  });

  it('says when SQS would not delete a message the subscriber took, and goes on', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200 });
    sqs
      .on(DeleteMessageBatchCommand)
      .resolvesOnce({ Failed: [{ Id: '0', Code: 'ReceiptHandleIsInvalid', SenderFault: true }] })
      .rejectsOnce(new Error('socket hang up'));
    const run = await replayDeadLetters({
      sqs: new SQSClient({ region: 'eu-west-1' }),
      lambda: new LambdaClient({ region: 'eu-west-1' }),
      queueUrl: 'q',
      functionName: 'forgebridge-prod-onPush',
      letters: [deadLetterOf(message(1)), deadLetterOf(message(2))],
      ratePerSecond: 1000,
      concurrency: 1,
    });
    expect(run).toMatchObject({ sent: 2, failed: 0, deleted: 0 });
    expect(run.failures.map((f) => f.error)).toEqual([
      'taken, but SQS did not delete message m-1: it will be seen again',
      'taken, but its message was not deleted: socket hang up',
    ]);
  });
});
