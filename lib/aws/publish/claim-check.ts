import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { AwsDefaults } from '../constants.js';
import { dedupeKeyOf } from '../delivery-key.js';
import type { Delivery, PayloadRef } from '../types.js';

/** Options of {@link ClaimCheck}. Defaults live in {@link AwsDefaults}. */
export interface ClaimCheckOptions {
  s3: S3Client;
  bucket: string;
  /** Key prefix. Default `'deliveries/'`. */
  prefix?: string | undefined;
}

/**
 * The S3 key of a claim-checked delivery: `<prefix>YYYY/MM/DD/<url-encoded key>.json` (UTC date), `key` being the
 * delivery's dedupe key ({@link dedupeKeyOf}: its id, source and hook), so a lifecycle rule can expire it, a
 * redelivery overwrites the same object, and two sources' or two hooks' deliveries under one id never share one.
 */
export function claimCheckKey(prefix: string, id: string, at: Date): string {
  const yyyy = at.getUTCFullYear();
  const mm = String(at.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(at.getUTCDate()).padStart(2, '0');
  return `${prefix}${yyyy}/${mm}/${dd}/${encodeURIComponent(id)}.json`;
}

/**
 * Stores a delivery's raw body in S3 for an event too large for one PutEvents entry, and returns the
 * reference the event carries instead (`{ bucket, key, bytes, sha256 }`, the SHA-256 also in the object's
 * metadata).
 */
export class ClaimCheck {
  readonly bucket: string;
  readonly #s3: S3Client;
  readonly #prefix: string;

  constructor(options: ClaimCheckOptions) {
    if (options?.s3 === undefined) throw new TypeError('"s3" is required');
    if (!options.bucket) throw new TypeError('"bucket" is required');
    this.#s3 = options.s3;
    this.bucket = options.bucket;
    this.#prefix = options.prefix ?? AwsDefaults.claimCheckPrefix;
  }

  /** Puts the raw body; resolves the reference once S3 has it. */
  async store(delivery: Delivery, options: { abortSignal?: AbortSignal } = {}): Promise<PayloadRef> {
    const sha256 = createHash('sha256').update(delivery.rawBody).digest('hex');
    const key = claimCheckKey(this.#prefix, dedupeKeyOf(delivery), new Date());
    await this.#s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: delivery.rawBody,
        ContentType: 'application/json',
        ContentLength: delivery.rawBody.byteLength,
        Metadata: { sha256, delivery: delivery.id, event: delivery.name },
      }),
      options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal },
    );
    return { bucket: this.bucket, key, bytes: delivery.rawBody.byteLength, sha256 };
  }
}
