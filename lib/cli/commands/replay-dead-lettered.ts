/**
 * `replay --since T … --subscriber NAME --outcome dead-lettered`: the subscriber's messages in the rules'
 * dead-letter queue whose event falls in the window (by when the queue got it), source and event, sent to it as
 * `dlq replay` does (each once, a message deleted once the subscriber took it).
 */
import { checkWindow } from '../bulk-replay.js';
import { parseSince } from '../delivery-log.js';
import type { DeadLetter } from '../dlq.js';
import { CliError } from '../errors.js';
import { parseEventName } from '../events.js';
import { type DlqOptions, runReplay } from './dlq.js';

/** The options `replay --since --outcome dead-lettered` reads. */
export interface DeadLetteredOptions extends Omit<DlqOptions, 'limit'> {
  since: string;
  until?: string | undefined;
  source?: string | undefined;
  event?: string | undefined;
  limit?: number | undefined;
}

/** Whether a dead letter is of the window, the source and the event (`push`, or `issues` / `issues.opened`). */
export function deadLetterFilter(
  options: Pick<DeadLetteredOptions, 'since' | 'until' | 'source' | 'event'>,
  now: number = Date.now(),
): (letter: DeadLetter) => boolean {
  const since = parseSince(options.since, now, '--since');
  const until = options.until === undefined ? undefined : parseSince(options.until, now, '--until');
  checkWindow(since, until, now);
  const event = options.event === undefined ? undefined : parseEventName(options.event).full;
  return (letter) => {
    if (letter.sentAt === undefined || letter.sentAt < since) return false;
    if (until !== undefined && letter.sentAt >= until) return false;
    if (options.source !== undefined && (letter.source ?? 'default') !== options.source) return false;
    if (event !== undefined) {
      const type = letter.detailType ?? '';
      if (type !== event && !type.startsWith(`${event}.`)) return false;
    }
    return true;
  };
}

/** Runs it: the same exit codes as `dlq replay`. */
export async function runDeadLettered(options: DeadLetteredOptions): Promise<number> {
  if (options.subscriber === undefined) {
    throw new CliError('"--outcome dead-lettered" needs "--subscriber": a dead letter is one subscriber\'s');
  }
  const only = deadLetterFilter(options);
  return runReplay({ ...options, limit: options.limit ?? 10_000 }, only);
}
