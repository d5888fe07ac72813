import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveDelivery } from '../../../lib/aws/index.js';
import { fromApiGatewayEvent } from '../../../lib/aws/ingest/api-gateway.js';
import {
  buildEventEntry,
  detailTypeOf,
  eventEntrySize,
  routingFieldsOf,
} from '../../../lib/aws/publish/event-entry.js';
import { parseSecretList } from '../../../lib/aws/secrets.js';

describe('no input crashes the ingest', () => {
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
