import { describe, expect, it } from 'vitest';
import { serializePayload } from '../../../lib/webhooks/index.js';

describe('serializePayload()', () => {
  it('writes compact JSON like JSON.stringify when nothing needs escaping', () => {
    const payload = { action: 'opened', issue: { number: 1, title: 'café ☕ 🎉', labels: [] }, ok: true };
    expect(serializePayload(payload)).toBe(JSON.stringify(payload));
  });

  it('writes control-character escapes with uppercase hex, as the forge does', () => {
    expect(serializePayload({ text: '\u001b[1m' })).toBe('{"text":"\\u001B[1m"}');
    expect(serializePayload({ text: '\u001f\u000b' })).toBe('{"text":"\\u001F\\u000B"}');
  });

  it('uppercases adjacent escapes too', () => {
    expect(serializePayload({ text: '\u001b\u001b\u001b' })).toBe('{"text":"\\u001B\\u001B\\u001B"}');
  });

  it('keeps the short escapes JSON.stringify writes for \\b \\f \\n \\r \\t', () => {
    expect(serializePayload({ text: '\b\f\n\r\t' })).toBe('{"text":"\\b\\f\\n\\r\\t"}');
  });

  it('leaves an escaped backslash followed by "u" alone', () => {
    // The text holds a backslash then "u001b": JSON writes "\\u001b", which is not an escape to uppercase.
    expect(serializePayload({ text: '\\u001b' })).toBe('{"text":"\\\\u001b"}');
    expect(serializePayload({ text: '\\\u001b' })).toBe('{"text":"\\\\\\u001B"}');
  });

  it('uppercases the escape of a lone surrogate', () => {
    expect(serializePayload({ text: '\udead' })).toBe('{"text":"\\uDEAD"}');
  });

  it('round-trips: parsing the output gives the input back', () => {
    const payload = { a: '\u0000\u001b\u007f', b: ['\\u00e9', 'é'], c: { d: null } };
    expect(JSON.parse(serializePayload(payload))).toEqual(payload);
  });

  it('throws a TypeError for a value JSON cannot represent', () => {
    expect(() => serializePayload(undefined)).toThrow(
      new TypeError('"payload" cannot be serialized to JSON'),
    );
  });
});
