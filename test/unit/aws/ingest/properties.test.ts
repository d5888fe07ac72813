// Property tests of the ingest's Middy chain: no request crashes it, and any signed JSON object goes through
// with its exact bytes.
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ForgeWebhookEvent, forgeWebhook, webhookErrors } from '../../../../lib/aws/index.js';
import { sign } from '../../../../lib/webhooks/index.js';
import { invoke, SECRET } from './events.js';

function chain(published: Buffer[] = []) {
  return middy(async (event: ForgeWebhookEvent) => {
    published.push(event.rawBody);
    return { statusCode: 202, body: JSON.stringify({ delivery: event.webhook.id }) };
  })
    .use(forgeWebhook({ secret: SECRET }))
    .use(httpJsonBodyParser())
    .use(webhookErrors());
}

/** Keys @middy/http-json-body-parser refuses: `__proto__`, and `constructor` holding a `prototype`. */
function guarded(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const [key, inner] of Object.entries(value)) {
    if (key === '__proto__') return true;
    if (
      key === 'constructor' &&
      inner !== null &&
      typeof inner === 'object' &&
      Object.hasOwn(inner, 'prototype')
    )
      return true;
    if (guarded(inner)) return true;
  }
  return false;
}

const headerValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined));

describe('no input crashes the ingest chain', () => {
  it('answers every request with a known status and a JSON error body', async () => {
    const handler = chain();
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.oneof(
            fc.constantFrom(
              'content-type',
              'x-forge-event',
              'x-forge-delivery',
              'x-hub-signature-256',
              'x-hub-signature',
            ),
            fc.string(),
          ),
          headerValue,
        ),
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('POST', 'GET', 'post', ''),
        async (headers, body, isBase64Encoded, v2, method) => {
          const event = v2
            ? { version: '2.0', headers, body, isBase64Encoded, requestContext: { http: { method } } }
            : { headers, multiValueHeaders: {}, body, isBase64Encoded, httpMethod: method };
          const answer = await invoke(handler, event);
          expect([202, 400, 401, 404, 413, 415]).toContain(answer.statusCode);
          if (answer.statusCode !== 202)
            expect(JSON.parse(answer.body).error.code).toEqual(expect.any(String));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('passes a correctly signed JSON object through with its exact bytes, unless the parser guards a key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), async (payload, base64) => {
        const published: Buffer[] = [];
        const body = JSON.stringify(payload);
        const event = {
          version: '2.0',
          headers: {
            'content-type': 'application/json',
            'x-forge-event': 'issues',
            'x-forge-delivery': 'd-1',
            'x-hub-signature-256': sign(SECRET, body),
          },
          body: base64 ? Buffer.from(body).toString('base64') : body,
          isBase64Encoded: base64,
          requestContext: { http: { method: 'POST' } },
        };
        const answer = await invoke(chain(published), event);
        if (guarded(JSON.parse(body))) {
          // @middy/http-json-body-parser refuses such keys (prototype pollution guard): 400, never a 5xx.
          expect(answer.statusCode).toBe(400);
          return;
        }
        expect(answer.statusCode).toBe(202);
        expect(published[0]?.toString('utf8')).toBe(body);
      }),
      { numRuns: 200 },
    );
  });
});
