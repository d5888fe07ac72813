import type { Delivery } from './types.js';

/** The source of `/webhooks`: its deliveries keep the dedupe and queue keys they had before there were sources. */
export const DEFAULT_SOURCE = 'default';

/**
 * The key a delivery is deduped and queued under: its id, prefixed with its source (`source#<name>#<id>`) unless
 * that is the `default` one, so that two sources' delivery ids (two forges' counters) never collide.
 */
export function dedupeKeyOf(delivery: Pick<Delivery, 'id' | 'source'>): string {
  const { id, source } = delivery;
  return source === undefined || source === DEFAULT_SOURCE ? id : `source#${source}#${id}`;
}
