// The ingest's JSON body parser: the plain-parse fast path gives what @middy/http-json-body-parser gives, and
// every request it does not take is answered by that middleware (415, 422, the forbidden keys).
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { describe, expect, it } from 'vitest';
import { jsonBody } from '../../../../lib/aws/ingest/json-body.js';

type Event = { headers?: Record<string, string | undefined>; body?: unknown; isBase64Encoded?: boolean };

async function parse(middleware: { before?: unknown }, event: Event): Promise<unknown> {
  const request = { event, context: {}, response: undefined, error: undefined, internal: {} };
  try {
    await (middleware.before as (request: unknown) => unknown)(request);
    return { body: request.event.body };
  } catch (error) {
    const { statusCode, message } = error as { statusCode?: number; message: string };
    return { statusCode, message };
  }
}

const json = { 'content-type': 'application/json' };
const cases: [string, Event][] = [
  ['a plain object', { headers: json, body: '{"action":"opened","issue":{"number":1,"labels":[]}}' }],
  [
    'a vendor JSON type',
    { headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' }, body: '{"a":1}' },
  ],
  ['a capitalised header', { headers: { 'Content-Type': 'application/json' }, body: '{"a":[1,2]}' }],
  ['a __proto__ key', { headers: json, body: '{"__proto__":{"polluted":true}}' }],
  ['a constructor with a prototype', { headers: json, body: '{"constructor":{"prototype":{}}}' }],
  ['an escaped __proto__ key', { headers: json, body: '{"\\u005f_proto__":{"polluted":true}}' }],
  ['malformed JSON', { headers: json, body: '{"a":' }],
  ['another content type', { headers: { 'content-type': 'text/plain' }, body: '{"a":1}' }],
  ['no content type', { headers: {}, body: '{"a":1}' }],
  [
    'a base64 body',
    { headers: json, body: Buffer.from('{"a":"b"}').toString('base64'), isBase64Encoded: true },
  ],
  ['no body', { headers: json }],
];

describe('jsonBody', () => {
  it.each(cases)('answers %s exactly as @middy/http-json-body-parser does', async (_, event) => {
    const ours = await parse(jsonBody(), structuredClone(event));
    const theirs = await parse(httpJsonBodyParser(), structuredClone(event));
    expect(ours).toEqual(theirs);
  });

  it('parses a usual body and refuses a forbidden key', async () => {
    expect(await parse(jsonBody(), { headers: json, body: '{"a":{"b":[true,null]}}' })).toEqual({
      body: { a: { b: [true, null] } },
    });
    expect(await parse(jsonBody(), { headers: json, body: '{"__proto__":{}}' })).toMatchObject({
      statusCode: 422,
    });
  });
});
