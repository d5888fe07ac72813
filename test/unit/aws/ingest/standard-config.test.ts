// FORGEBRIDGE_WEBHOOK_SOURCES entries of the Standard Webhooks presets: a per-source timestamp tolerance and
// GitLab's required scheme, checked at the cold start.
import { describe, expect, it } from 'vitest';
import { readIngestConfig } from '../../../../lib/aws/index.js';

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
    expect(
      sources.map(({ name, forge, toleranceSeconds, verifyWith }) => ({
        name,
        forge,
        toleranceSeconds,
        verifyWith,
      })),
    ).toEqual([
      { name: 'payments', forge: 'standard', toleranceSeconds: 120, verifyWith: undefined },
      { name: 'svix', forge: 'svix', toleranceSeconds: undefined, verifyWith: undefined },
      { name: 'gitlab', forge: 'gitlab', toleranceSeconds: 600, verifyWith: 'signature' },
    ]);
    expect(Object.hasOwn(sources[1] as object, 'toleranceSeconds')).toBe(false);
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
