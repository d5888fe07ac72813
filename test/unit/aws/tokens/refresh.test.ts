import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { refreshTokens, type TokenLike } from '../../../../lib/aws/index.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const NOW = Date.UTC(2026, 10, 21, 12);
const NOW_S = NOW / 1000;

function token(value: string, expiresAt: number): TokenLike {
  return { token: value, expiresAt, toHash: () => ({ access_token: value, expires_at: expiresAt }) };
}
const fromHash = (hash: Record<string, unknown>) => token(String(hash.access_token), Number(hash.expires_at));

beforeEach(() => ddbMock.reset());

describe('refreshTokens()', () => {
  it('refreshes the clients inside the window, leaves the others, and reports each', async () => {
    ddbMock.on(GetCommand, { Key: { pk: 'forge#soon#' } }).resolves({
      Item: { pk: 'forge#soon#', token: token('a', NOW_S + 120).toHash(), version: 1 },
    });
    ddbMock.on(GetCommand, { Key: { pk: 'forge#later#' } }).resolves({
      Item: { pk: 'forge#later#', token: token('b', NOW_S + 3600).toHash(), version: 5 },
    });
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    const soonFetch = vi.fn(async () => token('a2', NOW_S + 3600));
    const laterFetch = vi.fn(async () => token('b2', NOW_S + 7200));
    const reports = await refreshTokens(
      [
        { key: { provider: 'forge', clientId: 'soon' }, fromHash, fetchToken: soonFetch },
        { key: { provider: 'forge', clientId: 'later' }, fromHash, fetchToken: laterFetch },
      ],
      { client, tableName: 'tokens', windowSeconds: 300, store: { now: () => NOW } },
    );
    expect(reports).toEqual([
      { key: 'forge#soon#', status: 'refreshed', version: 2, expiresAt: NOW_S + 3600 },
      { key: 'forge#later#', status: 'fresh', version: 5, expiresAt: NOW_S + 3600 },
    ]);
    expect(soonFetch).toHaveBeenCalledTimes(1);
    expect(laterFetch).not.toHaveBeenCalled();
  });

  it('honours a wider window', async () => {
    ddbMock
      .on(GetCommand)
      .resolves({ Item: { pk: 'forge#c#', token: token('a', NOW_S + 1000).toHash(), version: 1 } });
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    const fetchToken = vi.fn(async () => token('a2', NOW_S + 3600));
    const [report] = await refreshTokens(
      [{ key: { provider: 'forge', clientId: 'c' }, fromHash, fetchToken }],
      {
        client,
        tableName: 'tokens',
        windowSeconds: 1200,
        store: { now: () => NOW },
      },
    );
    expect(report?.status).toBe('refreshed');
  });

  it('keeps going when one client fails, reporting its code and message only', async () => {
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const reports = await refreshTokens(
      [
        {
          key: { provider: 'forge', clientId: 'broken' },
          fromHash,
          fetchToken: async () => Promise.reject(new Error('invalid_client: client authentication failed')),
        },
        {
          key: { provider: 'forge', clientId: 'fine' },
          fromHash,
          fetchToken: async () => token('ok', NOW_S + 3600),
        },
        { key: { provider: '', clientId: 'bad-config' }, fromHash, fetchToken: async () => token('x', 0) },
      ],
      { client, tableName: 'tokens', logger, store: { now: () => NOW } },
    );
    expect(reports[0]).toEqual({
      key: 'forge#broken#',
      status: 'failed',
      error: { code: 'refresh_failed', message: 'token refresh failed for "forge#broken#"' },
    });
    expect(reports[1]).toMatchObject({ key: 'forge#fine#', status: 'refreshed', version: 1 });
    expect(reports[2]).toMatchObject({ status: 'failed', error: { message: '"key.provider" is required' } });
    expect(logger.error).toHaveBeenCalledWith('token refresh failed', {
      key: 'forge#broken#',
      code: 'refresh_failed',
    });
    expect(JSON.stringify(logger.info.mock.calls)).not.toContain('"ok"');
  });
});
