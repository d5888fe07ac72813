// Cross-verification of our Standard Webhooks scheme with the real `standardwebhooks` and `svix` packages, over
// a property-based corpus: any bytes, any id, multi-byte UTF-8, several secrets, several signatures in one
// header, and timestamps around the 5-minute tolerance (a margin of 2 s around each edge keeps the two clocks,
// read a moment apart, on the same side of it).
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders, type Forge, readDelivery } from '../../../lib/webhooks/index.js';

const TOLERANCE = 300;
const now = () => Math.floor(Date.now() / 1000);

const key = fc.uint8Array({ minLength: 1, maxLength: 64 });
const secretOf = (bytes: Uint8Array) => `whsec_${Buffer.from(bytes).toString('base64')}`;
const secrets = fc.array(key, { minLength: 1, maxLength: 4 }).map((keys) => keys.map(secretOf));
const id = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });
const word = fc.stringMatching(/^[a-z_]{1,12}$/);
const body = fc
  .record({ event: word, action: word, data: fc.string({ unit: 'binary', maxLength: 200 }), n: fc.integer() })
  .map(({ event, action, data, n }) => JSON.stringify({ type: `${event}.${action}`, data, n }));
// Offsets from now, in seconds, clear of both tolerance edges by more than 2 s.
const offset = fc
  .integer({ min: -TOLERANCE - 120, max: TOLERANCE + 120 })
  .filter((seconds) => Math.abs(Math.abs(seconds) - TOLERANCE) > 2);
const bogus = fc.oneof(
  fc
    .uint8Array({ minLength: 32, maxLength: 32 })
    .map((bytes) => `v1,${Buffer.from(bytes).toString('base64')}`),
  fc
    .uint8Array({ minLength: 32, maxLength: 32 })
    .map((bytes) => `v2,${Buffer.from(bytes).toString('base64')}`),
  fc.stringMatching(/^v1,[A-Za-z0-9+/=]{0,50}$/),
);

function accepts(verify: () => unknown): boolean {
  try {
    verify();
    return true;
  } catch {
    return false;
  }
}

function headersFor(prefix: 'webhook' | 'svix', msgId: string, timestamp: number, signature: string) {
  return {
    'content-type': 'application/json',
    [`${prefix}-id`]: msgId,
    [`${prefix}-timestamp`]: String(timestamp),
    [`${prefix}-signature`]: signature,
  };
}

describe('signatures made by the standardwebhooks package verify with ours', () => {
  it('for any id, body, secret list, signer and extra signatures in the header', () => {
    fc.assert(
      fc.property(
        secrets,
        fc.nat(),
        id,
        body,
        fc.array(bogus, { maxLength: 3 }),
        (list, pick, msgId, payload, extra) => {
          const signer = list[pick % list.length] as string;
          const timestamp = now();
          const signature = new StandardWebhook(signer).sign(msgId, new Date(timestamp * 1000), payload);
          const header = [...extra, signature].sort().join(' ');
          const result = readDelivery(
            { headers: headersFor('webhook', msgId, timestamp, header), body: payload },
            { secret: list, forge: 'standard' },
          );
          expect(result.ok).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('signatures made by ours verify with the standardwebhooks and svix packages', () => {
  it('for any id, body and secret', () => {
    fc.assert(
      fc.property(key, id, body, (bytes, msgId, payload) => {
        const secret = secretOf(bytes);
        const timestamp = now();
        const headers = deliveryHeaders(secret, payload, {
          forge: 'standard',
          name: 'x',
          id: msgId,
          timestamp,
        });
        expect(accepts(() => new StandardWebhook(secret).verify(payload, headers))).toBe(true);
        const svix = deliveryHeaders(secret, payload, { forge: 'svix', name: 'x', id: msgId, timestamp });
        expect(accepts(() => new SvixWebhook(secret).verify(payload, svix))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('over any bytes: ours verifies its own, and the packages agree wherever the bytes are UTF-8', () => {
    fc.assert(
      fc.property(
        key,
        id,
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.nat(),
        (bytes, msgId, raw, flip) => {
          const secret = secretOf(bytes);
          const payload = Buffer.from(raw);
          const headers = deliveryHeaders(secret, payload, { forge: 'standard', name: 'x', id: msgId });
          // Verified: what follows is the JSON check (400) or success, never 401.
          const ours = readDelivery({ headers, body: payload }, { secret, forge: 'standard' });
          expect(ours.ok || ours.status !== 401).toBe(true);
          const changed = Buffer.from(payload);
          const at = flip % changed.length;
          changed[at] = (changed[at] as number) ^ 0x01;
          expect(readDelivery({ headers, body: changed }, { secret, forge: 'standard' })).toMatchObject({
            status: 401,
          });
          if (Buffer.from(payload.toString('utf8'), 'utf8').equals(payload)) {
            expect(
              accepts(() => new StandardWebhook(secret).verify(payload, headers, { jsonParse: false })),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

type Mutation = 'none' | 'body' | 'id' | 'secret' | 'signature' | 'version';

describe('ours, standardwebhooks and svix agree on every case', () => {
  it('good, tampered, wrong-secret, stale, future and malformed deliveries', () => {
    const mutation = fc.constantFrom<Mutation>('none', 'body', 'id', 'secret', 'signature', 'version');
    fc.assert(
      fc.property(
        secrets,
        key,
        id,
        body,
        offset,
        mutation,
        fc.constantFrom<Forge>('standard', 'svix'),
        (list, otherKey, msgId, payload, seconds, change, forge) => {
          const signer = change === 'secret' ? secretOf(otherKey) : (list[0] as string);
          const timestamp = now() + seconds;
          let signature = new StandardWebhook(signer).sign(msgId, new Date(timestamp * 1000), payload);
          if (change === 'signature') signature = `v1,${Buffer.alloc(32, 7).toString('base64')}`;
          if (change === 'version') signature = signature.replace('v1,', 'v1a,');
          const sentId = change === 'id' ? `${msgId}x` : msgId;
          const sentBody = change === 'body' ? payload.replace('"n":', '"m":') : payload;
          const prefix = forge === 'svix' ? 'svix' : 'webhook';
          const headers = headersFor(prefix, sentId, timestamp, signature);

          const ours = readDelivery({ headers, body: sentBody }, { secret: list, forge });
          const theirs = list.some((secret) =>
            forge === 'svix'
              ? accepts(() => new SvixWebhook(secret).verify(sentBody, headers))
              : accepts(() => new StandardWebhook(secret).verify(sentBody, headers)),
          );
          expect(ours.ok).toBe(theirs);
          const inTolerance = Math.abs(seconds) <= TOLERANCE;
          // The other key may equal one of the list: then it is no wrong secret.
          const wrongSecret = change === 'secret' && !list.includes(signer);
          expect(ours.ok).toBe(inTolerance && (change === 'none' || (change === 'secret' && !wrongSecret)));
          if (!ours.ok) {
            expect(ours.status).toBe(401);
            const expected = !inTolerance
              ? seconds < 0
                ? 'stale_timestamp'
                : 'future_timestamp'
              : 'invalid_signature';
            expect(ours.code).toBe(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
