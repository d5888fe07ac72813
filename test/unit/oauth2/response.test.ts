import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Response, SnakyHash, toSnakeCase } from '../../../lib/oauth2/index.js';

function json(body: unknown, type = 'application/json'): Response {
  return new Response({ status: 200, headers: { 'content-type': type }, body: JSON.stringify(body) });
}

describe('toSnakeCase()', () => {
  it.each([
    ['accessToken', 'access_token'],
    ['MiGever', 'mi_gever'],
    ['banana-butterCake', 'banana_butter_cake'],
    ['ABCWord', 'abc_word'],
    ['aB', 'a_b'],
    ['already_snake', 'already_snake'],
    ['HTTPResponseCode', 'http_response_code'],
  ])('turns %s into %s', (input, output) => {
    expect(toSnakeCase(input)).toBe(output);
  });

  it("splits an acronym run exactly as the gem's ([A-Z\\d]+)([A-Z][a-z]) does, for any key", () => {
    const gem = (key: string): string => key.replace(/([A-Z\d]+)([A-Z][a-z])/g, '$1_$2');
    const alphabet = fc.constantFrom('A', 'B', 'Z', 'a', 'b', 'z', '1', '9', '_', '-', ' ', ':');
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join('')),
        (key) => {
          const expected = gem(key.trim().replace(/ /g, '_').replace(/::/g, '/'))
            .replace(/([a-z\d])([A-Z])/g, '$1_$2')
            .replace(/-/g, '_')
            .replace(/_{2,}/g, '_')
            .toLowerCase();
          expect(toSnakeCase(key)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('handles a 200,000-character run of capitals from a hostile server in linear time', () => {
    // With no lowercase letter after the run, the gem's regex backtracks from every start position: quadratic,
    // minutes of blocked event loop (past the test timeout).
    const run = 'A'.repeat(200_000);
    expect(toSnakeCase(run)).toBe('a'.repeat(200_000));
    expect(toSnakeCase(`${run}Bc`)).toBe(`${'a'.repeat(200_000)}_bc`);
    const parsed = json({ [run]: 1 }).parsed as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['a'.repeat(200_000)]);
  });
});

describe('Response#parsed', () => {
  it('snake-cases a JSON object recursively, readable under the original keys too', () => {
    const r = json({ accessToken: 'a', MiGever: 1, 'banana-butterCake': { innerKey: [{ deepKey: 2 }] } });
    const parsed = r.parsed as Record<string, Record<string, unknown>>;
    expect(Object.keys(parsed)).toEqual(['access_token', 'mi_gever', 'banana_butter_cake']);
    expect(JSON.parse(JSON.stringify(parsed))).toEqual({
      access_token: 'a',
      mi_gever: 1,
      banana_butter_cake: { inner_key: [{ deep_key: 2 }] },
    });
    expect(parsed.accessToken).toBe('a');
    expect(parsed.MiGever).toBe(1);
    expect(parsed['banana-butterCake']?.innerKey).toEqual([{ deep_key: 2 }]);
    expect('accessToken' in parsed).toBe(true);
    expect(parsed).toBeInstanceOf(SnakyHash);
  });

  it('keeps the provider keys with snaky: false', () => {
    const r = new Response(
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{"accessToken":"a"}' },
      { snaky: false },
    );
    expect(r.parsed).toEqual({ accessToken: 'a' });
    expect(Object.keys(r.parsed)).toEqual(['accessToken']);
  });

  it('returns a top-level JSON array raw', () => {
    const r = json([{ someKey: 1 }]);
    expect(r.parsed).toEqual([{ someKey: 1 }]);
  });

  it.each([
    'application/json; charset=utf-8',
    'text/javascript',
    'application/hal+json',
    'application/vnd.api+json',
    'application/vnd.collection+json',
    'application/problem+json',
    'APPLICATION/JSON',
  ])('parses %s as JSON (type matched without parameters)', (type) => {
    expect((json({ a: 1 }, type).parsed as Record<string, unknown>).a).toBe(1);
  });

  it('parses a form body into a snake-cased hash', () => {
    const r = new Response({
      status: 200,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'accessToken=abc&scope=a+b&x=1&x=2',
    });
    expect(JSON.parse(JSON.stringify(r.parsed))).toEqual({
      access_token: 'abc',
      scope: 'a b',
      x: ['1', '2'],
    });
  });

  it('returns the body string for other content types, missing ones and bad JSON', () => {
    expect(new Response({ status: 200, headers: { 'content-type': 'text/html' }, body: '<p>' }).parsed).toBe(
      '<p>',
    );
    expect(new Response({ status: 200, body: 'plain' }).parsed).toBe('plain');
    expect(json('x').parsed).toBe('x');
    expect(
      new Response({ status: 200, headers: { 'content-type': 'application/json' }, body: '{oops' }).parsed,
    ).toBe('{oops');
  });

  it('exposes status, headers and body', () => {
    const r = new Response({ status: 201, headers: { 'X-Thing': ['a', 'b'] }, body: 'hi' });
    expect(r.status).toBe(201);
    expect(r.headers.get('x-thing')).toBe('a, b');
    expect(r.body).toBe('hi');
  });

  it('uses a registered parser and an explicit parse option', () => {
    Response.registerParser('csv', ['text/csv'], (body) => body.split(','));
    const r = new Response({ status: 200, headers: { 'content-type': 'text/csv' }, body: 'a,b' });
    expect(r.parsed).toEqual(['a', 'b']);
    const forced = new Response({ status: 200, body: '{"a":1}' }, { parse: 'json' });
    expect((forced.parsed as Record<string, unknown>).a).toBe(1);
    expect(() => new Response({ status: 200 }, { parse: 'nope' })).toThrow(
      new TypeError(`"parse" names no registered parser`),
    );
  });

  it('never throws while parsing arbitrary bodies', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain'),
        (body, type) => {
          const parsed = new Response({ status: 200, headers: { 'content-type': type }, body }).parsed;
          expect(parsed).toBeDefined();
        },
      ),
    );
  });
});

