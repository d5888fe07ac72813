/**
 * How the delivery-log commands (`deliveries`, `show`, `replay`, `status`) write a record: coloured outcomes,
 * verdicts and statuses, event labels, local times, subscriber summaries and bodies.
 */
import type { DeliveryOutcome, DeliveryRecord, SubscriberOutcome } from '../aws/internal.js';
import { paint } from './output.js';

const OUTCOME_COLOURS: Record<DeliveryOutcome, Parameters<typeof paint>[0]> = {
  published: 'green',
  queued: 'cyan',
  duplicate: 'yellow',
  in_progress: 'yellow',
  failed: 'red',
  rejected: 'red',
  late: 'yellow',
  redelivered: 'cyan',
  recovered: 'green',
};

/** The outcome, coloured. */
export function paintOutcome(outcome: string): string {
  return paint(OUTCOME_COLOURS[outcome as DeliveryOutcome] ?? 'white', outcome);
}

/** The verdict, coloured: green when verified, grey when not checked, red otherwise. */
export function paintVerdict(verdict: string): string {
  return paint(verdict === 'verified' ? 'green' : verdict === 'not_checked' ? 'dim' : 'red', verdict);
}

export function paintStatus(status: number): string {
  return paint(status < 300 ? 'green' : status < 500 ? 'yellow' : 'red', String(status));
}

/** `issues.opened`, `push`, or `-` for a request whose event was not read. */
export function eventLabel(record: Pick<DeliveryRecord, 'event' | 'action'>): string {
  if (record.event === undefined) return '-';
  return record.action === undefined ? record.event : `${record.event}.${record.action}`;
}

/** The local time of an epoch ms, `2026-11-23 08:00:01`. */
export function formatTime(ms: number): string {
  const date = new Date(ms);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function subscribersText(subscribers: Record<string, SubscriberOutcome> | undefined): string {
  const outcomes = Object.values(subscribers ?? {});
  if (outcomes.length === 0) return '-';
  const failed = outcomes.filter((outcome) => outcome.outcome === 'error').length;
  return failed === 0 ? `${outcomes.length} ok` : `${outcomes.length - failed} ok, ${failed} error`;
}

export function subscribersLabel(subscribers: Record<string, SubscriberOutcome> | undefined): string {
  const text = subscribersText(subscribers);
  if (text === '-') return paint('dim', text);
  return paint(text.includes('error') ? 'red' : 'green', text);
}

/** A body as text: UTF-8 when it is valid UTF-8, else base64. */
export function bodyText(body: Uint8Array): { text: string; encoding: 'utf8' | 'base64' } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body), encoding: 'utf8' };
  } catch {
    return { text: Buffer.from(body).toString('base64'), encoding: 'base64' };
  }
}

/** A record as `--json` prints it: its ISO time beside the epoch ms, the body as text (or base64). */
export function jsonRecord(record: DeliveryRecord): Record<string, unknown> {
  const { body, ...rest } = record;
  if (body === undefined) return { ...rest, receivedAtIso: new Date(record.receivedAt).toISOString() };
  const { text, encoding } = bodyText(body);
  return {
    ...rest,
    receivedAtIso: new Date(record.receivedAt).toISOString(),
    body: text,
    ...(encoding === 'base64' ? { bodyEncoding: 'base64' } : {}),
  };
}
