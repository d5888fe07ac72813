// Shared setup of the end-to-end tests: the real local stack (local-stack/stack.ts) on free ports, and helpers
// to post signed deliveries and to see, from outside the handlers, what each subscriber received: the
// functions' Powertools log lines in osls offline's log (`delivery received` of every subscriber, `forge api
// called` of the example subscriber, `delivery recorded` of the local stage's recording subscriber).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FunctionLogRecord } from '../../local-stack/function-logs.js';
import { type SignedDelivery, signDelivery } from '../../local-stack/sample-deliveries.js';
import {
  type LocalSource,
  type LocalStack,
  type LocalStackOptions,
  startLocalStack,
} from '../../local-stack/stack.js';

/** The subscriber functions of serverless.yml, by rule form. */
export const Subscribers = {
  /** `detail-type: [issues.opened]` (the example subscriber, it calls the forge API). */
  issuesOpened: 'onIssuesOpened',
  /** `detail: { event: [issues] }`. */
  issues: 'onIssues',
  /** `detail-type: [{ prefix: 'issues.' }]`. */
  issuesPrefix: 'onIssuesPrefix',
  /** `detail-type: [push]`. */
  push: 'onPush',
  /** `source` only: everything. */
  everything: 'onEverything',
} as const;
export type SubscriberName = (typeof Subscribers)[keyof typeof Subscribers];

/** The local stage's recording subscriber (local-stack/recorder.yml): test equipment, not a subscriber above. */
const RECORDER = 'recorder';

/** A subscriber's `delivery received` line. */
export interface Received {
  /** The function key in serverless.yml (`onPush`). */
  function: string;
  delivery: string;
  event: string;
  action?: string;
  detailType: string;
  claimCheck: boolean;
}

/** The recorder's view of one delivery: its `delivery received` line joined with its `delivery recorded` one. */
export interface Recorded extends Received {
  /** UTF-8 bytes of `JSON.stringify(payload)` of the payload the recorder resolved. */
  bytes: number;
  /** Hex SHA-256 of the same: equal to {@link digest} of the sent payload when it arrived intact. */
  sha256: string;
}

/** The example subscriber's `forge api called` line. */
export interface ForgeApiCalled {
  delivery: string;
  status: number;
  title?: string;
}

/** A started stack plus the test conveniences. */
export interface TestStack {
  readonly stack: LocalStack;
  /** Signs and posts a delivery; resolves with the status and the parsed JSON body. */
  post(
    name: string,
    payload: unknown,
    options?: { id?: string; body?: string; secret?: string },
  ): Promise<Posted>;
  /** Posts an already signed delivery. */
  send(delivery: SignedDelivery): Promise<Posted>;
  /** Every `delivery received` line so far of one subscriber (or of all of them, the recorder excluded). */
  /** The stack's webhook source of this name (throws when there is none). */
  source(name: string): LocalSource;
  received(subscriber?: SubscriberName): Received[];
  /** How many times each subscriber (by function key) received one delivery; the recorder is not counted. */
  receivedBy(deliveryId: string): Record<string, number>;
  /** What the recorder saw: every delivery so far, or one (a list, so that a second copy would show). */
  recorded(deliveryId?: string): Recorded[];
  /**
   * Whether the example failure switch has failed every attempt the local bus makes at one delivery for one
   * subscriber (by function key): its first invocation and the plugin's retries ({@link LOCAL_BUS_ATTEMPTS}, one
   * `failing on purpose` line each). Until then a retry may still reach the subscriber once the switch is off.
   */
  attemptsUsedUp(deliveryId: string, subscriber: string): boolean;
  /** The example subscriber's forge API calls for one delivery. */
  forgeApiCalls(deliveryId: string): ForgeApiCalled[];
  /** Polls every 100 ms until `check` returns true; throws with the stack's last output after `timeoutMs` (20 s). */
  waitFor(check: () => boolean, options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Runs `assertions` now, and keeps them for {@link TestStack.assertSettled}: counts that hold the moment the
   * expected deliveries arrived must still hold once the stack has had time to deliver late ones (a second copy
   * of a delivery, a rule that should not have matched, a refused delivery published after all).
   */
  holds(assertions: () => void): void;
  /**
   * Waits `settleMs`, then runs every assertion {@link TestStack.holds} kept, each under the name of the test that
   * made it. Rejects naming every one that no longer holds; resolves with how many were checked.
   */
  assertSettled(settleMs: number): Promise<number>;
  stop(): Promise<void>;
}

export interface Posted {
  id: string;
  status: number;
  body: unknown;
}

/** The AWS call log of a test run: one JSON line per call (local-stack/aws-call-recorder.ts). */
export function awsCallLogOf(runDir: string): string {
  return join(runDir, 'aws-calls.jsonl');
}

/**
 * How many times the local bus hands one event to a target that keeps failing: once, and the retries of
 * serverless.yml's `serverless-offline-aws-eventbridge.maximumRetryAttempts` (2).
 */
export const LOCAL_BUS_ATTEMPTS = 3;

/** SHA-256 of `JSON.stringify(payload)`, as the recorder logs it. */
export function digest(payload: unknown): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex');
}

