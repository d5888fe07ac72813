import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DedupeStore } from '../../../../lib/aws/index.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const NOW_S = NOW / 1000;

function conditionFailed(item?: Record<string, unknown>) {
  const error = new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
  });
  if (item !== undefined) Object.assign(error, { Item: item });
  return error;
}

function store(options: { ttlSeconds?: number; lockSeconds?: number } = {}) {
  return new DedupeStore({ client, tableName: 'dedupe', now: () => NOW, ...options });
}

beforeEach(() => ddbMock.reset());

describe('DedupeStore', () => {
  it('fails fast on missing options, naming the field', () => {
    expect(() => new DedupeStore({ client, tableName: '' })).toThrow(
      new TypeError('"tableName" is required'),
    );
    expect(() => new DedupeStore({ client, tableName: 't', lockSeconds: 0 })).toThrow(
      '"lockSeconds" must be a positive number',
    );
  });

  describe('begin()', () => {
    it('writes an in-progress lock with a 7-day TTL and a lock expiry, conditionally', async () => {
      ddbMock.on(PutCommand).resolves({});
      expect(await store({ lockSeconds: 29 }).begin('d-1')).toBe('new');
      const input = ddbMock.commandCalls(PutCommand)[0]!.args[0].input;
      expect(input.TableName).toBe('dedupe');
      expect(input.Item).toMatchObject({
        pk: 'd-1',
        status: 'in_progress',
        lockExpiresAt: NOW_S + 29,
        expiresAt: NOW_S + 7 * 24 * 3600,
      });
      expect(input.ConditionExpression).toBe(
        'attribute_not_exists(#pk) OR #ttl <= :now OR (#status = :inProgress AND lockExpiresAt <= :now)',
      );
      expect(input.ExpressionAttributeValues).toEqual({ ':now': NOW_S, ':inProgress': 'in_progress' });
    });

    it('answers duplicate when the record is done (old item returned with the failure)', async () => {
      ddbMock.on(PutCommand).rejects(conditionFailed({ pk: { S: 'd-1' }, status: { S: 'done' } }));
      expect(await store().begin('d-1')).toBe('duplicate');
      expect(ddbMock.commandCalls(GetCommand)).toHaveLength(0);
    });

    it('answers in_progress while another invocation holds a live lock', async () => {
      ddbMock.on(PutCommand).rejects(conditionFailed({ pk: { S: 'd-1' }, status: { S: 'in_progress' } }));
      expect(await store().begin('d-1')).toBe('in_progress');
    });

    it('reads the record when the failure carries no item', async () => {
      ddbMock.on(PutCommand).rejects(conditionFailed());
      ddbMock.on(GetCommand).resolves({ Item: { pk: 'd-1', status: 'done' } });
      expect(await store().begin('d-1')).toBe('duplicate');
      expect(ddbMock.commandCalls(GetCommand)[0]!.args[0].input).toMatchObject({
        Key: { pk: 'd-1' },
        ConsistentRead: true,
      });
    });

    it('lets other DynamoDB errors through', async () => {
      ddbMock
        .on(PutCommand)
        .rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
      await expect(store().begin('d-1')).rejects.toThrow('throttled');
    });
  });

  describe('complete()', () => {
    it('marks the record done, renews the TTL and drops the lock', async () => {
      ddbMock.on(UpdateCommand).resolves({});
      await store().complete('d-1');
      const input = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
      expect(input.Key).toEqual({ pk: 'd-1' });
      expect(input.UpdateExpression).toBe(
        'SET #status = :done, completedAt = :now, #ttl = :ttl REMOVE lockExpiresAt, #owner',
      );
      expect(input.ExpressionAttributeValues).toEqual({
        ':done': 'done',
        ':now': NOW_S,
        ':ttl': NOW_S + 604800,
      });
    });
  });

  describe('release()', () => {
    it('deletes only its own in-progress lock', async () => {
      ddbMock.on(PutCommand).resolves({});
      ddbMock.on(DeleteCommand).resolves({});
      const dedupe = store();
      await dedupe.begin('d-1');
      const owner = ddbMock.commandCalls(PutCommand)[0]!.args[0].input.Item!.owner;
      await dedupe.release('d-1');
      const input = ddbMock.commandCalls(DeleteCommand)[0]!.args[0].input;
      expect(input.ConditionExpression).toBe('#status = :inProgress AND #owner = :owner');
      expect(input.ExpressionAttributeValues).toEqual({ ':inProgress': 'in_progress', ':owner': owner });
    });

    it('never deletes a done record: a failed condition is not an error', async () => {
      ddbMock.on(DeleteCommand).rejects(conditionFailed());
      await expect(store().release('d-1')).resolves.toBeUndefined();
      expect(ddbMock.commandCalls(DeleteCommand)[0]!.args[0].input.ConditionExpression).toBe(
        '#status = :inProgress',
      );
    });
  });
});
