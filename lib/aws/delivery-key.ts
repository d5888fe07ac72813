import { DEFAULT_SOURCE } from './rules.js';
import type { Delivery } from './types.js';

/**
 * The key a delivery is deduped and queued under, the one rule for the ingest, the retrier, the reconciler, replay
 * and the delivery log: its id, prefixed with its source (`source#<name>#<id>`) unless that is the `default` one,
 * so that two sources' delivery ids (two forges' counters) never collide; and, where the forge names the hook that
 * sent it (GitHub's `X-GitHub-Hook-ID`), that hook (`hook#<hook>#…`): GitHub's GUID names the event, so two Apps'
 * or hooks' deliveries of one event are two deliveries, while a redelivery keeps both its GUID and its hook.
 */
export function dedupeKeyOf(delivery: Pick<Delivery, 'id' | 'source' | 'hook'>): string {
  const { id, source, hook } = delivery;
  const key = source === undefined || source === DEFAULT_SOURCE ? id : `source#${source}#${id}`;
  return hook === undefined || hook === '' ? key : `hook#${hook}#${key}`;
}
