// Where `forgebridge dlq` reads, below any queue: a stage's rules' queue or ordered failure queue from its stack's
// outputs (one DescribeStacks), the stream client only for the ordered one, and a stage without an ordered
// subscriber refused in one line naming the output.
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { queueName, resolveDlq } from '../../../lib/cli/commands/dlq-target.js';
import { CliError } from '../../../lib/cli/errors.js';

const cloudformation = mockClient(CloudFormationClient);
afterEach(() => cloudformation.reset());

const base = { limit: 10, rate: 10, stage: 'prod', region: 'eu-west-1' };
const outputs = (values: Record<string, string>) => ({
  Stacks: [
    {
      StackName: 'forgebridge-prod',
      CreationTime: new Date(),
      StackStatus: 'UPDATE_COMPLETE' as const,
      Outputs: Object.entries(values).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
    },
  ],
});

describe('resolveDlq() on a stage', () => {
  it("reads the rules' queue or the ordered failure queue from the stack's outputs", async () => {
    cloudformation.on(DescribeStacksCommand).resolves(
      outputs({
        SubscriberDeadLetterQueueUrl:
          'https://sqs.eu-west-1.amazonaws.com/123456789012/forgebridge-prod-subscriber-dlq',
        OrderedFailureQueueUrl:
          'https://sqs.eu-west-1.amazonaws.com/123456789012/forgebridge-prod-ordered-failures',
      }),
    );
    const rules = await resolveDlq(base, {});
    expect(rules).toMatchObject({ kind: 'aws', region: 'eu-west-1', label: 'stage "prod"' });
    expect(rules.queueUrl).toMatch(/subscriber-dlq$/);
    expect(rules.kinesis).toBeUndefined();
    rules.sqs.destroy();
    const ordered = await resolveDlq({ ...base, queue: 'ordered' }, {});
    expect(ordered.queueUrl).toMatch(/ordered-failures$/);
    const kinesis = ordered.kinesis?.();
    expect(await kinesis?.config.region()).toBe('eu-west-1');
    kinesis?.destroy();
    ordered.sqs.destroy();
    expect(queueName({ queue: 'ordered' })).toBe('the ordered failure queue');
    expect(queueName({})).toBe('the dead-letter queue');
  });

  it('refuses a stage without an ordered subscriber, and an unknown queue, in one line', async () => {
    cloudformation.on(DescribeStacksCommand).resolves(outputs({ SubscriberDeadLetterQueueUrl: 'https://q' }));
    const refused = resolveDlq({ ...base, queue: 'ordered' }, {});
    await expect(refused).rejects.toBeInstanceOf(CliError);
    await expect(refused).rejects.toThrow(
      'stack "forgebridge-prod" has no "OrderedFailureQueueUrl" output (no ordered subscriber on the stage): pass "--queue-url"',
    );
    await expect(resolveDlq({ ...base, queue: 'streams' }, {})).rejects.toThrow(
      '"--queue" must be one of "rules", "ordered"',
    );
    // With --queue-url the stack is not read.
    cloudformation.reset();
    const given = await resolveDlq({ ...base, queue: 'ordered', queueUrl: 'https://sqs.example/q' }, {});
    expect(given.queueUrl).toBe('https://sqs.example/q');
    expect(cloudformation.calls()).toHaveLength(0);
    given.sqs.destroy();
  });
});
