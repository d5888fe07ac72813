/**
 * Receipts: one JSON line per delivery a subscriber handled, appended to
 * `$FORGEBRIDGE_RECEIPTS_DIR/<function name>.jsonl` when that variable is set (the local stack and its
 * end-to-end tests set it; a deployment does not, and then nothing is written). The line holds identifiers and
 * a digest of the payload, never the payload itself.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventBridgeEvent } from 'aws-lambda';
import { type Env, optionalEnv } from '../../lib/aws/env.js';
import type { DeliveryDetail } from '../../lib/aws/index.js';

/**
 * What a subscriber reports about one delivery it received.
 *
 * @example
 * ```json
 * {"function":"forgebridge-dev-onPush","delivery":"f1e2","event":"push","bytes":7042,"sha256":"ab…"}
 * ```
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html
 */
export interface Receipt {
  function: string;
  delivery: string;
  event: string;
  action?: string;
  detailType?: string;
  /** UTF-8 bytes of `JSON.stringify(payload)`. */
  bytes: number;
  /** Hex SHA-256 of `JSON.stringify(payload)`: equal to the sender's when the payload arrived intact. */
  sha256: string;
  /** Whether the payload came through the S3 claim check. */
  claimCheck: boolean;
  [extra: string]: unknown;
}

/**
 * Digest of a payload as the receipts record it.
 *
 * @example
 * ```ts
 * payloadDigest({ action: 'opened' }); // { bytes: 19, sha256: '…' }
 * ```
 * @see https://csrc.nist.gov/pubs/fips/180-4/upd1/final
 */
export function payloadDigest(payload: unknown): { bytes: number; sha256: string } {
  const text = JSON.stringify(payload) ?? 'undefined';
  return { bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') };
}

/**
 * Appends a receipt when `FORGEBRIDGE_RECEIPTS_DIR` is set; a no-op otherwise.
 *
 * @example
 * ```ts
 * recordReceipt({ function: context.functionName, delivery: id, event: name, ...payloadDigest(payload), claimCheck: false });
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 */
export function recordReceipt(receipt: Receipt, env: Env = process.env): void {
  const dir = optionalEnv('FORGEBRIDGE_RECEIPTS_DIR', env);
  if (dir === undefined) return;
  const file = join(dir, `${receipt.function.replace(/[^\w.-]/g, '_')}.jsonl`);
  appendFileSync(file, `${JSON.stringify(receipt)}\n`);
}

/**
 * The receipt of one delivery a subscriber handled: its identifiers, the rule's detail-type, a digest of the
 * (resolved) payload and whether it came through the claim check.
 *
 * @example
 * ```ts
 * recordReceipt(deliveryReceipt(context.functionName, event, await resolveDelivery(event, { s3 })));
 * ```
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-events-structure.html
 */
export function deliveryReceipt(
  functionName: string,
  event: EventBridgeEvent<string, DeliveryDetail>,
  delivery: { id: string; name: string; payload: unknown },
): Receipt {
  return {
    function: functionName,
    delivery: delivery.id,
    event: delivery.name,
    ...(event.detail.action === undefined ? {} : { action: event.detail.action }),
    detailType: event['detail-type'],
    ...payloadDigest(delivery.payload),
    claimCheck: event.detail.payloadRef !== undefined,
  };
}
