// local-stack/offline-concurrency.mjs, preloaded into the `osls offline` child: at most so many instances of a
// function run at once; an invocation beyond the limit waits for a free one, first come first served.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { localConcurrency } from '../../../local-stack/local-concurrency.js';
import { limitConcurrency, parseConcurrency } from '../../../local-stack/offline-concurrency-limit.mjs';

const run = promisify(execFile);
const preload = fileURLToPath(new URL('../../../local-stack/offline-concurrency.mjs', import.meta.url));

/** serverless-offline's `Lambda` as its callers see it: `get(key)` gives an instance; set its event, run it. */
function fakeLambda() {
  const running = new Map<string, number>();
  const peak = new Map<string, number>();
  const started: string[] = [];
  const release = new Map<string, () => void>();
  /** Each instance's run, by event name: a callback on it runs right after the limit's own clean-up. */
  const runs = new Map<string, Promise<unknown>>();
  class Lambda {
    get(key: string) {
      let event: unknown;
      let clientContext: unknown;
      return {
        setEvent(value: unknown) {
          event = value;
        },
        setClientContext(value: unknown) {
          clientContext = value;
        },
        runHandler() {
          const name = String((event as { name: string }).name);
          const run = (async () => {
            const now = (running.get(key) ?? 0) + 1;
            running.set(key, now);
            peak.set(key, Math.max(peak.get(key) ?? 0, now));
            started.push(name);
            try {
              await new Promise<void>((resolve) => release.set(name, resolve));
              if (name.startsWith('throw')) throw new Error(`${name} failed`);
              return { name, clientContext };
            } finally {
              running.set(key, (running.get(key) ?? 1) - 1);
            }
          })();
          runs.set(name, run);
          return run;
        },
      };
    }
  }
  /** Lets the invocation of that event end (waits for it to have started). */
  const finish = async (name: string) => {
    while (!release.has(name)) await new Promise((resolve) => setImmediate(resolve));
    release.get(name)?.();
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { Lambda, running, peak, started, runs, finish, settle };
}

const invoke = (
  lambda: { get(key: string): unknown },
  key: string,
  name: string,
  clientContext?: unknown,
) => {
  const instance = lambda.get(key) as {
    setEvent(event: unknown): void;
    setClientContext(context: unknown): void;
    runHandler(): Promise<unknown>;
  };
  if (clientContext !== undefined) instance.setClientContext(clientContext);
  instance.setEvent({ name });
  return instance.runHandler();
};

describe('offline concurrency limit', () => {
  it('runs at most the limit at once, the rest in the order they came, each with its own event', async () => {
    const fake = fakeLambda();
    limitConcurrency(fake.Lambda, { ingest: 2 });
    const lambda = new fake.Lambda();
    const results = ['a', 'b', 'c', 'd', 'e'].map((name) => invoke(lambda, 'ingest', name, { from: name }));
    await fake.settle();
    expect(fake.started).toEqual(['a', 'b']);
    await fake.finish('b');
    await fake.finish('a');
    await fake.finish('c');
    await fake.finish('d');
    await fake.finish('e');
    expect(await Promise.all(results)).toEqual(
      ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, clientContext: { from: name } })),
    );
    expect(fake.started).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(fake.peak.get('ingest')).toBe(2);
    expect(fake.running.get('ingest')).toBe(0);
  });

  it('holds the limit when a new invocation comes the moment a slot is handed over', async () => {
    const fake = fakeLambda();
    limitConcurrency(fake.Lambda, { ingest: 1 });
    const lambda = new fake.Lambda();
    const first = invoke(lambda, 'ingest', 'first');
    const second = invoke(lambda, 'ingest', 'second');
    await fake.settle();
    // The third comes after the first's slot went to the second, before the second has started.
    let third: Promise<unknown> = Promise.resolve();
    void fake.runs.get('first')?.then(() => {
      expect(fake.started).toEqual(['first']);
      third = invoke(lambda, 'ingest', 'third');
    });
    await fake.finish('first');
    await first;
    await fake.finish('second');
    await fake.finish('third');
    await Promise.all([second, third]);
    expect(fake.started).toEqual(['first', 'second', 'third']);
    expect(fake.peak.get('ingest')).toBe(1);
  });

  it('frees the slot of an invocation that failed, and passes its error on', async () => {
    const fake = fakeLambda();
    limitConcurrency(fake.Lambda, { '*': 1 });
    const lambda = new fake.Lambda();
    const failing = invoke(lambda, 'onIssues', 'throw-1');
    const next = invoke(lambda, 'onIssues', 'after');
    await fake.finish('throw-1');
    await expect(failing).rejects.toThrow('throw-1 failed');
    await fake.finish('after');
    expect(await next).toEqual({ name: 'after', clientContext: undefined });
  });

  it('counts each function on its own, `*` for those not named, and leaves a function alone without a limit', async () => {
    const fake = fakeLambda();
    limitConcurrency(fake.Lambda, { ingest: 3, '*': 1 });
    const lambda = new fake.Lambda();
    const calls = [
      ...['i1', 'i2', 'i3', 'i4'].map((name) => invoke(lambda, 'ingest', name)),
      ...['c1', 'c2'].map((name) => invoke(lambda, 'catchAll', name)),
      ...['o1', 'o2'].map((name) => invoke(lambda, 'onIssues', name)),
    ];
    await fake.settle();
    expect(fake.started.sort()).toEqual(['c1', 'i1', 'i2', 'i3', 'o1']);
    for (const name of ['i1', 'c1', 'o1', 'i2', 'i3', 'i4', 'c2', 'o2']) await fake.finish(name);
    await Promise.all(calls);
    expect(Object.fromEntries(fake.peak)).toEqual({ ingest: 3, catchAll: 1, onIssues: 1 });

    const free = fakeLambda();
    limitConcurrency(free.Lambda, { ingest: 1 });
    const unlimited = new free.Lambda();
    const both = [invoke(unlimited, 'catchAll', 'x'), invoke(unlimited, 'catchAll', 'y')];
    await free.settle();
    expect(free.peak.get('catchAll')).toBe(2);
    await free.finish('x');
    await free.finish('y');
    await Promise.all(both);
  });

  it('refuses limits that are not positive integers, and a Lambda class without `get`', () => {
    expect(parseConcurrency('{"ingest":10,"*":4}')).toEqual({ ingest: 10, '*': 4 });
    expect(() => parseConcurrency('ingest=10')).toThrow('must be a JSON object');
    expect(() => parseConcurrency('[1]')).toThrow('must be a JSON object');
    expect(() => parseConcurrency('null')).toThrow('must be a JSON object');
    for (const bad of ['0', '-1', '1.5', '"4"', 'null']) {
      expect(() => parseConcurrency(`{"ingest":${bad}}`)).toThrow('"ingest" must be a positive integer');
    }
    expect(() => limitConcurrency(class {} as never, { ingest: 1 })).toThrow('Lambda#get is not a function');
  });

  it('as a preload, patches the serverless-offline Lambda class osls loads; without the variable it leaves it be', async () => {
    const script =
      "const { default: Lambda } = await import('serverless-offline/lambda'); console.log(Lambda.prototype.get.name);";
    const cwd = fileURLToPath(new URL('../../../', import.meta.url));
    const withLimit = await run(
      process.execPath,
      ['--import', preload, '--input-type=module', '-e', script],
      {
        cwd,
        env: { ...process.env, FORGEBRIDGE_OFFLINE_CONCURRENCY: '{"ingest":10,"*":4}' },
      },
    );
    expect(withLimit.stdout.trim()).toBe('getWithinLimit');
    const { FORGEBRIDGE_OFFLINE_CONCURRENCY: _, ...without } = process.env;
    const plain = await run(process.execPath, ['--import', preload, '--input-type=module', '-e', script], {
      cwd,
      env: without,
    });
    expect(plain.stdout.trim()).toBe('get');
    await expect(
      run(process.execPath, ['--import', preload, '--input-type=module', '-e', script], {
        cwd,
        env: { ...process.env, FORGEBRIDGE_OFFLINE_CONCURRENCY: '{"ingest":0}' },
      }),
    ).rejects.toThrow('"ingest" must be a positive integer');
  });
});

describe('localConcurrency', () => {
  it('gives the ingest 5 per core, an ordered subscriber its shard slots, every other function 2 per core', () => {
    expect(localConcurrency([{ function: 'onPullRequestOrdered', parallelizationFactor: 10 }], 2, 2)).toEqual(
      {
        ingest: 10,
        onPullRequestOrdered: 20,
        '*': 4,
      },
    );
    expect(localConcurrency([], 1, 8)).toEqual({ ingest: 40, '*': 16 });
  });
});