describe('SnakyHash', () => {
  it('writes under the snake key whatever spelling is used', () => {
    const h = new SnakyHash({});
    h.fooBar = 1;
    expect(Object.keys(h)).toEqual(['foo_bar']);
    expect(h.foo_bar).toBe(1);
    delete h.fooBar;
    expect(Object.keys(h)).toEqual([]);
  });

  it('dumps and loads through value and hash extensions', () => {
    class Stamped extends SnakyHash {}
    Stamped.dumpValueExtensions.add('dates', (v) => (v instanceof Date ? v.toISOString() : v));
    Stamped.loadValueExtensions.add('dates', (v) =>
      typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? new Date(v) : v,
    );
    Stamped.dumpHashExtensions.add('version', (h) => ({ ...h, v: 1 }));
    Stamped.loadHashExtensions.add('drop-version', (h) => {
      const { v: _v, ...rest } = h;
      return rest;
    });
    const when = new Date('2026-01-02T03:04:05.000Z');
    const dumped = Stamped.dump({ expiresAt: when, nested: { n: 1 } });
    expect(JSON.parse(dumped)).toEqual({
      expiresAt: '2026-01-02T03:04:05.000Z',
      nested: { n: 1, v: 1 },
      v: 1,
    });
    const loaded = Stamped.load(dumped);
    expect(loaded).toBeInstanceOf(Stamped);
    expect(loaded.expires_at).toEqual(when);
    expect(JSON.parse(JSON.stringify(loaded.nested))).toEqual({ n: 1 });
  });

  it('gives each subclass its own registries', () => {
    class A extends SnakyHash {}
    class B extends SnakyHash {}
    A.dumpValueExtensions.add('up', (v) => (typeof v === 'string' ? v.toUpperCase() : v));
    expect(A.dump({ a: 'x' })).toBe('{"a":"X"}');
    expect(B.dump({ a: 'x' })).toBe('{"a":"x"}');
    expect(SnakyHash.dumpValueExtensions.size).toBe(0);
    expect(A.dumpValueExtensions.names()).toEqual(['up']);
  });

  it('loads an empty string as an empty hash and rejects non-objects', () => {
    expect(Object.keys(SnakyHash.load(''))).toEqual([]);
    expect(() => SnakyHash.load('[1]')).toThrow(new TypeError(`"raw" must hold a JSON object`));
    expect(() => SnakyHash.dumpValueExtensions.add('', (v) => v)).toThrow(
      new TypeError(`"name" must be a non-empty string`),
    );
  });
});
