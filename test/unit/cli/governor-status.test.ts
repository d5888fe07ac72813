// `forgebridge status`'s forge API line, from a stub DynamoDB scan: each owner's calls in flight, a stop in force,
// the primary budget; pages read to the end; an expired lease, a past stop and a past reset not counted.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { governorLine, governorStatus } from '../../../lib/cli/governor-status.js';

const now = Date.parse('2026-12-07T12:00:00Z');

function scanning(pages: Record<string, unknown>[][]) {
  const inputs: unknown[] = [];
  const client = {
    send: vi.fn(async (command: { input: unknown }) => {
      inputs.push(command.input);
      const index = inputs.length - 1;
      return {
        Items: (pages[index] ?? []).map((item) => marshall(item)),
        ...(index < pages.length - 1 ? { LastEvaluatedKey: { pk: { S: `page-${index}` } } } : {}),
      };
    }),
  } as unknown as DynamoDBClient;
  return { client, inputs };
}

describe('governorStatus', () => {
  it('reads every page, sorts the owners, counts only live leases, a stop in force and a primary budget not yet reset', async () => {
    const { client, inputs } = scanning([
      [
        {
          pk: 'governor#z-owner',
          leases: { a: now + 5_000, b: now - 1, c: 'not a time' },
          stopUntil: now - 10,
        },
      ],
      [
        {
          pk: 'governor#a-owner',
          leases: {},
          stopUntil: now + 60_000,
          remaining: 12,
          resetAt: now + 600_000,
        },
        { pk: 'governor#m-owner', remaining: 3, resetAt: now - 1 },
      ],
    ]);
    const owners = await governorStatus(client, 'tokens', now);
    expect(inputs).toHaveLength(2);
    expect(inputs[1]).toMatchObject({ ExclusiveStartKey: { pk: { S: 'page-0' } } });
    expect(owners).toEqual([
      {
        owner: 'a-owner',
        inFlight: 0,
        stop: { until: '2026-12-07T12:01:00.000Z', reason: 'retry-after' },
        primary: { remaining: 12, resetAt: '2026-12-07T12:10:00.000Z' },
      },
      { owner: 'm-owner', inFlight: 0 },
      { owner: 'z-owner', inFlight: 1 },
    ]);
    expect(owners.map(governorLine)).toEqual([
      'a-owner: 0 in flight, stopped until 2026-12-07T12:01:00.000Z (retry-after), 12 left until 2026-12-07T12:10:00.000Z',
      'm-owner: 0 in flight',
      'z-owner: 1 in flight',
    ]);
  });
});
