import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type TokenLike,
  TokenStore,
  TokenStoreConflictError,
  TokenStoreError,
  type TokenStoreOptions,
} from '../../../../lib/aws/index.js';
import { tokenPartitionKey } from '../../../../lib/aws/tokens/token-store.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const START = Date.UTC(2026, 10, 21, 12);
const KEY = 'forge#ci-bot#repo';

/** A token shaped like lib/oauth2's AccessToken, enough for the store. */
class FakeToken implements TokenLike {
  constructor(
    readonly token: string,
    readonly expiresAt?: number,
    readonly refreshToken?: string,
  ) {}
  toHash() {
    return {
      access_token: this.token,
      refresh_token: this.refreshToken,
      expires_at: this.expiresAt,
      mode: 'header',
    };
  }
  static fromHash(hash: Record<string, unknown>) {
    return new FakeToken(
      String(hash.access_token),
      typeof hash.expires_at === 'number' ? hash.expires_at : undefined,
      typeof hash.refresh_token === 'string' ? hash.refresh_token : undefined,
    );
  }
}

function conditionFailed() {
  return new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
}

function setup(overrides: Partial<TokenStoreOptions<FakeToken>> = {}) {
  let now = START;
  const seconds = () => Math.floor(now / 1000);
  const fetchToken = vi.fn(async (_current: FakeToken | undefined) => new FakeToken('new', seconds() + 3600));
  const store = new TokenStore<FakeToken>({
    client,
    tableName: 'tokens',
    key: { provider: 'forge', clientId: 'ci-bot', scope: 'repo' },
    fromHash: FakeToken.fromHash,
    fetchToken,
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
    ...overrides,
  });
  return { store, fetchToken, seconds, advance: (ms: number) => (now += ms) };
}

function item(token: FakeToken | undefined, version: number, extra: Record<string, unknown> = {}) {
  return { Item: { pk: KEY, ...(token ? { token: token.toHash() } : {}), version, ...extra } };
}

beforeEach(() => ddbMock.reset());

describe('tokenPartitionKey()', () => {
  it('joins provider, client id and a normalized scope', () => {
    expect(tokenPartitionKey({ provider: 'forge', clientId: 'ci-bot', scope: ' repo  read:org repo' })).toBe(
      'forge#ci-bot#read%3Aorg%20repo',
    );
    expect(tokenPartitionKey({ provider: 'forge', clientId: 'ci-bot' })).toBe('forge#ci-bot#');
  });

  it('encodes # inside a part so keys cannot collide', () => {
    expect(tokenPartitionKey({ provider: 'a#b', clientId: 'c' })).not.toBe(
      tokenPartitionKey({ provider: 'a', clientId: 'b#c' }),
    );
  });

  it('fails fast naming the missing field', () => {
    expect(() => tokenPartitionKey({ provider: '', clientId: 'x' })).toThrow(
      new TypeError('"key.provider" is required'),
    );
  });
});

