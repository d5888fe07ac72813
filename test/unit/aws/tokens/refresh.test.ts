import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AwsBridgeError,
  SecretsError,
  type TokenLike,
  TokenRefreshError,
  type TokenSource,
  TokenStore,
  type TokenTarget,
} from '../../../../lib/aws/index.js';
import { refreshTokens } from '../../../../lib/aws/tokens/refresh.js';

const ddbMock = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const NOW = Date.UTC(2026, 10, 21, 12);
const NOW_S = NOW / 1000;

function token(value: string, expiresAt: number): TokenLike {
  return { token: value, expiresAt, toHash: () => ({ access_token: value, expires_at: expiresAt }) };
}
const fromHash = (hash: Record<string, unknown>) => token(String(hash.access_token), Number(hash.expires_at));

/** A source over a store built here, as createTokenSource builds one once its secret is read. */
function source(clientId: string, fetchToken: TokenTarget['fetchToken']): TokenSource<TokenLike> {
  const store = new TokenStore({
    client,
    tableName: 'tokens',
    key: { provider: 'forge', clientId },
    fromHash,
    fetchToken,
    now: () => NOW,
  });
  return { key: store.key, store: async () => store };
}

/** A source whose secret cannot be read. */
function unreadable(clientId: string, error: unknown): TokenSource<TokenLike> {
  return { key: `forge#${clientId}#`, store: () => Promise.reject(error) };
}

beforeEach(() => {
  ddbMock.reset();
  ddbMock.on(UpdateCommand).resolves({});
  ddbMock.on(PutCommand).resolves({});
});

describe('refreshTokens()', () => {
  it('refreshes the clients inside the window, leaves the others, and reports each under its store key', async () => {
    ddbMock.on(GetCommand, { Key: { pk: 'forge#soon#' } }).resolves({
      Item: { pk: 'forge#soon#', token: token('a', NOW_S + 120).toHash(), version: 1 },
    });
    ddbMock.on(GetCommand, { Key: { pk: 'forge#later#' } }).resolves({
      Item: { pk: 'forge#later#', token: token('b', NOW_S + 3600).toHash(), version: 5 },
    });
    const soonFetch = vi.fn(async () => token('a2', NOW_S + 3600));
    const laterFetch = vi.fn(async () => token('b2', NOW_S + 7200));
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const run = await refreshTokens([source('soon', soonFetch), source('later', laterFetch)], { logger });
    expect(run).toEqual({
      refreshed: 1,
      failed: 0,
      reports: [
        { key: 'forge#soon#', status: 'refreshed', version: 2, expiresAt: NOW_S + 3600 },
        { key: 'forge#later#', status: 'fresh', version: 5, expiresAt: NOW_S + 3600 },
      ],
    });
    expect(soonFetch).toHaveBeenCalledTimes(1);
    expect(laterFetch).not.toHaveBeenCalled();
    expect(logger.info).toHaveBeenCalledWith('refresh run', { clients: 2, refreshed: 1, failed: 0 });
    expect(JSON.stringify(logger.info.mock.calls)).not.toMatch(/"a2"|"b"/);
  });

  it('honours a wider window than the store’s', async () => {
    ddbMock
      .on(GetCommand)
      .resolves({ Item: { pk: 'forge#c#', token: token('a', NOW_S + 1000).toHash(), version: 1 } });
    const fetchToken = vi.fn(async () => token('a2', NOW_S + 3600));
    expect((await refreshTokens([source('c', fetchToken)])).reports[0]?.status).toBe('fresh');
    const run = await refreshTokens([source('c', fetchToken)], { windowSeconds: 1200 });
    expect(run.reports[0]?.status).toBe('refreshed');
    expect(fetchToken).toHaveBeenCalledTimes(1);
  });

  it('keeps going when a secret cannot be read or a refresh fails, reporting code and message only', async () => {
    ddbMock.on(GetCommand).resolves({});
    const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const run = await refreshTokens(
      [
        unreadable(
          'locked',
          new SecretsError('secrets_unavailable', 'parameter "/fb/locked" could not be read'),
        ),
        source('broken', () => Promise.reject(new Error('invalid_client: client authentication failed'))),
        source('fine', async () => token('ok', NOW_S + 3600)),
        unreadable('odd', 'not an error'),
      ],
      { logger },
    );
    expect(run.refreshed).toBe(1);
    expect(run.failed).toBe(3);
    expect(run.reports).toEqual([
      {
        key: 'forge#locked#',
        status: 'failed',
        error: { code: 'secrets_unavailable', message: 'parameter "/fb/locked" could not be read' },
      },
      {
        key: 'forge#broken#',
        status: 'failed',
        error: { code: 'refresh_failed', message: 'token refresh failed for "forge#broken#"' },
      },
      { key: 'forge#fine#', status: 'refreshed', version: 1, expiresAt: NOW_S + 3600 },
      { key: 'forge#odd#', status: 'failed', error: { code: 'refresh_failed', message: 'refresh failed' } },
    ]);
    expect(logger.error).toHaveBeenCalledWith('token refresh failed', {
      key: 'forge#locked#',
      code: 'secrets_unavailable',
    });
    expect(logger.error).toHaveBeenCalledWith('token refresh failed', {
      key: 'forge#broken#',
      code: 'refresh_failed',
    });
    expect(JSON.stringify([logger.info.mock.calls, logger.error.mock.calls])).not.toContain('"ok"');
  });

  it('reports no expiry for a token that never expires', async () => {
    ddbMock
      .on(GetCommand)
      .resolves({ Item: { pk: 'forge#c#', token: { access_token: 'forever' }, version: 2 } });
    const forever = (hash: Record<string, unknown>): TokenLike => ({
      token: String(hash.access_token),
      toHash: () => hash,
    });
    const store = new TokenStore({
      client,
      tableName: 'tokens',
      key: { provider: 'forge', clientId: 'c' },
      fromHash: forever,
      fetchToken: vi.fn(),
    });
    const run = await refreshTokens([{ key: store.key, store: async () => store }]);
    expect(run.reports).toEqual([{ key: 'forge#c#', status: 'fresh', version: 2 }]);
  });

  it('reports nothing for no clients', async () => {
    await expect(refreshTokens([])).resolves.toEqual({ refreshed: 0, failed: 0, reports: [] });
  });
});

describe('TokenRefreshError', () => {
  it('counts the failed clients and carries the run', () => {
    const run = {
      refreshed: 1,
      failed: 1,
      reports: [
        { key: 'forge#a#', status: 'refreshed' as const },
        { key: 'forge#b#', status: 'failed' as const, error: { code: 'refresh_failed', message: 'x' } },
      ],
    };
    const error = new TokenRefreshError(run);
    expect(error).toBeInstanceOf(AwsBridgeError);
    expect(error).toMatchObject({ name: 'TokenRefreshError', code: 'refresh_failed', run });
    expect(error.message).toBe('1 of 2 token refreshes failed');
  });
});
