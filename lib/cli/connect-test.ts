/**
 * The forge's test delivery of a hook, followed to its end: `forgebridge connect` asks the forge for it (GitHub's
 * ping, GitLab's test hook), finds the attempt in the hook's delivery log at the forge (which gives its delivery
 * id), and polls our delivery log for that id until it shows the ingest's verdict, within a bounded time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryLog, DeliveryRecord } from '../aws/index.js';
import type { ForgeClient } from './forge-client.js';
import {
  attemptsRequest,
  type ForgeAttempt,
  forgeOf,
  type HookPlace,
  readAttempts,
  testRequest,
} from './forge-hooks.js';

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
  log: Pick<DeliveryLog, 'get'>;
  source: string;
  url: string;
  timeoutMs: number;
  /** Between two polls. Default 250 ms. */
  pollMs?: number;
}

/** Asks the forge for the hook's test delivery and waits for the ingest's verdict on it. */
export async function runTestDelivery(options: TestDeliveryOptions): Promise<TestOutcome> {
  const { client, place, hookId } = options;
  const forge = forgeOf(place);
  const attempts = async (): Promise<ForgeAttempt[]> =>
    readAttempts(forge, (await client.send(attemptsRequest(place, hookId))).body);
  const before = new Set((await attempts()).map((attempt) => attempt.id));
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  await client.send(testRequest(place, hookId));
  const deadline = started + options.timeoutMs;
  let attempt: ForgeAttempt | undefined;
  let answeredAt: number | undefined;
  while (performance.now() < deadline) {
    if (attempt?.deliveryId === undefined) {
      attempt = (await attempts()).find(
        (candidate) => !before.has(candidate.id) && (forge === 'gitlab' || candidate.event === 'ping'),
      );
    }
    if (attempt?.deliveryId !== undefined) {
      const record = await ourRecord(options.log, attempt.deliveryId, options.source, forge, hookId);
      if (record !== undefined) return judged(record, elapsed());
      answeredAt ??= performance.now();
      // The forge has its answer and our log has nothing after a grace: the request never reached the ingest.
      if (performance.now() - answeredAt > 5_000) {
        return {
          verified: false,
          ms: elapsed(),
          reason: `the forge's test delivery got ${attempt.status === 0 ? 'no answer' : `status ${attempt.status}`} from ${options.url}, and the source's delivery log has no record of it: is the hook's URL this stage's ingest?`,
        };
      }
    }
    await sleep(options.pollMs ?? 250);
  }
  const seen =
    attempt === undefined
      ? 'the forge lists no test delivery of the hook either'
      : `the forge's attempt got ${attempt.status === 0 ? 'no answer' : `status ${attempt.status}`}`;
  return {
    verified: false,
    ms: elapsed(),
    reason: `no test delivery reached the delivery log of source "${options.source}" in ${Math.round(options.timeoutMs / 1000)} s (${seen}): check the hook's URL, and "forgebridge deliveries --source ${options.source}"`,
  };
}

/** The log's record of the test delivery from this hook (GitHub names the hook of each record), newest first. */
async function ourRecord(
  log: Pick<DeliveryLog, 'get'>,
  deliveryId: string,
  source: string,
  forge: 'github' | 'gitlab',
  hookId: number,
): Promise<DeliveryRecord | undefined> {
  const delivery = await log.get(deliveryId, { source });
  return delivery?.records.find(
    (record) => forge !== 'github' || record.hook === undefined || record.hook === String(hookId),
  );
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
