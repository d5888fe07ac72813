// The pure parts of `forgebridge status`: what needs attention, the window counts, ages for people.
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../lib/aws/index.js';
import { attentionOf, formatAge, windows } from '../../../lib/cli/stage-status.js';

const quiet = {
  deadLetters: { count: 0, truncated: false },
  queue: { depth: 0, oldestAgeSeconds: null, truncated: false },
  lastHour: { total: 0, byVerdict: {}, byOutcome: {} },
};

function record(receivedAt: number, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    recordId: `r${receivedAt}`,
    receivedAt,
    bodyBytes: 1,
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    expiresAt: Math.floor(receivedAt / 1000) + 86_400,
    ...overrides,
  };
}

describe('attentionOf()', () => {
  it('is empty for a quiet stage, an empty hour and a queue of exactly 15 minutes', () => {
    expect(attentionOf(quiet)).toEqual([]);
    expect(attentionOf({ ...quiet, queue: { depth: 3, oldestAgeSeconds: 900, truncated: false } })).toEqual(
      [],
    );
  });

  it('names dead letters (a lower bound with "+"), an old queue and an hour of refusals', () => {
    expect(
      attentionOf({
        deadLetters: { count: 2, truncated: true },
        queue: { depth: 1, oldestAgeSeconds: 901, truncated: false },
        lastHour: { total: 4, byVerdict: { bad_signature: 4 }, byOutcome: { rejected: 4 } },
      }),
    ).toEqual([
      '2+ dead letters',
      'the oldest queued delivery waits for 15m 1s (over 15 minutes)',
      'all 4 deliveries of the last hour were refused',
    ]);
  });

  it('does not count an hour with one delivery taken as all refused', () => {
    const lastHour = { total: 4, byVerdict: {}, byOutcome: { rejected: 3, published: 1 } };
    expect(attentionOf({ ...quiet, lastHour })).toEqual([]);
  });
});

describe('windows()', () => {
  it('counts the last hour inside the day, by verdict and outcome', () => {
    const now = 10 * 3_600_000;
    const counts = windows(
      [
        record(now - 1_000),
        record(now - 3_599_000, { verdict: 'bad_signature', outcome: 'rejected', httpStatus: 401 }),
        record(now - 3_601_000),
      ],
      now,
    );
    expect(counts.lastHour).toEqual({
      total: 2,
      byVerdict: { verified: 1, bad_signature: 1 },
      byOutcome: { published: 1, rejected: 1 },
    });
    expect(counts.lastDay.total).toBe(3);
    expect(counts.lastDay.byOutcome).toEqual({ published: 2, rejected: 1 });
  });
});

describe('formatAge()', () => {
  it.each([
    [0, '0s'],
    [59, '59s'],
    [60, '1m 0s'],
    [3_599, '59m 59s'],
    [3_600, '1h 0m'],
    [90_061, '1d 1h'],
  ])('%i s is %s', (seconds, text) => {
    expect(formatAge(seconds)).toBe(text);
  });
});
