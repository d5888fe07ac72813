// Records as the page sees them: the rules they matched, headers masked once more, the body as text or base64.

import { DEFAULT_SOURCE } from '../aws/core/index.js';
import {
  type DeliveryDetails,
  type DeliveryRecord,
  detailsOfHook,
  hooksOf,
  maskHeaders,
} from '../aws/index.js';
import { type InspectorRule, matchedRules } from './rules.js';

/** One record for the page. */
export function recordView(record: DeliveryRecord, rules: readonly InspectorRule[]): Record<string, unknown> {
  const { body, headers, ...rest } = record;
  const view: Record<string, unknown> = { ...rest, rules: matchedRules(rules, record) };
  if (headers !== undefined) view.headers = maskHeaders(headers);
  if (body !== undefined) {
    const bytes = Buffer.from(body);
    const text = bytes.toString('utf8');
    const exact = Buffer.from(text, 'utf8').equals(bytes);
    view.body = exact ? text : bytes.toString('base64');
    view.bodyEncoding = exact ? 'utf8' : 'base64';
  }
  return view;
}

/**
 * A delivery for the page: its records (each with its hook, its own hook's subscribers and whether that hook's
 * delivery can be replayed), the hooks they came from, and whether the inspector can replay it.
 */
export function detailsView(
  details: DeliveryDetails,
  rules: readonly InspectorRule[],
  canReplay: (details: DeliveryDetails) => boolean,
): Record<string, unknown> {
  const hooks = hooksOf(details);
  const replayableOf = new Map(
    hooks.map((hook) => {
      const ofHook = detailsOfHook(details, hook);
      return [hook, ofHook !== undefined && canReplay(ofHook)] as const;
    }),
  );
  const replayable = canReplay(details);
  return {
    deliveryId: details.deliveryId,
    source: details.source ?? DEFAULT_SOURCE,
    ...(hooks.length > 0 ? { hooks } : {}),
    subscribers: details.subscribers,
    replayable,
    records: details.records.map((record) => ({
      ...recordView(record, rules),
      // A record of no hook beside two hooks' records cannot say which hook's delivery it was.
      replayable:
        record.hook === undefined
          ? replayable && hooks.length <= 1
          : (replayableOf.get(record.hook) ?? false),
    })),
  };
}
