// readDelivery under any headers and body: it never throws for what a sender controls (its TSDoc: a TypeError
// only for invalid options), answers only with its documented statuses and codes, never pollutes a prototype,
// and hands over a payload that is exactly the signed JSON object with nothing inherited.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, readDelivery, sign } from '../../../lib/webhooks/index.js';
import {
  bounded,
  expectPrototypesUnchanged,
  json,
  jsonObject,
  key,
  prototypeSnapshot,
} from './arbitraries.js';

const SECRET = 'fuzz-webhook-secret';
const OPTIONS = { secret: SECRET };
const STATUSES = new Set([400, 401, 404, 413, 415]);
const CODES = new Set<string>(Object.values(ErrorCodes));
const HEADER_NAMES = [
  'content-type',
  'x-forge-event',
  'x-forge-delivery',
  'x-hub-signature-256',
  'x-hub-signature',
];

/** A header name: a delivery header in any case, a prototype key, or anything. */
const headerName = fc.oneof(
  fc
    .tuple(fc.constantFrom(...HEADER_NAMES), fc.boolean())
    .map(([name, upper]) => (upper ? name.toUpperCase() : name)),
  key,
);
/** What a header map can hold: a string, a repeated header, nothing, and (from a JSON event) anything. */
const headerValue = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'push',
    'sha256=00',
    '',
  ),
  fc.string({ maxLength: 40 }),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
  fc.constant(undefined),
  json,
);
const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }).map((entries) => {
  const map: Record<string, unknown> = {};
  for (const [name, value] of entries) {
    Object.defineProperty(map, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return map;
});
const body = fc.oneof(
  fc.string({ maxLength: 200 }),
  json.map((value) => JSON.stringify(value) ?? ''),
  fc.uint8Array({ maxLength: 200 }),
);

function checkResult(result: ReturnType<typeof readDelivery>): void {
  if (result.ok) {
    expect(typeof result.id).toBe('string');
    expect(typeof result.name).toBe('string');
    return;
  }
  expect(STATUSES.has(result.status)).toBe(true);
  expect(CODES.has(result.code)).toBe(true);
  expect(typeof result.message).toBe('string');
  expect(result.message).not.toContain(SECRET);
}

describe('readDelivery under any headers and body', () => {
  it('never throws, answers with a documented status and code, and pollutes nothing', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(headers, body, (map, raw) => {
        const result = bounded(() => readDelivery({ headers: map as never, body: raw }, OPTIONS));
        checkResult(result);
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 500 },
    );
  });

  it('gives a signed JSON object back as an own-property payload, `__proto__` and `constructor` keys included', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(
        jsonObject,
        fc.constantFrom('issues', 'push', '__proto__', 'constructor'),
        (payload, event) => {
          const raw = JSON.stringify(payload);
          const result = bounded(() =>
            readDelivery(
              {
                method: 'POST',
                headers: {
                  'content-type': 'application/json',
                  'x-forge-event': event,
                  'x-forge-delivery': 'fuzz-1',
                  'x-hub-signature-256': sign(SECRET, raw),
                },
                body: raw,
              },
              OPTIONS,
            ),
          );
          expect(result.ok).toBe(true);
          if (!result.ok) return;
          expect(result.name).toBe(event);
          expect(Object.getPrototypeOf(result.payload)).toBe(Object.prototype);
          const parsed = result.payload as Record<string, unknown>;
          expect(Object.keys(parsed)).toEqual(Object.keys(payload));
          for (const name of Object.keys(payload)) expect(Object.hasOwn(parsed, name)).toBe(true);
          expect(JSON.stringify(parsed)).toBe(raw);
          expectPrototypesUnchanged(before);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads no header from a header map's prototype", () => {
    fc.assert(
      fc.property(fc.constantFrom(...HEADER_NAMES), (name) => {
        const inherited: Record<string, string> = {
          'content-type': 'application/json',
          'x-forge-event': 'issues',
          'x-forge-delivery': 'fuzz-2',
          'x-hub-signature-256': sign(SECRET, '{}'),
        };
        const own = { ...inherited };
        delete own[name];
        const map = Object.assign(Object.create(inherited) as Record<string, string>, own);
        const result = readDelivery({ headers: map, body: '{}' }, OPTIONS);
        // The one header left out of the own properties is missing, whatever the prototype holds.
        if (name === 'x-hub-signature') expect(result.ok).toBe(true);
        else expect(result).toMatchObject({ ok: false });
      }),
      { numRuns: 20 },
    );
  });

  it('stays fast on long header values and bodies', () => {
    const long = 'A'.repeat(1024 * 1024);
    const map = {
      'content-type': `application/json;${long}`,
      'x-forge-event': long,
      'x-forge-delivery': long,
      'x-hub-signature-256': `sha256=${long}`,
    };
    const result = bounded(() => readDelivery({ headers: map, body: `{"a":"${long}"}` }, OPTIONS), 1_000);
    expect(result).toMatchObject({ ok: false, status: 401 });
  });
});
