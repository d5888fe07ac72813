/**
 * The forge's test delivery of a hook, followed to its end: `forgebridge connect` asks the forge for it (GitHub's
 * ping, GitLab's test hook) and polls our delivery log until a record of it shows the ingest's verdict, within a
 * bounded time. The record is the one the forge's own delivery log names (its delivery id), where the forge's log
 * can be read; else the source's first new record of the test's event (GitHub's from this hook) since the request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryLog, DeliveryRecord } from '../aws/internal.js';
import type { ForgeClient } from './forge-client.js';
import {
  attemptsRequest,
  type ForgeAttempt,
  forgeOf,
  type HookPlace,
  readAttempts,
  testRequest,
} from './forge-hooks.js';
import { HOOK_APIS } from './hook-apis/index.js';

/** How the test delivery ended. */
export interface TestOutcome {
  verified: boolean;
  /** From the test request to the verified record (or to the failure), in ms. */
  ms: number;
  /** Why it did not verify, in words (the ingest's diagnosis of the signature where it gave one). */
  reason?: string;
  /** The signature was the problem (missing or wrong): re-keying the hook may mend it. */
  secretProblem?: boolean;
}

/** Options of {@link runTestDelivery}. */
export interface TestDeliveryOptions {
  client: ForgeClient;
  place: HookPlace;
  hookId: number;
  log: Pick<DeliveryLog, 'get' | 'list'>;
  source: string;
  url: string;
  timeoutMs: number;
  /** Between two polls. Default 250 ms. */
  pollMs?: number;
}

/** Asks the forge for the hook's test delivery and waits for the ingest's verdict on it. */
export async function runTestDelivery(options: TestDeliveryOptions): Promise<TestOutcome> {
  const { client, place, hookId, log, source } = options;
  const forge = forgeOf(place);
  const api = HOOK_APIS[forge];
  // The forge's log of the hook, where it can be read (a forge or token without it still connects).
  const attempts = async (): Promise<ForgeAttempt[] | undefined> => {
    try {
      const answer = await client.send(attemptsRequest(place, hookId), [403, 404]);
      return answer.status === 200 ? readAttempts(forge, answer.body) : undefined;
    } catch {
      return undefined;
    }
  };
  // A record names the hook that sent it where the forge's preset reads a hook header (GitHub's hook id).
  const ours = (record: DeliveryRecord) => record.hook === undefined || record.hook === String(hookId);
  const recent = async () =>
    (
      await log.list({ source, event: api.testEvent, since: Date.now() - 15 * 60_000, limit: 100 })
    ).records.filter(ours);
  const seen = new Set((await recent()).map((record) => record.recordId));
  const before = await attempts();
  const known = new Set((before ?? []).map((attempt) => attempt.id));
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  await client.send(testRequest(place, hookId));
  const deadline = started + options.timeoutMs;
  let attempt: ForgeAttempt | undefined;
  let answeredAt: number | undefined;
  while (performance.now() < deadline) {
    if (before !== undefined && attempt?.deliveryId === undefined) {
      attempt = (await attempts())?.find(
        (candidate) =>
          !known.has(candidate.id) &&
          (api.testAttemptEvent === undefined || candidate.event === api.testAttemptEvent),
      );
    }
    const record =
      attempt?.deliveryId !== undefined
        ? (await log.get(attempt.deliveryId, { source }))?.records.find(ours)
        : (await recent()).find((candidate) => !seen.has(candidate.recordId));
    if (record !== undefined) return judged(await whole(log, record, source), elapsed());
    if (attempt !== undefined) {
      answeredAt ??= performance.now();
      // The forge has its answer and our log has nothing after a grace: the request never reached the ingest.
      if (performance.now() - answeredAt > 5_000) {
        return {
          verified: false,
          ms: elapsed(),
          reason: `the forge's test delivery got ${statusWords(attempt)} from ${options.url}, and the source's delivery log has no record of it: is the hook's URL this stage's ingest?`,
        };
      }
    }
    await sleep(options.pollMs ?? 250);
  }
  const forgeSaw =
    attempt !== undefined
      ? ` (the forge's attempt got ${statusWords(attempt)})`
      : before !== undefined
        ? ' (the forge lists no test delivery of the hook either)'
        : '';
  return {
    verified: false,
    ms: elapsed(),
    reason: `no test delivery reached the delivery log of source "${source}" in ${options.timeoutMs / 1000} s${forgeSaw}: check the hook's URL, and "forgebridge deliveries --source ${source}"`,
  };
}

/** A listed record with its diagnosis (a list gives the summary): the log's full record of it. */
async function whole(
  log: Pick<DeliveryLog, 'get'>,
  record: DeliveryRecord,
  source: string,
): Promise<DeliveryRecord> {
  if (record.verdict === 'verified' || record.diagnosis !== undefined || record.deliveryId === undefined) {
    return record;
  }
  const delivery = await log.get(record.deliveryId, { source });
  return delivery?.records.find((candidate) => candidate.recordId === record.recordId) ?? record;
}

function statusWords(attempt: ForgeAttempt): string {
  return attempt.status === 0 ? 'no answer' : `status ${attempt.status}`;
}

const SECRET_VERDICTS = new Set(['bad_signature', 'missing_signature']);

/** The record's verdict as an outcome, with the diagnosis in words. */
export function judged(record: DeliveryRecord, ms: number): TestOutcome {
  if (record.verdict === 'verified') return { verified: true, ms };
  const words = (record.diagnosis ?? []).map((entry) => entry.message);
  const detail =
    words.length > 0
      ? words.join('; ')
      : record.reason !== undefined
        ? record.reason
        : `verdict ${record.verdict.replaceAll('_', ' ')}`;
  return {
    verified: false,
    ms,
    reason: `the ingest answered the test delivery ${record.httpStatus}: ${detail}`,
    secretProblem: SECRET_VERDICTS.has(record.verdict),
  };
}
