import { describe, expect, it } from 'vitest';
import { deadLetterFilter, runDeadLettered } from '../../../lib/cli/commands/replay-dead-lettered.js';
import type { DeadLetter } from '../../../lib/cli/dlq.js';

const NOW = Date.parse('2026-12-06T12:00:00Z');

function letter(sentAt: number | undefined, detailType: string, source?: string): DeadLetter {
  return { sentAt, detailType, source } as DeadLetter;
}

describe('deadLetterFilter()', () => {
  it('keeps the messages the queue got in the window, of the source and the event (or its actions)', () => {
    const keep = deadLetterFilter({ since: '2h', until: '2026-12-06T11:30:00Z', event: 'issues' }, NOW);
    expect(keep(letter(NOW - 60 * 60_000, 'issues.opened'))).toBe(true);
    expect(keep(letter(NOW - 60 * 60_000, 'issues'))).toBe(true);
    expect(keep(letter(NOW - 60 * 60_000, 'issue_comment.created'))).toBe(false);
    expect(keep(letter(NOW - 3 * 60 * 60_000, 'issues.opened'))).toBe(false);
    expect(keep(letter(NOW - 10 * 60_000, 'issues.opened'))).toBe(false);
    expect(keep(letter(undefined, 'issues.opened'))).toBe(false);
    const github = deadLetterFilter({ since: '2h', source: 'github' }, NOW);
    expect(github(letter(NOW - 1_000, 'push', 'github'))).toBe(true);
    expect(github(letter(NOW - 1_000, 'push'))).toBe(false);
  });

  it('refuses a window that ends before it starts and an event not in the catalogue, before reading anything', () => {
    expect(() => deadLetterFilter({ since: '1h', until: '2h' }, NOW)).toThrow(
      /"--until" .* must be after "--since"/,
    );
    expect(() => deadLetterFilter({ since: '1h', event: 'not_an_event' }, NOW)).toThrow(/not_an_event/);
  });

  it("needs a subscriber: a dead letter is one subscriber's", async () => {
    await expect(runDeadLettered({ since: '1h', rate: 10 })).rejects.toThrow(
      '"--outcome dead-lettered" needs "--subscriber"',
    );
  });
});
