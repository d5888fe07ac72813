// The OAuth 2.0 client's parsers under any input: Response#parsed (any content type and body),
// AccessToken.fromHash (any JSON value) and AccessToken.fromKvform (any form string). Documented errors only: a
// TypeError that names its field, or an OAuth2Error (TokenError and the rest of its subclasses); no prototype
// polluted through `__proto__` / `constructor` / `prototype` keys, no inherited surprise in a result, and every
// call bounded in time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_CONTENT_TYPES } from '../../../lib/oauth2/constants.js';
import {
  AccessToken,
  Client,
  OAuth2Error,
  Response,
  SnakyHash,
  toSnakeCase,
} from '../../../lib/oauth2/index.js';
import {
  bounded,
  documentedOrNothing,
  expectPrototypesUnchanged,
  json,
  jsonObject,
  key,
  PROTO_KEYS,
  prototypeSnapshot,
} from './arbitraries.js';

const DOCUMENTED = [TypeError, OAuth2Error] as const;
const client = new Client('fuzz-client', 'fuzz-client-secret', { site: 'https://auth.example.test' });
const EMPTY = new SnakyHash({});

const contentType = fc.oneof(
  fc.constantFrom(...JSON_CONTENT_TYPES, 'application/x-www-form-urlencoded', 'text/plain', 'text/html'),
  fc
    .tuple(
      fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
      fc.string({ maxLength: 12 }),
    )
    .map(([type, parameter]) => `${type.toUpperCase()}; ${parameter}`),
  fc.string({ maxLength: 20 }),
  fc.constant(undefined),
);
/** A form body: `key=value` pairs (prototype keys, encoded or not, repeated, without `=`) or any string. */
const form = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          key,
          fc.constantFrom('access_token', 'token_type', 'expires_in', 'refresh_token', 'token_name'),
        ),
        fc.option(fc.oneof(fc.string({ maxLength: 12 }), key), { nil: undefined }),
        fc.boolean(),
      ),
      { maxLength: 6 },
    )
    .map((pairs) =>
      pairs
        .map(([name, value, encode]) => {
          const k = encode ? encodeURIComponent(name) : name;
          return value === undefined ? k : `${k}=${encode ? encodeURIComponent(value) : value}`;
        })
        .join('&'),
    ),
  fc.string({ maxLength: 60 }),
);
const body = fc.oneof(
  json.map((value) => JSON.stringify(value) ?? ''),
  jsonObject.map((value) => JSON.stringify(value)),
  form,
  fc.string({ maxLength: 60 }),
);

/** A SnakyHash (or plain object) result: own keys for every input key, nothing inherited beyond an empty one's. */
function expectCleanHash(value: unknown, snaky: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) expectCleanHash(item, snaky);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const record = value as Record<string, unknown>;
  const proto = Object.getPrototypeOf(record);
  expect(snaky ? proto === SnakyHash.prototype : proto === Object.prototype || proto === null).toBe(true);
  for (const name of [...PROTO_KEYS, 'polluted', 'isAdmin']) {
    if (Object.hasOwn(record, name)) continue;
    // Not an own key: it reads what it reads on an empty hash (or object), nothing that came from the input.
    expect(record[name]).toBe(snaky ? EMPTY[name] : ({} as Record<string, unknown>)[name]);
  }
  for (const name of Object.keys(record)) expectCleanHash(record[name], snaky);
}

describe('Response#parsed under any content type and body', () => {
  it('never throws, keeps every key as its own, and pollutes nothing', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(contentType, body, fc.boolean(), (type, text, snaky) => {
        const response = new Response(
          { status: 200, headers: type === undefined ? {} : { 'content-type': type }, body: text },
          { snaky },
        );
        const parsed = bounded(() => response.parsed);
        expect(typeof parsed === 'string' || Array.isArray(parsed) || typeof parsed === 'object').toBe(true);
        // Only an object body becomes a SnakyHash (its nested objects too); a JSON array is kept as parsed.
        expectCleanHash(parsed, snaky && !Array.isArray(parsed));
        if (
          snaky &&
          typeof parsed === 'object' &&
          !Array.isArray(parsed) &&
          response.contentType === 'application/json'
        ) {
          const source = JSON.parse(text) as Record<string, unknown>;
          for (const name of Object.keys(source)) expect(Object.hasOwn(parsed, toSnakeCase(name))).toBe(true);
        }
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 300 },
    );
  });
});

function expectCleanToken(token: AccessToken): void {
  expect(typeof token.token).toBe('string');
  expect(Object.getPrototypeOf(token.params)).toBe(Object.prototype);
  expectCleanHash(token.params, false);
}

describe('AccessToken.fromHash under any JSON value', () => {
  it('throws only a TypeError naming its field or an OAuth2Error, and pollutes nothing', () => {
    const before = prototypeSnapshot();
    const tokenField = fc.constantFrom(
      'access_token',
      'id_token',
      'token',
      'accessToken',
      'idToken',
      'token_name',
      'expires_in',
      'mode',
    );
    const hash = fc.oneof(
      json,
      jsonObject,
      fc.tuple(jsonObject, tokenField, json).map(([object, name, value]) => ({ ...object, [name]: value })),
    );
    fc.assert(
      fc.property(hash, (value) => {
        documentedOrNothing(() => {
          expectCleanToken(bounded(() => AccessToken.fromHash(client, value as Record<string, unknown>)));
        }, DOCUMENTED);
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 300 },
    );
  });
});

describe('AccessToken.fromKvform under any form string', () => {
  it('throws only a TypeError naming its field or an OAuth2Error, and pollutes nothing', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(form, (text) => {
        documentedOrNothing(() => {
          expectCleanToken(bounded(() => AccessToken.fromKvform(client, text)));
        }, DOCUMENTED);
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 300 },
    );
  });
});
