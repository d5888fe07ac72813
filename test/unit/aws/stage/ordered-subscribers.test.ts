// FORGEBRIDGE_ORDERED_SUBSCRIBERS and the stream settings: every range Lambda and Kinesis enforce and a local
// stand-in does not (kinesalite and the stack's poller take any value), refused at package time.
import { describe, expect, it } from 'vitest';
import { readOrderedSubscribers, streamOrderBy } from '../../../../lib/aws/stage/ordered-subscribers.js';
import { readOrderedStreamSettings, stageDefaults } from '../../../../lib/aws/stage-config.js';
import { readProjectYaml } from '../../../helpers/project-yaml.js';

const one = (fields: Record<string, unknown>) =>
  readOrderedSubscribers({
    FORGEBRIDGE_ORDERED_SUBSCRIBERS: JSON.stringify([
      { function: 'onPr', handler: 'functions/ordered/handler.handler', ...fields },
    ]),
  });

describe('readOrderedSubscribers', () => {
  it('is empty without the setting, and fills in the defaults', () => {
    expect(readOrderedSubscribers({})).toEqual([]);
    expect(one({})).toEqual([
      {
        function: 'onPr',
        handler: 'functions/ordered/handler.handler',
        pattern: {},
        orderBy: 'resource',
        parallelizationFactor: 10,
        batchSize: 10,
        maximumRetryAttempts: 3,
        maximumRecordAgeInSeconds: -1,
      },
    ]);
    expect(one({ orderBy: '$.data.customer.id' })[0]?.orderBy).toEqual({ path: '$.data.customer.id' });
  });

  it.each([
    [{ parallelizationFactor: 0 }, '"parallelizationFactor" must be a whole number from 1 to 10'],
    [{ parallelizationFactor: 11 }, '"parallelizationFactor" must be a whole number from 1 to 10'],
    [{ batchSize: 0 }, '"batchSize" must be a whole number from 1 to 10000'],
    [{ batchSize: 10_001 }, '"batchSize" must be a whole number from 1 to 10000'],
    [{ maximumRetryAttempts: -1 }, '"maximumRetryAttempts" must be a whole number from 0 to 10000'],
    [{ maximumRetryAttempts: 10_001 }, '"maximumRetryAttempts" must be a whole number from 0 to 10000'],
    [
      { maximumRecordAgeInSeconds: 59 },
      '"maximumRecordAgeInSeconds" must be a whole number from 60 to 604800 or -1',
    ],
    [{ maximumRecordAgeInSeconds: 604_801 }, 'from 60 to 604800 or -1'],
    [{ parallelizationFactor: 2.5 }, '"parallelizationFactor" must be a whole number'],
    [{ orderBy: 'branch' }, '"orderBy" must be "resource", "repository" or a JSONPath'],
    [{ pattern: ['pull_request'] }, '"pattern" must be an EventBridge pattern'],
    [{ handler: 'handler' }, '"handler" must be a handler path'],
    [{ function: 'ingest' }, '"ingest" is one of the stack\'s own functions'],
    [{ function: 'on-pr' }, '"function" must be a serverless.yml function key'],
    [{ function: `o${'n'.repeat(38)}` }, 'at most 38'],
    [{ retries: 3 }, '"retries" is not a field'],
  ])('refuses %j', (fields, message) => {
    expect(() => one(fields)).toThrow(message);
  });

  it('refuses a list that is not one, and a function listed twice', () => {
    expect(() => readOrderedSubscribers({ FORGEBRIDGE_ORDERED_SUBSCRIBERS: '{"function":"a"}' })).toThrow(
      '"FORGEBRIDGE_ORDERED_SUBSCRIBERS" must be a list',
    );
    expect(() => readOrderedSubscribers({ FORGEBRIDGE_ORDERED_SUBSCRIBERS: '[' })).toThrow(
      'must be a JSON list',
    );
    const entry = { function: 'onPr', handler: 'functions/ordered/handler.handler' };
    expect(() =>
      readOrderedSubscribers({ FORGEBRIDGE_ORDERED_SUBSCRIBERS: JSON.stringify([entry, entry]) }),
    ).toThrow('"onPr" is listed twice');
  });
});

describe("serverless.yml's own functions", () => {
  /** The keys of serverless.yml's `functions`, but the ordered subscribers' (they come from the setting). */
  function stackFunctions(): string[] {
    const functions = readProjectYaml('serverless.yml').functions as Record<string, unknown>;
    return Object.entries(functions)
      .filter(([, value]) => !(typeof value === 'string' && value.startsWith('${file(infra/ordered.cjs):')))
      .map(([key]) => key);
  }

  it("are each refused as an ordered subscriber's key, so that one cannot replace them", () => {
    const keys = stackFunctions();
    expect(keys).toContain('ingest');
    expect(keys.length).toBeGreaterThan(5);
    for (const key of keys) {
      expect(() => one({ function: key }), key).toThrow(`"${key}" is one of the stack's own functions`);
    }
  });
});

describe('streamOrderBy: one stream, partitioned by the coarsest grouping asked for', () => {
  const by = (...orderBys: string[]) =>
    streamOrderBy(
      readOrderedSubscribers({
        FORGEBRIDGE_ORDERED_SUBSCRIBERS: JSON.stringify(
          orderBys.map((orderBy, i) => ({ function: `f${i}`, handler: 'a/b.handler', orderBy })),
        ),
      }),
    );
  it('is the resource unless a subscriber asks for the repository; a path only with the same path', () => {
    expect(by()).toBe('resource');
    expect(by('resource', 'resource')).toBe('resource');
    expect(by('resource', 'repository')).toBe('repository');
    expect(by('$.data.id', '$.data.id')).toEqual({ path: '$.data.id' });
    expect(() => by('$.data.id', 'resource')).toThrow('give them all the same "orderBy"');
    expect(() => by('$.data.id', '$.data.other')).toThrow('give them all the same "orderBy"');
  });
});

describe('readOrderedStreamSettings', () => {
  const settings = (overrides: Record<string, string>) => ({ ...stageDefaults('ci'), ...overrides });
  it('takes 1 to 500 shards, 24 to 8760 hours, and a Kinesis stream name or none', () => {
    expect(readOrderedStreamSettings(settings({}))).toMatchObject({
      subscribers: [],
      shards: 1,
      retentionHours: 24,
    });
    for (const [name, value, message] of [
      ['FORGEBRIDGE_STREAM_SHARDS', '0', '"FORGEBRIDGE_STREAM_SHARDS" must be a whole number from 1 to 500'],
      ['FORGEBRIDGE_STREAM_SHARDS', '501', 'from 1 to 500'],
      [
        'FORGEBRIDGE_STREAM_RETENTION_HOURS',
        '23',
        '"FORGEBRIDGE_STREAM_RETENTION_HOURS" must be a whole number from 24 to 8760',
      ],
      ['FORGEBRIDGE_STREAM_RETENTION_HOURS', '8761', 'from 24 to 8760'],
      ['FORGEBRIDGE_STREAM_NAME', 'has space', '"FORGEBRIDGE_STREAM_NAME" must be 1 to 128'],
      ['FORGEBRIDGE_STREAM_NAME', 'x'.repeat(129), '"FORGEBRIDGE_STREAM_NAME" must be 1 to 128'],
    ] as const) {
      expect(() => readOrderedStreamSettings(settings({ [name]: value })), `${name}=${value}`).toThrow(
        message,
      );
    }
    expect(readOrderedStreamSettings(settings({ FORGEBRIDGE_STREAM_NAME: 'my.stream_1-a' })).shards).toBe(1);
  });
});
