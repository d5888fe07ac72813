// FORGEBRIDGE_WEBHOOK_SOURCES entries of the Standard Webhooks presets: a per-source timestamp tolerance and
// GitLab's required scheme, checked at the cold start.
import { describe, expect, it } from 'vitest';
import { readIngestConfig } from '../../../../lib/aws/stage/function-config.js';

const env = (sources: unknown[]) => ({
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(sources),
});

describe('readIngestConfig(): Standard Webhooks sources', () => {
  it('reads toleranceSeconds and verifyWith, and leaves them out when not set', () => {
    const { sources } = readIngestConfig(
      env([
        { name: 'payments', forge: 'standard', toleranceSeconds: 120 },
        { name: 'svix', forge: 'svix' },
        { name: 'gitlab', forge: 'gitlab', verifyWith: 'signature', toleranceSeconds: 600 },
      ]),
    );
    // Each source's delivery options, as readDelivery takes them (the deployment's allowSha1 in them).
    expect(sources.map(({ name, deliveryOptions }) => ({ name, deliveryOptions }))).toEqual([
      { name: 'payments', deliveryOptions: { allowSha1: true, forge: 'standard', toleranceSeconds: 120 } },
      { name: 'svix', deliveryOptions: { allowSha1: true, forge: 'svix' } },
      {
        name: 'gitlab',
        deliveryOptions: { allowSha1: true, forge: 'gitlab', verifyWith: 'signature', toleranceSeconds: 600 },
      },
    ]);
    expect(Object.hasOwn(sources[1]?.deliveryOptions as object, 'toleranceSeconds')).toBe(false);
    expect(sources.map((source) => source.forge)).toEqual(['standard', 'svix', 'gitlab']);
  });

  it.each([
    [
      { name: 'a', forge: 'standard', toleranceSeconds: 0 },
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].toleranceSeconds" must be a positive whole number of seconds',
    ],
    [{ name: 'a', forge: 'standard', toleranceSeconds: '300' }, 'must be a positive whole number of seconds'],
    [
      { name: 'a', forge: 'github', toleranceSeconds: 300 },
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].toleranceSeconds" applies to a signed-timestamp forge only',
    ],
    [
      { name: 'a', forge: 'standard', verifyWith: 'token' },
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].verifyWith" applies to forge "gitlab" only',
    ],
    [
      { name: 'a', forge: 'gitlab', verifyWith: 'both' },
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].verifyWith" must be "signature" or "token"',
    ],
  ])('refuses %j naming the field', (source, message) => {
    expect(() => readIngestConfig(env([source]))).toThrow(message);
  });
});

describe('readIngestConfig(): a dedupe record lifetime per source', () => {
  it('collects each source own dedupeTtlSeconds for the dedupe, and none when no source sets one', () => {
    const config = readIngestConfig(
      env([
        { name: 'github', forge: 'github', dedupeTtlSeconds: 86_400 },
        { name: 'payments', forge: 'standard' },
      ]),
    );
    expect(config.dedupe.ttlSecondsBySource).toEqual({ github: 86_400 });
    expect(config.sources[0]?.dedupeTtlSeconds).toBe(86_400);
    expect(readIngestConfig(env([{ name: 'a' }])).dedupe).not.toHaveProperty('ttlSecondsBySource');
    expect(() => readIngestConfig(env([{ name: 'a', dedupeTtlSeconds: -1 }]))).toThrow(
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].dedupeTtlSeconds" must be a positive whole number of seconds',
    );
  });
});

describe('readIngestConfig(): a timestamp tolerance shorter than the dedupe lifetime', () => {
  const refusal = (name: string, tolerance: number, ttl: number) =>
    `${name} accepts a signed timestamp for ${tolerance} s but keeps its dedupe record ${ttl} s: the timestamp tolerance ("toleranceSeconds") must be shorter than the dedupe lifetime ("dedupeTtlSeconds" or "FORGEBRIDGE_DEDUPE_TTL_SECONDS"), or a replay is accepted once the record expires`;

  it('refuses a tolerance of a week with a dedupe record of a minute, and one equal to it', () => {
    const week = 7 * 24 * 60 * 60;
    expect(() =>
      readIngestConfig(
        env([{ name: 'pay', forge: 'standard', toleranceSeconds: week, dedupeTtlSeconds: 60 }]),
      ),
    ).toThrow(new TypeError(refusal('"FORGEBRIDGE_WEBHOOK_SOURCES[0]"', week, 60)));
    expect(() =>
      readIngestConfig(env([{ name: 'a' }, { name: 'svix', forge: 'svix', dedupeTtlSeconds: 300 }])),
    ).toThrow(new TypeError(refusal('"FORGEBRIDGE_WEBHOOK_SOURCES[1]"', 300, 300)));
    // The deployment's lifetime applies to a source without its own; a single source from FORGEBRIDGE_FORGE too.
    expect(() =>
      readIngestConfig({
        ...env([{ name: 'pay', forge: 'standard' }]),
        FORGEBRIDGE_DEDUPE_TTL_SECONDS: '120',
      }),
    ).toThrow(new TypeError(refusal('"FORGEBRIDGE_WEBHOOK_SOURCES[0]"', 300, 120)));
    expect(() =>
      readIngestConfig({
        FORGEBRIDGE_BUS_NAME: 'bus',
        FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
        FORGEBRIDGE_FORGE: 'standard',
        FORGEBRIDGE_DEDUPE_TTL_SECONDS: '60',
      }),
    ).toThrow(new TypeError(refusal('"FORGEBRIDGE_FORGE"', 300, 60)));
  });

  it('takes a tolerance shorter than the lifetime, and a lifetime of any length where no timestamp is signed', () => {
    const config = readIngestConfig(
      env([
        { name: 'pay', forge: 'standard', toleranceSeconds: 600, dedupeTtlSeconds: 601 },
        { name: 'github', forge: 'github', dedupeTtlSeconds: 1 },
        { name: 'gl', forge: 'gitlab', verifyWith: 'token', dedupeTtlSeconds: 1 },
      ]),
    );
    expect(config.sources.map((source) => source.name)).toEqual(['pay', 'github', 'gl']);
  });
});