/**
 * Starts the local stack for one test file, on free ports, its osls offline output in a log file.
 *
 * @example
 * ```ts
 * let t: TestStack;
 * beforeAll(async () => { t = await startTestStack({ busProxy: true }); });
 * afterAll(() => t?.stop());
 * ```
 */
export async function startTestStack(options: Omit<LocalStackOptions, 'output'> = {}): Promise<TestStack> {
  // Every AWS call of the functions goes into the run's call log, which the iam project evaluates against their
  // roles (vitest.config.ts names the run's folder; test/iam/recorded-calls.test.ts).
  const runDir = process.env.FORGEBRIDGE_TEST_RUN_DIR;
  const recording = runDir === undefined || runDir === '' ? {} : { awsCallLog: awsCallLogOf(runDir) };
  // The observation reads the log file: the output always goes there.
  const stack = await startLocalStack({ ...recording, ...options, output: 'file' });
  const prefix = `forgebridge-${stack.stage}-`;
  const keyOf = (record: FunctionLogRecord) => record.function_name.replace(prefix, '');

  const send = async (delivery: SignedDelivery): Promise<Posted> => {
    const response = await fetch(stack.webhookUrl, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { id: delivery.id, status: response.status, body };
  };

  const toReceived = (record: FunctionLogRecord): Received => {
    const { delivery, event, action, detailType, claimCheck } = record as unknown as Received;
    return {
      function: keyOf(record),
      delivery,
      event,
      ...(action === undefined ? {} : { action }),
      detailType,
      claimCheck,
    };
  };
  const receivedLines = () => stack.functionLogs().filter((record) => record.message === 'delivery received');

  const received = (subscriber?: SubscriberName): Received[] =>
    receivedLines()
      .filter((record) => keyOf(record) !== RECORDER)
      .filter((record) => subscriber === undefined || keyOf(record) === subscriber)
      .map(toReceived);

  const recorded = (deliveryId?: string): Recorded[] => {
    const lines = stack.functionLogs().filter((record) => keyOf(record) === RECORDER);
    // One invocation writes both lines: join them on the Lambda request id.
    const byRequest = new Map(
      lines
        .filter((record) => record.message === 'delivery received')
        .map((record) => [record.function_request_id, record]),
    );
    return lines
      .filter((record) => record.message === 'delivery recorded')
      .filter((record) => deliveryId === undefined || record.delivery === deliveryId)
      .map((record) => {
        const receivedLine = byRequest.get(record.function_request_id);
        if (receivedLine === undefined) throw new Error(`recorder line without its "delivery received" line`);
        return {
          ...toReceived(receivedLine),
          bytes: record.bytes as number,
          sha256: record.sha256 as string,
        };
      });
  };

  /** The assertions {@link TestStack.holds} kept, with the test that made each. */
  const kept: { test: string; assertions: () => void }[] = [];

  return {
    stack,
    send,
    post: (name, payload, postOptions = {}) => {
      const signOptions: { id?: string; body?: string } = {};
      if (postOptions.id !== undefined) signOptions.id = postOptions.id;
      if (postOptions.body !== undefined) signOptions.body = postOptions.body;
      return send(signDelivery(postOptions.secret ?? stack.secret, name, payload, signOptions));
    },
    source(name) {
      const found = stack.sources.find((candidate) => candidate.name === name);
      if (found === undefined) throw new Error(`the local stack has no source "${name}"`);
      return found;
    },
    received,
    receivedBy(deliveryId) {
      const counts: Record<string, number> = {};
      for (const entry of received()) {
        if (entry.delivery === deliveryId) counts[entry.function] = (counts[entry.function] ?? 0) + 1;
      }
      return counts;
    },
    recorded,
    attemptsUsedUp: (deliveryId, subscriber) =>
      stack
        .functionLogs()
        .filter(
          (record) =>
            record.message === 'failing on purpose' &&
            record.delivery === deliveryId &&
            keyOf(record) === subscriber,
        ).length >= LOCAL_BUS_ATTEMPTS,
    forgeApiCalls: (deliveryId) =>
      stack
        .functionLogs()
        .filter((record) => record.message === 'forge api called' && record.delivery === deliveryId)
        .filter((record) => keyOf(record) === Subscribers.issuesOpened)
        .map(({ delivery, status, title }) => ({
          delivery: delivery as string,
          status: status as number,
          ...(title === undefined ? {} : { title: title as string }),
        })),
    async waitFor(check, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 20_000);
      while (!check()) {
        if (Date.now() > deadline) {
          throw new Error(`condition not met in time; last stack output:\n${stack.logTail(40)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    holds(assertions) {
      assertions();
      kept.push({ test: expect.getState().currentTestName ?? '(outside a test)', assertions });
    },
    async assertSettled(settleMs) {
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      const failed: string[] = [];
      for (const { test, assertions } of kept) {
        try {
          assertions();
        } catch (error) {
          failed.push(`${test}: ${(error as Error).message}`);
        }
      }
      if (failed.length > 0) {
        throw new Error(
          `${failed.length} of ${kept.length} counts changed after their test:\n${failed.join('\n')}`,
        );
      }
      return kept.length;
    },
    stop: () => stack.stop(),
  };
}
