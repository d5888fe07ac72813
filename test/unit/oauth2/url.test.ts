import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/oauth2/index.js';
import { buildUrl, encodeParams, formEncode, normalizeSite, parseQuery } from '../../../lib/oauth2/url.js';

describe('URL resolution (Faraday rules)', () => {
  const nested = new Client('id', 'secret', { site: 'https://example.test/api/v1' });

  it('resolves a path without a leading slash under the site nested path', () => {
    expect(nested.tokenUrl()).toBe('https://example.test/api/v1/oauth/token');
    expect(nested.buildUrl('users/me')).toBe('https://example.test/api/v1/users/me');
  });

  it('keeps the site path when the site already ends with a slash', () => {
    const client = new Client('id', 'secret', { site: 'https://example.test/api/v1/' });
    expect(client.tokenUrl()).toBe('https://example.test/api/v1/oauth/token');
  });

  it('replaces the site path when the path has a leading slash', () => {
    const client = new Client('id', 'secret', {
      site: 'https://example.test/api/v1',
      tokenUrl: '/oauth/token',
    });
    expect(client.tokenUrl()).toBe('https://example.test/oauth/token');
  });

  it('lets an absolute URL win over the site', () => {
    const client = new Client('id', 'secret', {
      site: 'https://example.test/api/v1',
      tokenUrl: 'https://other.test/token',
    });
    expect(client.tokenUrl()).toBe('https://other.test/token');
    expect(nested.buildUrl('https://third.test/x?b=2&a=1')).toBe('https://third.test/x?a=1&b=2');
  });

  it('sorts query parameters and writes a space as %20', () => {
    expect(nested.authorizeUrl({ scope: 'openid profile', client_id: 'a b', response_type: 'code' })).toBe(
      'https://example.test/api/v1/oauth/authorize?client_id=a%20b&response_type=code&scope=openid%20profile',
    );
  });

  it('merges params into a query the path already has', () => {
    const client = new Client('id', 'secret', {
      site: 'https://example.test',
      authorizeUrl: 'authorize?prompt=none',
    });
    expect(client.authorizeUrl({ client_id: 'x' })).toBe(
      'https://example.test/authorize?client_id=x&prompt=none',
    );
  });

  it('writes array values as repeated keys (RFC 8707 resource)', () => {
    expect(buildUrl(normalizeSite('https://e.test'), 'a', { resource: ['r1', 'r2'] })).toBe(
      'https://e.test/a?resource=r1&resource=r2',
    );
  });

  it('requires an absolute URL when no site is set', () => {
    const client = new Client('id', 'secret');
    expect(() => client.tokenUrl()).toThrow(new TypeError(`"url" must be absolute when no site is set`));
  });

  it('rejects a relative site', () => {
    expect(() => new Client('id', 'secret', { site: 'example.test/api' })).toThrow(
      new TypeError(`"site" must be an absolute URL`),
    );
  });
});

describe('encodeParams() / parseQuery() / formEncode()', () => {
  it('encodes reserved characters per RFC 3986, skips undefined and writes null as the bare key', () => {
    expect(encodeParams({ b: "x!'()*~", a: 'é', c: undefined, d: null })).toBe(
      'a=%C3%A9&b=x%21%27%28%29%2A~&d',
    );
  });

  it('parses repeated keys into arrays with string keys and no snake-casing', () => {
    expect(parseQuery('accessToken=a&x=1&x=2&empty=&flag')).toEqual({
      accessToken: 'a',
      x: ['1', '2'],
      empty: '',
      flag: null,
    });
  });

  it('form-encodes client credentials as RFC 6749 Appendix B says', () => {
    expect(formEncode('a b+%:&')).toBe('a+b%2B%25%3A%26');
  });

  it('parses whatever it is given without throwing, and round-trips encoded params', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(typeof parseQuery(text)).toBe('object');
      }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.string()), (params) => {
        const parsed = parseQuery(encodeParams(params));
        for (const [k, v] of Object.entries(params)) expect(parsed[k]).toEqual(v);
      }),
    );
  });
});
