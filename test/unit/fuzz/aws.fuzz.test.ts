// fromApiGatewayEvent under any event shape: the only error is its documented TypeError (an event that is not an
// object, a body that is not a string), the request it gives is a plain header map of strings with own
// properties only (a `__proto__` header is a header), and readDelivery takes that request without throwing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ApiGatewayEvent, fromApiGatewayEvent } from '../../../lib/aws/ingest/api-gateway.js';
import { readDelivery } from '../../../lib/webhooks/index.js';
import {
  bounded,
  documentedOrNothing,
  expectPrototypesUnchanged,
  json,
  key,
  prototypeSnapshot,
} from './arbitraries.js';

/** A JSON object with the given fields, each either a plausible value or any JSON value. */
function jsonWith(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([name, plausible]) =>
    fc.option(fc.oneof(plausible, json), { nil: undefined }).map((value) => [name, value] as const),
  );
  return fc.tuple(fc.array(fc.tuple(key, json), { maxLength: 3 }), ...entries).map(([extra, ...known]) => {
    const text = [...extra, ...known]
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`)
      .join(',');
    return JSON.parse(`{${text}}`);
  });
}

const headerMap = fc
  .array(
    fc.tuple(fc.oneof(key, fc.constantFrom('Content-Type', 'X-Forge-Event', 'X-HUB-SIGNATURE-256')), json),
    {
      maxLength: 6,
    },
  )
  .map((entries) =>
    JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  );
const stringHeaders = fc
  .array(fc.tuple(key, fc.string({ maxLength: 20 })), { maxLength: 6 })
  .map((entries) =>
    JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  );
const multiHeaders = fc
  .array(fc.tuple(key, fc.array(fc.oneof(fc.string({ maxLength: 10 }), json), { maxLength: 3 })), {
    maxLength: 4,
  })
  .map((entries) =>
    JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  );

const event: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: json },
  {
    weight: 4,
    arbitrary: jsonWith({
      version: fc.constantFrom('2.0', '1.0'),
      headers: fc.oneof(stringHeaders, headerMap),
      multiValueHeaders: multiHeaders,
      body: fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)),
      isBase64Encoded: fc.boolean(),
      httpMethod: fc.constantFrom('POST', 'GET', ''),
      requestContext: jsonWith({ http: jsonWith({ method: fc.constantFrom('POST', 'PUT') }) }),
    }),
  },
);

describe('fromApiGatewayEvent under any event shape', () => {
  it('throws only its documented TypeError, gives a clean request, and readDelivery takes it', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(event, (input) => {
        let request: ReturnType<typeof fromApiGatewayEvent> | undefined;
        const error = documentedOrNothing(() => {
          request = bounded(() => fromApiGatewayEvent(input as ApiGatewayEvent));
        }, [TypeError]);
        if (error !== undefined) {
          expect(['"event" must be an api gateway event', '"event.body" must be a string']).toContain(
            error.message,
          );
          return;
        }
        if (request === undefined) throw new Error('no request');
        expect(Object.getPrototypeOf(request.headers)).toBe(Object.prototype);
        for (const [name, value] of Object.entries(request.headers)) {
          expect(name).toBe(name.toLowerCase());
          if (Array.isArray(value)) for (const item of value) expect(typeof item).toBe('string');
          else expect(typeof value).toBe('string');
        }
        expect(typeof request.body).toBe('string');
        expect(typeof request.isBase64Encoded).toBe('boolean');
        if (request.method !== undefined) expect(typeof request.method).toBe('string');
        const result = bounded(() =>
          readDelivery({ headers: request?.headers ?? {}, body: request?.body ?? '' }, { secret: 'fuzz' }),
        );
        expect(typeof result.ok).toBe('boolean');
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps a header named `__proto__` as a header, never as the map's prototype", () => {
    fc.assert(
      fc.property(
        fc.constantFrom('__proto__', '__PROTO__'),
        fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 3 }),
        (name, values) => {
          const input = JSON.parse(
            JSON.stringify({ headers: {}, multiValueHeaders: {}, body: '{}', httpMethod: 'POST' }).replace(
              '"multiValueHeaders":{}',
              // A function: a replacement string would read "$$" or "$&" in the values as patterns.
              () => `"multiValueHeaders":{${JSON.stringify(name)}:${JSON.stringify(values)}}`,
            ),
          );
          const request = fromApiGatewayEvent(input);
          expect(Object.getPrototypeOf(request.headers)).toBe(Object.prototype);
          expect(Object.getOwnPropertyDescriptor(request.headers, '__proto__')?.value).toEqual(values);
        },
      ),
      { numRuns: 50 },
    );
  });
});
