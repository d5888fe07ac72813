// The key of a delivery from a sender without a resource rule (Standard Webhooks senders, the generic preset): the
// value at a path in a small JSONPath subset, parsed without eval; an unsupported path is a TypeError saying where.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeyPath, resourceKeyAt } from '../../../lib/webhooks/index.js';

// A Standard Webhooks payload as Svix's and the specification's examples shape it.
const invoicePaid = {
  type: 'invoice.paid',
  timestamp: '2022-11-03T20:26:10.344522Z',
  data: {
    id: 'in_1',
    customer: { id: 'cus_1', tags: ['vip', 'eu'] },
    lines: [{ id: 'il_1', amount: 300 }],
    'order-ref': 'o-9',
    'odd.key': "it's",
  },
};

describe('parseKeyPath()', () => {
  it('parses .name, [index] and quoted steps', () => {
    expect(parseKeyPath('$.a.b[0].c')).toEqual(['a', 'b', 0, 'c']);
    expect(parseKeyPath('$[\'odd.key\']["x y"]._id-2')).toEqual(['odd.key', 'x y', '_id-2']);
    expect(parseKeyPath("$['it\\'s']['back\\\\slash']")).toEqual(["it's", 'back\\slash']);
    expect(parseKeyPath('$[12]')).toEqual([12]);
  });

  it.each([
    ['$.a[*]', /not supported at character 4 \("\[\*\]"\)/],
    ['$..a', /not supported at character 2/],
    ['$.a[-1]', /not supported at character 4/],
    ['$.a[0:2]', /not supported at character 4/],
    ['$.a[?(@.b)]', /not supported at character 4/],
    ['$.a[01]', /not supported at character 4/],
    ['$.a,b', /not supported at character 4/],
    ['$.1a', /not supported at character 2/],
    ["$['unclosed]", /not supported at character 2/],
    ['$ .a', /not supported at character 2/],
  ])('refuses %s, saying where it stops being supported', (path, message) => {
    expect(() => parseKeyPath(path)).toThrow(TypeError);
    expect(() => parseKeyPath(path)).toThrow(message);
    expect(() => parseKeyPath(path)).toThrow(
      /a path is \$ followed by \.name, \['name'\] or \[index\] steps/,
    );
  });

  it('refuses a path that does not start with $, names no field, is too long or is no string', () => {
    expect(() => parseKeyPath('data.id')).toThrow('"path" "data.id" must start with $');
    expect(() => parseKeyPath('$')).toThrow('"path" "$" names no field');
    expect(() => parseKeyPath(`$${'.a'.repeat(300)}`)).toThrow('"path" must be at most 512 characters');
    expect(() => parseKeyPath(42)).toThrow('"path" must be a string');
  });

  it('throws nothing but a TypeError, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((text) => `$${text}`),
        ),
        (path) => {
          try {
            const steps = parseKeyPath(path);
            expect(steps.length).toBeGreaterThan(0);
          } catch (error) {
            expect(error).toBeInstanceOf(TypeError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('resourceKeyAt()', () => {
  it('reads a string or a number at the path', () => {
    expect(resourceKeyAt('$.data.customer.id')(invoicePaid)).toBe('cus_1');
    expect(resourceKeyAt('$.data.customer.tags[1]')(invoicePaid)).toBe('eu');
    expect(resourceKeyAt('$.data.lines[0].amount')(invoicePaid)).toBe('300');
    expect(resourceKeyAt("$.data['order-ref']")(invoicePaid)).toBe('o-9');
    expect(resourceKeyAt('$.data.order-ref')(invoicePaid)).toBe('o-9');
    expect(resourceKeyAt('$["data"]["odd.key"]')(invoicePaid)).toBe("it's");
  });

  it('gives undefined, never an error, where there is no string or number', () => {
    const cases: [string, unknown][] = [
      ['$.data.customer', invoicePaid],
      ['$.data.customer.tags', invoicePaid],
      ['$.data.lines[1].id', invoicePaid],
      ['$.data.missing.id', invoicePaid],
      ['$.data[0]', invoicePaid],
      ['$.data.customer.tags.length', invoicePaid],
      ['$.a', { a: '' }],
      ['$.a', { a: null }],
      ['$.a', { a: true }],
      ['$.a', null],
      ['$.a', 'text'],
      ['$[0]', 'text'],
    ];
    for (const [path, payload] of cases) expect(resourceKeyAt(path)(payload), path).toBeUndefined();
  });

  it('reads own fields only, never inherited ones', () => {
    expect(resourceKeyAt('$.constructor.name')({})).toBeUndefined();
    expect(resourceKeyAt('$.toString')({})).toBeUndefined();
    expect(resourceKeyAt('$.id')(Object.create({ id: 'inherited' }))).toBeUndefined();
    expect(resourceKeyAt("$['__proto__']")(JSON.parse('{"__proto__": "own"}'))).toBe('own');
  });

  it('throws the parser’s TypeError when it is made, not when it reads', () => {
    expect(() => resourceKeyAt('$.a[*]')).toThrow(TypeError);
  });

  it('finds any string at the path built from its field names, however odd the names', () => {
    const name = fc.string({ maxLength: 8 });
    fc.assert(
      fc.property(
        fc.array(fc.oneof(name, fc.nat(3)), { minLength: 1, maxLength: 5 }),
        fc.string({ minLength: 1 }),
        (steps, value) => {
          let payload: unknown = value;
          for (const step of [...steps].reverse()) {
            if (typeof step === 'number') {
              const array: unknown[] = Array.from({ length: step + 1 }, () => null);
              array[step] = payload;
              payload = array;
            } else {
              payload = { [step]: payload };
            }
          }
          const path = `$${steps
            .map((step) =>
              typeof step === 'number'
                ? `[${step}]`
                : `['${step.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}']`,
            )
            .join('')}`;
          expect(resourceKeyAt(path)(payload)).toBe(value);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws on arbitrary JSON', () => {
    const readers = ['$.a', '$.a.b[0].c', '$[0]', "$['a']['b']", '$.data.id'].map(resourceKeyAt);
    fc.assert(
      fc.property(fc.jsonValue(), (payload) => {
        for (const read of readers) {
          const key = read(payload);
          expect(key === undefined || (typeof key === 'string' && key.length > 0)).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
