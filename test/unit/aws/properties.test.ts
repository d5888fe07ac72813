import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildEventEntry,
  detailTypeOf,
  eventEntrySize,
  fromApiGatewayEvent,
  handleDelivery,
  parseSecretList,
  resolveDelivery,
  routingFieldsOf,
} from '../../../lib/aws/index.js';
import { signedDelivery, TEST_SECRET } from '../../helpers/aws-delivery.js';

const deps = {
  getSecrets: async () => [TEST_SECRET],
  dedupe: { begin: async () => 'new' as const, complete: async () => {}, release: async () => {} },
  publisher: { publish: async () => ({}) },
};

const headerValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined));

describe('no input crashes the ingest', () => {
  it('handleDelivery answers every request with a known status and a JSON body', async () => {
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
        fc.string(),
        fc.boolean(),
        fc.option(fc.constantFrom('POST', 'GET', 'post', ''), { nil: undefined }),
        async (headers, body, isBase64Encoded, method) => {
          const request =
            method === undefined
              ? { headers, body, isBase64Encoded }
              : { method, headers, body, isBase64Encoded };
          const response = await handleDelivery(request, deps);
          expect([202, 400, 401, 404, 413, 415, 503]).toContain(response.statusCode);
          expect(() => JSON.parse(response.body)).not.toThrow();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a correctly signed delivery of any JSON object is accepted and published with its exact bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), async (payload, base64) => {
        const published: Buffer[] = [];
        const { headers, body } = signedDelivery(payload);
        const response = await handleDelivery(
          { headers, body: base64 ? Buffer.from(body).toString('base64') : body, isBase64Encoded: base64 },
          {
            ...deps,
            publisher: { publish: async (delivery) => published.push(Buffer.from(delivery.rawBody)) },
          },
        );
        expect(response.statusCode).toBe(202);
        expect(published[0]?.toString('utf8')).toBe(body);
      }),
      { numRuns: 100 },
    );
  });

  it('fromApiGatewayEvent accepts any header map and body', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.option(fc.string(), { nil: undefined })),
        fc.option(fc.string(), { nil: null }),
        fc.boolean(),
        (headers, body, v2) => {
          const event = v2
            ? {
                version: '2.0',
                headers,
                body,
                isBase64Encoded: false,
                requestContext: { http: { method: 'POST' } },
              }
            : { headers, multiValueHeaders: {}, body, httpMethod: 'POST', isBase64Encoded: false };
          const request = fromApiGatewayEvent(event as never);
          expect(typeof request.body).toBe('string');
          for (const name of Object.keys(request.headers)) expect(name).toBe(name.toLowerCase());
        },
      ),
    );
  });
});

describe('entry invariants', () => {
  it('the entry size is the UTF-8 size of its parts plus 14, for any payload', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.jsonValue(),
        fc.string({ minLength: 1 }),
        (name, payload, id) => {
          const entry = buildEventEntry({ id, name, payload }, { source: 'forge.webhooks' });
          expect(eventEntrySize(entry)).toBe(
            Buffer.byteLength(entry.Source) +
              Buffer.byteLength(entry.DetailType) +
              Buffer.byteLength(entry.Detail) +
              14,
          );
          expect(entry.DetailType.startsWith(name)).toBe(true);
          expect(JSON.parse(entry.Detail).delivery).toBe(id);
        },
      ),
    );
  });

  it('routing fields are a subset of the payload, and the detail type agrees with them', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (payload) => {
        const fields = routingFieldsOf(payload);
        expect(JSON.stringify(fields).length).toBeLessThanOrEqual(JSON.stringify(payload ?? null).length + 2);
        expect(detailTypeOf('e', fields)).toBe(detailTypeOf('e', payload));
      }),
    );
  });

  it('parseSecretList never yields an empty or padded secret', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        for (const secret of parseSecretList(value)) {
          expect(secret).not.toBe('');
          expect(secret).toBe(secret.trim());
          expect(secret).not.toMatch(/[,\r\n]/);
        }
      }),
    );
  });

  it('resolveDelivery rejects any malformed detail with a ResolveDeliveryError, never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (detail) => {
        const outcome = await resolveDelivery({ detail } as never).then(
          (resolved) => ({ ok: true as const, resolved }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (outcome.ok) expect(typeof outcome.resolved.id).toBe('string');
        else expect(outcome.error).toMatchObject({ name: 'ResolveDeliveryError' });
      }),
    );
  });
});
