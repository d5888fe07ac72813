// `forgebridge dlq` run in this process (so the suite's coverage sees it) against fauxqs, the SQS API server the
// local stack runs the dead-letter queue on: the messages put there as EventBridge puts them. Listing as text and
// JSON, by subscriber; the replay's dry run; a send refused off a terminal without --yes; the queue unreachable or
// unknown. (The send itself runs against the whole local stack: test/integration/stack/suites/dlq.ts.)
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSqs, startSqs } from '../../../local-stack/sqs.js';
import { expectOneLineError } from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';

const QUEUE = 'forgebridge-local-subscriber-dlq';
let local: LocalSqs;
let sqs: SQSClient;
let queueUrl: string;

const arn = (key: string) => `arn:aws:lambda:us-east-1:000000000000:function:forgebridge-local-${key}`;

async function deadLetter(key: string, body: string): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageAttributes: {
        TARGET_ARN: { DataType: 'String', StringValue: arn(key) },
        RULE_ARN: {
          DataType: 'String',
          StringValue: `arn:aws:events:us-east-1:000000000000:rule/forgebridge-local/${key}`,
        },
        ERROR_CODE: { DataType: 'String', StringValue: 'Lambda.TooManyRequestsException' },
        ERROR_MESSAGE: { DataType: 'String', StringValue: 'Rate\nExceeded.' },
        RETRY_ATTEMPTS: { DataType: 'String', StringValue: '185' },
      },
    }),
  );
}

const event = (delivery: string, type: string) =>
  JSON.stringify({
    id: delivery,
    'detail-type': type,
    source: 'forge.webhooks',
    detail: { delivery, event: type },
  });

beforeAll(async () => {
  local = await startSqs({ queues: [QUEUE] });
  sqs = new SQSClient(local.clientConfig);
  queueUrl = (await sqs.send(new GetQueueUrlCommand({ QueueName: QUEUE }))).QueueUrl as string;
  for (let n = 0; n < 7; n += 1) await deadLetter('onPush', event(`push-${n}`, 'push'));
  await deadLetter('onEverything', event('issue-1', 'issues.opened'));
  await deadLetter('onPush', '{"not":"an event"}');
});

afterAll(async () => {
  sqs?.destroy();
  await local?.stop();
});

const env = () => ({ FORGEBRIDGE_SQS_ENDPOINT: local.endpoint });

describe('forgebridge dlq (in process)', () => {
  it("lists every message as text and JSON, and one subscriber's, taking nothing out", async () => {
    const text = await runMain(['dlq', 'list'], env());
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^9 messages in the dead-letter queue {2}local stack; by subscriber: forgebridge-local-onPush 8, forgebridge-local-onEverything 1/,
    );
    // The error in one line.
    expect(text.stdout).toContain('Lambda.TooManyRequestsException: Rate Exceeded.');
    expect(text.stdout).toContain('the body is not an EventBridge event (no "detail")');
    const json = await runMain(['dlq', 'list', '--subscriber', 'onEverything', '--json'], env());
    expect(JSON.parse(json.stdout)).toMatchObject({
      count: 1,
      messages: [
        {
          deliveryId: 'issue-1',
          detailType: 'issues.opened',
          subscriber: 'forgebridge-local-onEverything',
          retryAttempts: 185,
        },
      ],
    });
    expect(JSON.parse(json.stdout).messages[0]).not.toHaveProperty('receiptHandle');
    const limited = await runMain(['dlq', 'list', '--limit', '3'], env());
    expect(limited.stdout).toMatch(/^3 messages .*the first 3 read \(--limit\)/);
  });

  it("counts a subscriber's messages with a sample (dry run), as text and JSON, and sends nothing", async () => {
    const dry = await runMain(['dlq', 'replay', '--subscriber', 'onPush', '--dry-run'], env());
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^7 messages for forgebridge-local-onPush in the dead-letter queue/);
    expect(dry.stdout).toContain('and 2 more');
    expect(dry.stdout).toContain('1 of its messages are not events: left in the queue');
    const json = await runMain(
      ['dlq', 'replay', '--subscriber', 'forgebridge-local-onPush', '--dry-run', '--json'],
      env(),
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ selected: 7, unreadable: 1, dryRun: true });
    expect(JSON.parse(json.stdout).sample).toHaveLength(5);
    const none = await runMain(['dlq', 'replay', '--subscriber', 'onIssues', '--json'], env());
    expect(JSON.parse(none.stdout)).toMatchObject({ selected: 0, dryRun: false });
    // Still all there.
    expect(JSON.parse((await runMain(['dlq', 'list', '--json'], env())).stdout).count).toBe(9);
  });

  it('refuses to send off a terminal without --yes, and lets the messages go', async () => {
    const refused = await runMain(['dlq', 'replay', '--subscriber', 'onPush'], env());
    expectOneLineError(refused, 2, 'pass "--yes" to send 7 deliveries to forgebridge-local-onPush');
    expect(JSON.parse((await runMain(['dlq', 'list', '--json'], env())).stdout).count).toBe(9);
  });

  it('says in one line when the queue cannot be reached or does not exist, or a flag is wrong', async () => {
    expectOneLineError(await runMain(['dlq', 'list'], {}), 3, 'the local stack is not running');
    const unknown = await runMain(
      ['dlq', 'list', '--queue-url', `${local.endpoint}/000000000000/nope`],
      env(),
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expectOneLineError(
      await runMain(['dlq', 'replay', '--subscriber', 'bad name!', '--dry-run'], env()),
      2,
      '"--subscriber" must be',
    );
    expectOneLineError(await runMain(['dlq', 'list', '--limit', '0'], env()), 2, '--limit');
  });

  it('replay --since on a stage with no archive output, and --via archive locally: one line each, exit 2', async () => {
    expectOneLineError(
      await runMain([
        'replay',
        '--since',
        '2h',
        '--subscriber',
        'onEverything',
        '--stage',
        'ci',
        '--table',
        't',
        '--region',
        'eu-west-1',
      ]),
      2,
      'stage "ci" has no archive',
    );
    expectOneLineError(
      await runMain([
        'replay',
        '--since',
        '2h',
        '--subscriber',
        'onEverything',
        '--via',
        'archive',
        '--endpoint',
        'http://127.0.0.1:9',
      ]),
      2,
      '"--via archive" needs "--stage"',
    );
    expectOneLineError(
      await runMain(['replay', '--since', '2h', '--outcome', 'dead-lettered'], env()),
      2,
      '"--outcome dead-lettered" needs "--subscriber"',
    );
  });
});
