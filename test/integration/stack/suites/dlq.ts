// `forgebridge dlq` against the whole local stack: the subscriber rules' dead-letter queue runs on fauxqs (an SQS
// API server). serverless-offline's EventBridge plugin never dead-letters, so the messages are put there as
// EventBridge puts them (the event as the body; RULE_ARN, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE, RETRY_ATTEMPTS as
// attributes): five push events onPush never got (one of them dead-lettered twice), two for onEverything, one
// body that is not an event. `dlq list` shows each with its subscriber, delivery and error; `dlq replay
// --subscriber onPush` invokes onPush once per delivery through serverless-offline's Lambda API, deletes its six
// messages, and leaves the others where they were.
import { randomUUID } from 'node:crypto';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEventEntry, streamEventOf } from '../../../../lib/aws/internal.js';
import { sampleDelivery } from '../../../../local-stack/sample-deliveries.js';
import { localSqsClientConfig } from '../../../../local-stack/sqs.js';
import { cleanCliEnv, runCli } from '../../../helpers/cli.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function dlqSuite(stack: () => TestStack): void {
  describe("dlq: the subscriber rules' dead-letter queue", () => {
    let t: TestStack;
    let sqs: SQSClient;
    let queueUrl: string;
    beforeAll(async () => {
      t = stack();
      sqs = new SQSClient(localSqsClientConfig(t.stack.endpoints.sqs));
      queueUrl = (await sqs.send(new GetQueueUrlCommand({ QueueName: t.stack.names.subscriberDlq })))
        .QueueUrl as string;
    });
    afterAll(() => sqs?.destroy());

    const cli = (args: string[]) =>
      runCli([...args, '--queue-url', queueUrl], {
        ...cleanCliEnv(),
        FORGEBRIDGE_SQS_ENDPOINT: t.stack.endpoints.sqs,
        FORGEBRIDGE_LAMBDA_ENDPOINT: t.stack.endpoints.lambda,
      });

    const arn = (key: string) =>
      `arn:aws:lambda:us-east-1:000000000000:function:forgebridge-${t.stack.stage}-${key}`;

    /** Puts an event in the queue as EventBridge does when a rule's target kept failing. */
    const deadLetter = async (key: string, body: string) => {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageAttributes: {
            RULE_ARN: {
              DataType: 'String',
              StringValue: `arn:aws:events:us-east-1:000000000000:rule/${t.stack.names.bus}/forgebridge-${t.stack.stage}-${key}-rule-1`,
            },
            TARGET_ARN: { DataType: 'String', StringValue: arn(key) },
            ERROR_CODE: { DataType: 'String', StringValue: 'Lambda.TooManyRequestsException' },
            ERROR_MESSAGE: { DataType: 'String', StringValue: 'Rate Exceeded.' },
            EXHAUSTED_RETRY_CONDITION: { DataType: 'String', StringValue: 'MaximumRetryAttempts' },
            RETRY_ATTEMPTS: { DataType: 'String', StringValue: '185' },
          },
        }),
      );
    };

    const eventOf = (name: string) => {
      const { payload, ...delivery } = sampleDelivery(name);
      const id = randomUUID();
      const entry = buildEventEntry(
        {
          id,
          name: delivery.name,
          payload,
          ...(delivery.action === undefined ? {} : { action: delivery.action }),
        },
        { source: 'forge.webhooks' },
      );
      return { id, body: JSON.stringify({ ...streamEventOf(entry, new Date()), resources: [] }) };
    };

    it("lists the messages, replays one subscriber's to it once each, deletes them, leaves the others", async () => {
      const pushes = Array.from({ length: 5 }, () => eventOf('push'));
      const everything = Array.from({ length: 2 }, () => eventOf('issues.opened'));
      for (const event of pushes) await deadLetter('onPush', event.body);
      await deadLetter('onPush', (pushes[0] as { body: string }).body);
      for (const event of everything) await deadLetter('onEverything', event.body);
      await deadLetter('onPush', 'not an event');

      const listed = await cli(['dlq', 'list', '--json']);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      const list = JSON.parse(listed.stdout) as { count: number; messages: Record<string, unknown>[] };
      expect(list.count).toBe(9);
      expect(list.messages).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            deliveryId: pushes[1]?.id,
            subscriber: `forgebridge-${t.stack.stage}-onPush`,
            detailType: 'push',
            errorCode: 'Lambda.TooManyRequestsException',
            errorMessage: 'Rate Exceeded.',
            retryAttempts: 185,
          }),
          expect.objectContaining({ problem: 'the body is not JSON' }),
        ]),
      );
      // Listing takes nothing out: the same nine again, as text.
      const text = await cli(['dlq', 'list', '--subscriber', 'onPush']);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^7 messages in the dead-letter queue for onPush/);
      expect(text.stdout).toContain(pushes[4]?.id);

      const dry = await cli(['dlq', 'replay', '--subscriber', 'onPush', '--dry-run', '--json']);
      expect(JSON.parse(dry.stdout)).toMatchObject({ selected: 6, unreadable: 1, dryRun: true });
      for (const event of pushes) expect(t.receivedBy(event.id).onPush ?? 0).toBe(0);

      const replay = await cli([
        'dlq',
        'replay',
        '--subscriber',
        'onPush',
        '--yes',
        '--json',
        '--rate',
        '50',
      ]);
      expect(replay.stderr).toBe('');
      expect(replay.code).toBe(0);
      expect(JSON.parse(replay.stdout)).toMatchObject({
        subscriber: `forgebridge-${t.stack.stage}-onPush`,
        selected: 6,
        sent: 5,
        failed: 0,
        deleted: 6,
      });
      await t.waitFor(() => pushes.every((event) => (t.receivedBy(event.id).onPush ?? 0) >= 1));
      for (const event of pushes) {
        // onPush once (the delivery dead-lettered twice too), no other subscriber.
        expect(t.receivedBy(event.id), event.id).toEqual({ onPush: 1 });
      }
      for (const event of everything) expect(t.receivedBy(event.id)).toEqual({});

      const after = JSON.parse((await cli(['dlq', 'list', '--json'])).stdout) as {
        messages: { subscriber?: string; deliveryId?: string; problem?: string }[];
      };
      expect(after.messages.map((m) => m.deliveryId ?? m.problem).sort()).toEqual(
        [...everything.map((event) => event.id), 'the body is not JSON'].sort(),
      );
      // Run again: nothing of onPush's left to send but the body that is not an event.
      const again = await cli(['dlq', 'replay', '--subscriber', 'onPush', '--yes', '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ selected: 0, unreadable: 1 });

      // onEverything's two as well: each to it alone.
      const rest = await cli(['dlq', 'replay', '--subscriber', 'onEverything', '--yes', '--json']);
      expect(JSON.parse(rest.stdout)).toMatchObject({ sent: 2, deleted: 2, failed: 0 });
      await t.waitFor(() => everything.every((event) => (t.receivedBy(event.id).onEverything ?? 0) >= 1));
      for (const event of everything) expect(t.receivedBy(event.id)).toEqual({ onEverything: 1 });
    }, 120_000);
  });
}
