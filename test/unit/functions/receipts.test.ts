// Receipts of the subscribers (test instrumentation, leaving functions/).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { payloadDigest, recordReceipt } from '../../../functions/shared/receipts.js';

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
