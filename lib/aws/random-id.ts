import { randomBytes } from 'node:crypto';

/** Bytes drawn from the system's random source at a time: one call serves a few hundred ids. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `bytes` fresh random bytes as base64url, like `randomBytes(bytes).toString('base64url')` but drawn from a
 * pool that is refilled when used up, as Node's `randomUUID` does: a synchronous `randomBytes` call costs a few
 * microseconds, and the warm ingest takes two ids per delivery. Every byte is used once.
 */
export function randomId(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_BYTES) {
    throw new RangeError(`"bytes" must be an integer from 1 to ${POOL_BYTES}`);
  }
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return id;
}
