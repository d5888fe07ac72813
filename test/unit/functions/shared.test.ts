// The wiring helpers every handler shares: environment readers, the OAuth client list, receipts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { numberEnv, optionalEnv, requireEnv } from '../../../functions/shared/env.js';
import { readOAuthClients } from '../../../functions/shared/oauth-clients.js';
import { payloadDigest, recordReceipt } from '../../../functions/shared/receipts.js';

describe('functions/shared/env', () => {
  it('requireEnv returns the value and names a missing or empty variable', () => {
    expect(requireEnv('A', { A: 'x' })).toBe('x');
    expect(() => requireEnv('A', {})).toThrow(new TypeError('environment variable "A" is required'));
    expect(() => requireEnv('A', { A: '' })).toThrow(TypeError);
  });

  it('optionalEnv treats empty as unset', () => {
    expect(optionalEnv('A', { A: '' })).toBeUndefined();
    expect(optionalEnv('A', { A: 'y' })).toBe('y');
  });

  it('numberEnv parses positive numbers and names a bad value', () => {
    expect(numberEnv('N', { N: '262144' })).toBe(262144);
    expect(numberEnv('N', {})).toBeUndefined();
    for (const bad of ['0', '-1', 'abc', 'Infinity']) {
      expect(() => numberEnv('N', { N: bad })).toThrow(
        new TypeError('environment variable "N" must be a positive number'),
      );
    }
  });
});

describe('functions/shared/oauth-clients readOAuthClients()', () => {
  it('is empty when FORGEBRIDGE_OAUTH_CLIENTS is unset', () => {
    expect(readOAuthClients({})).toEqual([]);
  });

  it('parses every field of each client', () => {
    const clients = readOAuthClients({
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        {
          provider: 'forge',
          clientId: 'bot',
          site: 'https://forge.example.com',
          scope: 'repo',
          resource: 'urn:api',
          tokenUrl: 'oauth/token',
          secretParameter: '/p/bot',
          secretEnv: 'BOT_SECRET',
        },
      ]),
    });
    expect(clients).toEqual([
      {
        provider: 'forge',
        clientId: 'bot',
        site: 'https://forge.example.com',
        scope: 'repo',
        resource: 'urn:api',
        tokenUrl: 'oauth/token',
        secretParameter: '/p/bot',
        secretEnv: 'BOT_SECRET',
      },
    ]);
  });

  it('names the malformed field', () => {
    expect(() => readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: '{' })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" must be a json array'),
    );
    expect(() => readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: '{}' })).toThrow(/must be a json array/);
    expect(() =>
      readOAuthClients({
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([{ provider: 'forge', site: 'https://f' }]),
      }),
    ).toThrow(new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" is required'));
    expect(() =>
      readOAuthClients({
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([{ provider: 'forge', clientId: 1, site: 'https://f' }]),
      }),
    ).toThrow(new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" must be a string'));
  });
});

describe('functions/shared/receipts', () => {
  it('writes nothing without FORGEBRIDGE_RECEIPTS_DIR', () => {
    expect(() =>
      recordReceipt(
        { function: 'f', delivery: 'd', event: 'push', bytes: 2, sha256: 'x', claimCheck: false },
        {},
      ),
    ).not.toThrow();
  });

  it('appends one line per receipt to <function>.jsonl, without the payload', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgebridge-receipts-'));
    try {
      const digest = payloadDigest({ secret: 'payload-content' });
      recordReceipt(
        { function: 'fb-onPush', delivery: 'a', event: 'push', ...digest, claimCheck: false },
        {
          FORGEBRIDGE_RECEIPTS_DIR: dir,
        },
      );
      recordReceipt(
        { function: 'fb-onPush', delivery: 'b', event: 'push', ...digest, claimCheck: false },
        {
          FORGEBRIDGE_RECEIPTS_DIR: dir,
        },
      );
      const text = readFileSync(join(dir, 'fb-onPush.jsonl'), 'utf8');
      expect(
        text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).delivery),
      ).toEqual(['a', 'b']);
      expect(text).not.toContain('payload-content');
      expect(digest.bytes).toBe(Buffer.byteLength('{"secret":"payload-content"}'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
