// A delivery id may name two deliveries: GitHub gives one event one GUID at every hook it is sent to (two Apps on
// one URL), each with its own X-GitHub-Hook-ID. The hooks a logged delivery's records came from, and one hook's
// delivery of them, for the inspector and the CLI (`show`, `replay --hook`).
import type { DeliveryDetails } from './schema.js';

/**
 * The hooks a delivery's records came from (GitHub's `X-GitHub-Hook-ID`), sorted: two when two Apps or hooks got
 * one event under one delivery id; none when the forge names no hook.
 */
export function hooksOf(details: DeliveryDetails): string[] {
  const hooks =
    details.hooks ?? details.records.flatMap((record) => (record.hook === undefined ? [] : [record.hook]));
  return [...new Set(hooks)].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/**
 * The delivery as one hook sent it: that hook's records only (newest first) and its subscribers; `undefined` when
 * no record of the delivery came from that hook.
 */
export function detailsOfHook(details: DeliveryDetails, hook: string): DeliveryDetails | undefined {
  const records = details.records.filter((record) => record.hook === hook);
  const [latest] = records;
  if (latest === undefined) return undefined;
  return { ...details, hooks: [hook], latest, records, subscribers: latest.subscribers ?? {} };
}
