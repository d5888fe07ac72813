import { describe, expect, it } from 'vitest';
import { randomId } from '../../../lib/aws/random-id.js';

describe('randomId', () => {
  it('gives base64url ids of the asked length, none repeated across several pool refills', () => {
    const seen = new Set<string>();
    // 4096-byte pool: 2,000 ids of 16 bytes draw about eight pools.
    for (let i = 0; i < 2_000; i += 1) {
      const id = randomId(16);
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2_000);
    expect(Buffer.from(randomId(9), 'base64url')).toHaveLength(9);
  });

  it('spreads its bytes over every value (no constant or reused region of the pool)', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 1_000; i += 1) {
      for (const byte of Buffer.from(randomId(64), 'base64url')) counts[byte] = (counts[byte] ?? 0) + 1;
    }
    // 64,000 bytes over 256 values: 250 each on average; a stuck or repeated pool would skew this far.
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(350);
  });

  it('refuses a length it cannot serve', () => {
    for (const bad of [0, -1, 1.5, 4097, Number.NaN]) {
      expect(() => randomId(bad)).toThrow(new RangeError('"bytes" must be an integer from 1 to 4096'));
    }
  });
});
