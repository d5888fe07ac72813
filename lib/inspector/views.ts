// Records as the page sees them: the rules they matched, headers masked once more, the body as text or base64.
import { type DeliveryDetails, type DeliveryRecord, maskHeaders } from '../aws/index.js';
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

/** A delivery for the page: its records, subscribers, and whether the inspector can replay it. */
export function detailsView(
  details: DeliveryDetails,
  rules: readonly InspectorRule[],
  replayable: boolean,
): Record<string, unknown> {
  return {
    deliveryId: details.deliveryId,
    source: details.source ?? 'default',
    subscribers: details.subscribers,
    replayable,
    records: details.records.map((record) => recordView(record, rules)),
  };
}
