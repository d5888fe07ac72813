// Shared setup of the end-to-end tests: the real local stack (local-stack/stack.ts) on free ports, a receipts
// directory the subscriber functions append to, and helpers to post signed deliveries and read the receipts.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Receipt } from '../../functions/shared/receipts.js';
import { type SignedDelivery, signDelivery } from '../../local-stack/sample-deliveries.js';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local-stack/stack.js';

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
  /** Every receipt so far of one subscriber (or all). */
  receipts(subscriber?: SubscriberName): Receipt[];
  /** Receipts of one delivery, by subscriber function key. */
  receivedBy(deliveryId: string): Record<string, number>;
  /** Polls until `check` returns true, then waits `settleMs` more (late extra receipts would show up then). */
  waitFor(check: () => boolean, options?: { timeoutMs?: number; settleMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface Posted {
  id: string;
  status: number;
  body: unknown;
}

/**
 * Digest of a payload as the subscribers' receipts record it: SHA-256 of `JSON.stringify(payload)`.
 *
 * @example
 * ```ts
 * expect(receipt.sha256).toBe(digest(payload));
 * ```
 * @see https://csrc.nist.gov/pubs/fips/180-4/upd1/final
 */
export function digest(payload: unknown): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex');
}

/**
 * Starts the local stack for one test file, on free ports, with receipts in a temp dir.
 *
 * @example
 * ```ts
 * let t: TestStack;
 * beforeAll(async () => { t = await startTestStack({ busProxy: true }); });
 * afterAll(() => t?.stop());
 * ```
 * @see https://github.com/dherault/serverless-offline
 */
export async function startTestStack(
  options: Omit<LocalStackOptions, 'receiptsDir'> = {},
): Promise<TestStack> {
  const receiptsDir = mkdtempSync(join(tmpdir(), 'forgebridge-receipts-'));
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      ...options,
      receiptsDir,
      // FORGEBRIDGE_STACK_VERBOSE=1 shows osls offline's output; otherwise it goes to a log file.
      output: process.env.FORGEBRIDGE_STACK_VERBOSE === '1' ? 'inherit' : 'file',
    });
  } catch (error) {
    rmSync(receiptsDir, { recursive: true, force: true });
    throw error;
  }

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

  const receipts = (subscriber?: SubscriberName): Receipt[] => {
    if (!existsSync(receiptsDir)) return [];
    return readdirSync(receiptsDir)
      .filter((file) => file.endsWith('.jsonl'))
      .filter((file) => subscriber === undefined || file === `forgebridge-${stack.stage}-${subscriber}.jsonl`)
      .flatMap((file) =>
        readFileSync(join(receiptsDir, file), 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Receipt),
      );
  };

  return {
    stack,
    send,
    post: (name, payload, postOptions = {}) => {
      const signOptions: { id?: string; body?: string } = {};
      if (postOptions.id !== undefined) signOptions.id = postOptions.id;
      if (postOptions.body !== undefined) signOptions.body = postOptions.body;
      return send(signDelivery(postOptions.secret ?? stack.secret, name, payload, signOptions));
    },
    receipts,
    receivedBy(deliveryId) {
      const counts: Record<string, number> = {};
      for (const receipt of receipts()) {
        if (receipt.delivery !== deliveryId) continue;
        const key = receipt.function.replace(`forgebridge-${stack.stage}-`, '');
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    },
    async waitFor(check, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 20_000);
      while (!check()) {
        if (Date.now() > deadline) {
          throw new Error(`condition not met in time; last stack output:\n${stack.logTail(40)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, waitOptions.settleMs ?? 1_500));
    },
    async stop() {
      try {
        await stack.stop();
      } finally {
        rmSync(receiptsDir, { recursive: true, force: true });
      }
    },
  };
}
