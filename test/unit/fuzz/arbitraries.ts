// Shared pieces of the fuzz properties: keys that reach for a prototype, a JSON value arbitrary built on them,
// a snapshot of the built-in prototypes, and the check that a thrown error is one the module documents.
import fc from 'fast-check';
import { expect } from 'vitest';

/** Keys that pollute or shadow through a careless `target[key] = value` or a merge. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Prototype keys, their spellings that snake-case or lowercase into them, other inherited names, and any string. */
export const key: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '__PROTO__',
      ' __proto__ ',
      'Constructor',
      'CONSTRUCTOR',
      'Prototype',
      'constructor.prototype',
      '__proto__.polluted',
      'hasOwnProperty',
      'toString',
      'valueOf',
      '__defineGetter__',
      'polluted',
    ),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
);

/** Any JSON value whose objects use {@link key} (own properties, `__proto__` included, as JSON.parse makes). */
export const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 16 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc
      .array(fc.tuple(key, tie('value')), { maxLength: 5 })
      .map((entries) =>
        JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
      ),
  ),
})).value;

/** A JSON object (never an array or a scalar) built like {@link json}. */
export const jsonObject: fc.Arbitrary<Record<string, unknown>> = fc
  .array(fc.tuple(key, json), { maxLength: 6 })
  .map((entries) =>
    JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  );

const BUILT_INS = [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype];

/** Every own property (names, symbols and descriptors) of the built-in prototypes, to compare after a run. */
export function prototypeSnapshot(): unknown[] {
  return BUILT_INS.map((proto) =>
    Reflect.ownKeys(proto).map((name) => [String(name), Object.getOwnPropertyDescriptor(proto, name)]),
  );
}

/** Fails unless nothing was added to or changed on a built-in prototype, and `{}` inherits no surprise. */
export function expectPrototypesUnchanged(before: unknown[]): void {
  expect(prototypeSnapshot()).toEqual(before);
  const probe: Record<string, unknown> = {};
  for (const name of ['polluted', 'isAdmin', 'x-forge-event', 'access_token'])
    expect(probe[name]).toBeUndefined();
}

/** Calls `run`: a return is fine, a throw must be an instance of one of `documented`; the error is returned. */
export function documentedOrNothing(
  run: () => void,
  documented: readonly (abstract new (...args: never[]) => Error)[],
) {
  try {
    run();
    return undefined;
  } catch (error) {
    const allowed = documented.some((type) => error instanceof type);
    if (!allowed) throw new Error(`undocumented ${(error as Error)?.name}: ${(error as Error)?.message}`);
    // A documented TypeError names the field or argument it refuses; an engine TypeError ("Cannot read
    // properties of null") names none and is a crash, not a refusal.
    if (error instanceof TypeError) expect((error as Error).message).toMatch(/^"[^"]+"/);
    return error as Error;
  }
}

/** Runs `call` and fails when it took longer than `limit` ms (a hang on a small input). */
export function bounded<T>(call: () => T, limit = 500): T {
  const started = performance.now();
  try {
    return call();
  } finally {
    expect(performance.now() - started).toBeLessThan(limit);
  }
}
