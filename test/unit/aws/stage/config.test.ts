import { describe, expect, it } from 'vitest';
import { readDeliveryLogConfig, readIngestConfig } from '../../../../lib/aws/stage/function-config.js';
import { readDelivery } from '../../../../lib/webhooks/index.js';

const required = { FORGEBRIDGE_BUS_NAME: 'bus', FORGEBRIDGE_DEDUPE_TABLE: 'dedupe' };

describe('readIngestConfig()', () => {
  it('reads only the two required variables, leaving every other default to the library', () => {
    expect(readIngestConfig(required)).toEqual({
      publisher: {
        eventBusName: 'bus',
        source: undefined,
        maxEntryBytes: undefined,
        bucket: undefined,
        budgetMs: undefined,
      },
      dedupe: { tableName: 'dedupe', ttlSeconds: undefined, lockSeconds: undefined },
      sources: [
        {
          name: 'default',
          forge: 'generic',
          secretParameter: undefined,
          secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET',
          deliveryOptions: { allowSha1: true, forge: 'generic' },
        },
      ],
      offline: false,
      requestTimeoutMs: 2_000,
      deliveryLog: undefined,
    });
  });

  it('reads every variable serverless.yml sets for the ingest', () => {
    const config = readIngestConfig({
      ...required,
      FORGEBRIDGE_SOURCE: 'forge.test',
      FORGEBRIDGE_MAX_ENTRY_BYTES: '1024',
      FORGEBRIDGE_BUCKET: 'claims',
      FORGEBRIDGE_PUBLISH_BUDGET_MS: '12000',
      FORGEBRIDGE_DEDUPE_TTL_SECONDS: '60',
      FORGEBRIDGE_DEDUPE_LOCK_SECONDS: '29',
      FORGEBRIDGE_EVENT_HEADER: 'X-GitHub-Event',
      FORGEBRIDGE_DELIVERY_HEADER: 'X-GitHub-Delivery',
      FORGEBRIDGE_ALLOW_SHA1: 'false',
      FORGEBRIDGE_MAX_BODY_BYTES: '5000',
      FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/forgebridge/dev/webhook-secret',
      FORGEBRIDGE_AWS_REQUEST_TIMEOUT_MS: '10000',
    });
    expect(config).toEqual({
      publisher: {
        eventBusName: 'bus',
        source: 'forge.test',
        maxEntryBytes: 1024,
        bucket: 'claims',
        budgetMs: 12_000,
      },
      dedupe: { tableName: 'dedupe', ttlSeconds: 60, lockSeconds: 29 },
      // The one source's delivery options: readDelivery's, the deployment-wide settings in them.
      sources: [
        {
          name: 'default',
          forge: 'generic',
          secretParameter: '/forgebridge/dev/webhook-secret',
          secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET',
          deliveryOptions: {
            forge: 'generic',
            headers: { event: 'x-github-event', delivery: 'x-github-delivery' },
            allowSha1: false,
            maxBodyBytes: 5000,
          },
        },
      ],
      offline: false,
      requestTimeoutMs: 10_000,
    });
  });

  it("gives each source readDelivery's options as they are: the secret is all the ingest adds", () => {
    const { sources } = readIngestConfig({
      ...required,
      FORGEBRIDGE_ALLOW_SHA1: 'false',
      FORGEBRIDGE_MAX_BODY_BYTES: '4096',
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
        { name: 'gh', forge: 'github', eventHeader: 'X-Event', deliveryHeader: 'X-Id' },
        { name: 'gl', forge: 'gitlab', verifyWith: 'signature', toleranceSeconds: 60 },
        { name: 'pay', forge: 'standard', toleranceSeconds: 120 },
      ]),
    });
    for (const source of sources) {
      // readDelivery refuses an unknown or invalid option with a TypeError before it reads the request.
      const result = readDelivery(
        { method: 'GET', headers: {}, body: '' },
        { ...source.deliveryOptions, secret: 's' },
      );
      expect(result, source.name).toMatchObject({ ok: false, status: 404 });
      expect(source.deliveryOptions).toMatchObject({
        allowSha1: false,
        maxBodyBytes: 4096,
        forge: source.forge,
      });
    }
    expect(sources[0]?.deliveryOptions.headers).toEqual({ event: 'x-event', delivery: 'x-id' });
  });

  it('throws a TypeError naming a missing variable or a number that is not positive', () => {
    expect(() => readIngestConfig({ FORGEBRIDGE_BUS_NAME: 'bus' })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_DEDUPE_TABLE" is required'),
    );
    expect(() => readIngestConfig({ ...required, FORGEBRIDGE_DEDUPE_TTL_SECONDS: 'week' })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_DEDUPE_TTL_SECONDS" must be a positive number'),
    );
  });
});

describe('readDeliveryLogConfig()', () => {
  it('is off without FORGEBRIDGE_DELIVERIES_TABLE (or with it empty)', () => {
    expect(readDeliveryLogConfig({})).toBeUndefined();
    expect(readDeliveryLogConfig({ FORGEBRIDGE_DELIVERIES_TABLE: '' })).toBeUndefined();
  });

  it('reads the table, the TTL in days as seconds and the payload switch (off by default)', () => {
    expect(readDeliveryLogConfig({ FORGEBRIDGE_DELIVERIES_TABLE: 'log' })).toEqual({
      tableName: 'log',
      ttlSeconds: undefined,
      storePayload: false,
    });
    expect(
      readIngestConfig({
        ...required,
        FORGEBRIDGE_DELIVERIES_TABLE: 'log',
        FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '3',
        FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'true',
      }).deliveryLog,
    ).toEqual({ tableName: 'log', ttlSeconds: 3 * 86_400, storePayload: true });
    expect(
      readDeliveryLogConfig({
        FORGEBRIDGE_DELIVERIES_TABLE: 'log',
        FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'false',
      })?.storePayload,
    ).toBe(false);
  });

  it('names the variable when a value is invalid', () => {
    expect(() =>
      readDeliveryLogConfig({ FORGEBRIDGE_DELIVERIES_TABLE: 'log', FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: 'yes' }),
    ).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_DELIVERY_LOG_PAYLOAD" must be "true" or "false"'),
    );
    expect(() =>
      readDeliveryLogConfig({ FORGEBRIDGE_DELIVERIES_TABLE: 'log', FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS: '0' }),
    ).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_DELIVERY_LOG_TTL_DAYS" must be a positive number'),
    );
  });
});
