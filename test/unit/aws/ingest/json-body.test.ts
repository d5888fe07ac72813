// The ingest's JSON body parser: the plain-parse fast path gives what @middy/http-json-body-parser gives, and
// every request it does not take is answered by that middleware (415, 422, the forbidden keys).
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { describe, expect, it } from 'vitest';
import { jsonBody, keepParsedBody } from '../../../../lib/aws/ingest/json-body.js';

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

  it("takes the signature check's parse of the same text instead of parsing again", async () => {
    const body = '{"action":"opened","issue":{"number":7}}';
    const event: Event = { headers: json, body };
    const parsed = { action: 'opened', issue: { number: 7 } };
    keepParsedBody(event, body, parsed);
    const result = (await parse(jsonBody(), event)) as { body: unknown };
    expect(result.body).toBe(parsed);
  });

  it('parses again when the kept text is not the body, and never hands on a parse past the protected one', async () => {
    const event: Event = { headers: json, body: '{"a":2}' };
    keepParsedBody(event, '{"a":1}', { a: 1 });
    expect(await parse(jsonBody(), event)).toEqual({ body: { a: 2 } });
    // A body that could hold a forbidden key goes through the protected parse, whatever was kept for it.
    const suspect = '{"__proto__":{"polluted":true}}';
    const refused: Event = { headers: json, body: suspect };
    keepParsedBody(refused, suspect, JSON.parse(suspect));
    expect(await parse(jsonBody(), refused)).toMatchObject({ statusCode: 422 });
    // Base64 bodies too: the parser decodes them itself.
    const encoded = Buffer.from('{"b":1}').toString('base64');
    const base64: Event = { headers: json, body: encoded, isBase64Encoded: true };
    keepParsedBody(base64, encoded, { wrong: true });
    expect(await parse(jsonBody(), base64)).toEqual({ body: { b: 1 } });
  });
});