describe('TokenStore', () => {
  it('fails fast on bad options, naming the field', () => {
    expect(() => setup({ tableName: '' })).toThrow(new TypeError('"tableName" is required'));
    expect(() => setup({ fetchToken: undefined as never })).toThrow('"fetchToken" must be a function');
    expect(() => setup({ leaseSeconds: 0 })).toThrow('"leaseSeconds" must be a positive number');
    expect(() => setup({ client: undefined as never })).toThrow(new TypeError('"client" is required'));
    expect(() => setup({ fromHash: 'x' as never })).toThrow(new TypeError('"fromHash" must be a function'));
    expect(() => setup({ refreshWindowSeconds: -1 })).toThrow(
      new TypeError('"refreshWindowSeconds" must be a non-negative number'),
    );
    expect(() => setup({ waitMs: Number.NaN })).toThrow(
      new TypeError('"waitMs" must be a non-negative number'),
    );
    expect(() => setup({ pollMs: 0 })).toThrow(new TypeError('"pollMs" must be a positive number'));
    expect(() => setup({ key: { provider: 'forge', clientId: '' } })).toThrow(
      new TypeError('"key.clientId" is required'),
    );
  });

  describe('get()', () => {
    it('returns a fresh stored token without refreshing, then serves it from memory', async () => {
      const { store, fetchToken, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(new FakeToken('stored', seconds() + 3600), 4));
      expect((await store.get()).token).toBe('stored');
      expect((await store.get()).token).toBe('stored');
      expect(ddbMock.commandCalls(GetCommand)).toHaveLength(1);
      expect(ddbMock.commandCalls(GetCommand)[0]!.args[0].input).toEqual({
        TableName: 'tokens',
        Key: { pk: KEY },
        ConsistentRead: true,
      });
      expect(fetchToken).not.toHaveBeenCalled();
    });

    it('goes back to DynamoDB once the in-memory token enters the refresh window', async () => {
      const { store, seconds, advance } = setup({ refreshWindowSeconds: 300 });
      ddbMock
        .on(GetCommand)
        .resolvesOnce(item(new FakeToken('old', seconds() + 400), 1))
        .resolves(item(new FakeToken('newer', seconds() + 4000), 2));
      expect((await store.get()).token).toBe('old');
      advance(101_000);
      expect((await store.get()).token).toBe('newer');
      expect(ddbMock.commandCalls(GetCommand)).toHaveLength(2);
    });

    it('takes the lease, fetches, and writes version + 1 conditionally when the token is expiring', async () => {
      const { store, fetchToken, seconds } = setup({ leaseSeconds: 15 });
      const old = new FakeToken('old', seconds() + 60, 'rt');
      ddbMock.on(GetCommand).resolves(item(old, 3));
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      const token = await store.get();
      expect(token.token).toBe('new');
      expect(fetchToken).toHaveBeenCalledTimes(1);
      expect(fetchToken.mock.calls[0]![0]).toMatchObject({ token: 'old', refreshToken: 'rt' });
      const lease = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
      expect(lease.ConditionExpression).toBe(
        '#version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
      );
      expect(lease.ExpressionAttributeValues).toMatchObject({
        ':v': 3,
        ':until': seconds() + 15,
        ':now': seconds(),
      });
      const owner = lease.ExpressionAttributeValues?.[':owner'];
      const write = ddbMock.commandCalls(PutCommand)[0]!.args[0].input;
      expect(write.Item).toMatchObject({
        pk: KEY,
        provider: 'forge',
        clientId: 'ci-bot',
        scope: 'repo',
        version: 4,
        tokenExpiresAt: seconds() + 3600,
        token: { access_token: 'new', expires_at: seconds() + 3600, mode: 'header' },
      });
      expect(write.Item).not.toHaveProperty('token.refresh_token');
      expect(write.ConditionExpression).toBe('#version = :v AND leaseOwner = :owner');
      expect(write.ExpressionAttributeValues).toEqual({ ':v': 3, ':owner': owner });
    });

    it('creates the first token when none is stored', async () => {
      const { store, fetchToken } = setup();
      ddbMock.on(GetCommand).resolves({});
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      expect((await store.get()).token).toBe('new');
      expect(fetchToken).toHaveBeenCalledWith(undefined);
      expect(ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input.ConditionExpression).toBe(
        'attribute_not_exists(#pk)',
      );
      expect(ddbMock.commandCalls(PutCommand)[0]!.args[0].input.Item).toMatchObject({ version: 1 });
    });

    it('keeps using the old token while it is valid when another process holds the lease', async () => {
      const { store, fetchToken, seconds } = setup();
      ddbMock
        .on(GetCommand)
        .resolves(item(new FakeToken('old', seconds() + 60), 3, { leaseUntil: seconds() + 10 }));
      const result = await store.refresh();
      expect(result).toMatchObject({ outcome: 'stale', version: 3 });
      expect(result.token.token).toBe('old');
      expect(fetchToken).not.toHaveBeenCalled();
      expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(0);
    });

    it('waits for the winner when it lost the lease race and the old token has expired', async () => {
      const { store, fetchToken, seconds } = setup({ pollMs: 100 });
      ddbMock
        .on(GetCommand)
        .resolvesOnce(item(new FakeToken('old', seconds() - 5), 3))
        .resolvesOnce(item(new FakeToken('old', seconds() - 5), 3, { leaseUntil: seconds() + 10 }))
        .resolves(item(new FakeToken('winner', seconds() + 3600), 4));
      ddbMock.on(UpdateCommand).rejects(conditionFailed());
      const result = await store.refresh();
      expect(result).toMatchObject({ outcome: 'waited', version: 4 });
      expect(result.token.token).toBe('winner');
      expect(fetchToken).not.toHaveBeenCalled();
    });

    it('takes the winner’s token even when its lifetime is shorter than the refresh window', async () => {
      const { store, fetchToken, seconds } = setup({ refreshWindowSeconds: 300 });
      ddbMock
        .on(GetCommand)
        .resolvesOnce(item(new FakeToken('old', seconds() - 5), 3, { leaseUntil: seconds() + 10 }))
        .resolves(item(new FakeToken('short-lived', seconds() + 60), 4));
      const result = await store.refresh();
      expect(result).toMatchObject({ outcome: 'waited', version: 4 });
      expect(result.token.token).toBe('short-lived');
      expect(fetchToken).not.toHaveBeenCalled();
      expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(0);
    });

    it('gives up with refresh_timeout when no new token appears in time', async () => {
      const { store, seconds } = setup({ waitMs: 1_000, pollMs: 250 });
      ddbMock.on(GetCommand).resolves(item(undefined, 0, { leaseUntil: seconds() + 60 }));
      const error = await store.get().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TokenStoreError);
      expect(error).toMatchObject({
        code: 'refresh_timeout',
        message: `no fresh token for "${KEY}" within 1000 ms`,
      });
    });

    it('releases the lease and reports refresh_failed when the authorization server fails', async () => {
      const cause = new Error('invalid_client');
      const { store, seconds } = setup({ fetchToken: async () => Promise.reject(cause) });
      ddbMock.on(GetCommand).resolves(item(new FakeToken('secret-old-token', seconds() - 1), 2));
      ddbMock.on(UpdateCommand).resolves({});
      const error = (await store.get().catch((caught: unknown) => caught)) as TokenStoreError;
      expect(error).toMatchObject({
        name: 'TokenStoreError',
        code: 'refresh_failed',
        message: `token refresh failed for "${KEY}"`,
      });
      expect(error.cause).toBe(cause);
      expect(error.message).not.toContain('secret-old-token');
      const release = ddbMock.commandCalls(UpdateCommand)[1]!.args[0].input;
      expect(release.UpdateExpression).toBe('REMOVE leaseOwner, leaseUntil');
      expect(release.ConditionExpression).toBe('leaseOwner = :owner');
      expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    });

    it('shares one refresh between concurrent calls in one process', async () => {
      const { store, fetchToken } = setup();
      ddbMock.on(GetCommand).resolves({});
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      const tokens = await Promise.all([store.get(), store.get(), store.get()]);
      expect(new Set(tokens).size).toBe(1);
      expect(fetchToken).toHaveBeenCalledTimes(1);
    });

    it('refreshes a fresh token with force', async () => {
      const { store, fetchToken, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(new FakeToken('stored', seconds() + 3600), 1));
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      expect(await store.refresh({ force: true })).toMatchObject({ outcome: 'refreshed', version: 2 });
      expect(fetchToken).toHaveBeenCalledTimes(1);
    });
  });

  describe('when a race is lost or DynamoDB fails', () => {
    it('takes the stored token when its own write lost the lease to a newer fresh one', async () => {
      const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
      const { store, fetchToken, seconds } = setup({ logger });
      ddbMock
        .on(GetCommand)
        .resolvesOnce(item(new FakeToken('old', seconds() - 1), 3))
        .resolves(item(new FakeToken('theirs', seconds() + 3600), 4));
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).rejects(conditionFailed());
      const result = await store.refresh();
      expect(result).toMatchObject({ outcome: 'waited', version: 4 });
      expect(result.token.token).toBe('theirs');
      expect(logger.warn).toHaveBeenCalledWith('token write lost its lease', { key: KEY });
      expect(fetchToken).toHaveBeenCalledTimes(1);
    });

    it('keeps its own new token when the lost write left nothing fresher stored', async () => {
      const { store, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(new FakeToken('old', seconds() - 1), 3));
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).rejects(conditionFailed());
      const result = await store.refresh();
      expect(result).toMatchObject({ outcome: 'refreshed', version: 3 });
      expect(result.token.token).toBe('new');
    });

    it('passes on a write error that is not a lost condition', async () => {
      const { store, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(new FakeToken('old', seconds() - 1), 3));
      ddbMock.on(UpdateCommand).resolves({});
      const throttled = Object.assign(new Error('slow down'), {
        name: 'ProvisionedThroughputExceededException',
      });
      ddbMock.on(PutCommand).rejects(throttled);
      await expect(store.refresh()).rejects.toBe(throttled);
    });

    it('passes on a lease error that is not a lost condition', async () => {
      const { store, fetchToken, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(new FakeToken('old', seconds() - 1), 3));
      const denied = Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
      ddbMock.on(UpdateCommand).rejects(denied);
      await expect(store.refresh()).rejects.toBe(denied);
      expect(fetchToken).not.toHaveBeenCalled();
    });

    it('takes the lease of an item that holds only an expired lease (version 0)', async () => {
      const { store, seconds } = setup();
      ddbMock.on(GetCommand).resolves(item(undefined, 0, { leaseUntil: seconds() - 1 }));
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      expect(await store.refresh()).toMatchObject({ outcome: 'refreshed', version: 1 });
      const lease = ddbMock.commandCalls(UpdateCommand)[0]!.args[0].input;
      expect(lease.ConditionExpression).toBe(
        '(attribute_not_exists(#version) OR #version = :zero) AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
      );
      expect(lease.ExpressionAttributeValues).not.toHaveProperty(':v');
    });

    it('stores a token without expiry without tokenExpiresAt, and a forced refresh replaces the one in flight', async () => {
      const { store, fetchToken } = setup();
      fetchToken.mockResolvedValue(new FakeToken('forever'));
      ddbMock.on(GetCommand).resolves({});
      ddbMock.on(UpdateCommand).resolves({});
      ddbMock.on(PutCommand).resolves({});
      const first = store.refresh();
      const forced = store.refresh({ force: true });
      await Promise.all([first, forced]);
      expect(ddbMock.commandCalls(PutCommand)[0]!.args[0].input.Item).not.toHaveProperty('tokenExpiresAt');
      // Neither attempt is in flight any more: the next call starts its own.
      ddbMock.on(GetCommand).resolves(item(new FakeToken('forever'), 1));
      expect(await store.refresh()).toMatchObject({ outcome: 'fresh', version: 1 });
    });
  });

  describe('save()', () => {
    it('surfaces a lost conditional write as TokenStoreConflictError', async () => {
      const { store } = setup();
      const cause = conditionFailed();
      ddbMock.on(PutCommand).rejects(cause);
      const error = await store.save(new FakeToken('mine', 1), 2).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TokenStoreConflictError);
      expect(error).toMatchObject({
        code: 'token_store_conflict',
        message: `token "${KEY}" changed since version 2 or is leased by another refresher`,
        cause,
      });
      expect((error as Error).message).not.toContain('mine');
    });

    it('writes conditionally on the expected version and no live lease', async () => {
      const { store, seconds } = setup();
      ddbMock.on(PutCommand).resolves({});
      expect(await store.save(new FakeToken('t', 1), 2)).toBe(3);
      const input = ddbMock.commandCalls(PutCommand)[0]!.args[0].input;
      expect(input.ConditionExpression).toBe(
        '#version = :v AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
      );
      expect(input.ExpressionAttributeValues).toEqual({ ':v': 2, ':now': seconds() });
    });

    it('rejects a bad expected version', async () => {
      await expect(setup().store.save(new FakeToken('t'), -1)).rejects.toThrow(
        new TypeError('"expectedVersion" must be a non-negative integer'),
      );
    });
  });

  describe('read()', () => {
    it('loads a map written by the Ruby gem, with no version attribute', async () => {
      const { store } = setup();
      ddbMock.on(GetCommand).resolves({
        Item: {
          pk: KEY,
          token: {
            access_token: 'ruby',
            refresh_token: null,
            expires_at: 1_900_000_000,
            mode: 'header',
            header_format: 'Bearer %s',
            param_name: 'access_token',
          },
        },
      });
      const stored = await store.read();
      expect(stored?.version).toBe(0);
      expect(stored?.token).toMatchObject({ token: 'ruby', expiresAt: 1_900_000_000 });
    });

    it('loads a token stored as a JSON string', async () => {
      const { store } = setup();
      ddbMock.on(GetCommand).resolves({ Item: { pk: KEY, token: '{"access_token":"json"}', version: 2 } });
      expect((await store.read())?.token?.token).toBe('json');
    });

    it('reports an unreadable item as invalid_item', async () => {
      const { store } = setup();
      ddbMock.on(GetCommand).resolves({ Item: { pk: KEY, token: 'not json' } });
      await expect(store.read()).rejects.toMatchObject({
        code: 'invalid_item',
        message: `stored token "${KEY}" is not a map`,
      });
      ddbMock.on(GetCommand).resolves({ Item: { pk: KEY, token: [1] } });
      await expect(store.read()).rejects.toMatchObject({ code: 'invalid_item' });
    });
  });
});
