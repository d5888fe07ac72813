import { createHmac } from 'node:crypto';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../../lib/webhooks/index.js';

const SPEC_SECRET = "It's a Secret to Everybody";
const SPEC_PAYLOAD = 'Hello, World!';
const SPEC_SHA256 = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const FOO_SHA1 = 'sha1=d03207e4b030cf234e3447bac4d93add4c6643d8';
const FOO_SHA256 = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';

describe('sign()', () => {
  it('gives the published sha256 vector for "Hello, World!"', () => {
    expect(sign(SPEC_SECRET, SPEC_PAYLOAD)).toBe(SPEC_SHA256);
  });

  it('gives the published sha1 and sha256 vectors for {"foo":"bar"}', () => {
    expect(sign('mysecret', '{"foo":"bar"}', { algorithm: 'sha1' })).toBe(FOO_SHA1);
    expect(sign('mysecret', '{"foo":"bar"}', { algorithm: 'sha256' })).toBe(FOO_SHA256);
    expect(sign('mysecret', '{"foo":"bar"}')).toBe(FOO_SHA256);
  });

  it('signs an object as the forge serializes it', () => {
    expect(sign('mysecret', { foo: 'bar' })).toBe(FOO_SHA256);
    expect(sign('mysecret', { foo: 'bar' }, { algorithm: 'sha1' })).toBe(FOO_SHA1);
  });

  it('signs a Buffer and a Uint8Array over their exact bytes', () => {
    const bytes = new TextEncoder().encode(SPEC_PAYLOAD);
    expect(sign(SPEC_SECRET, bytes)).toBe(SPEC_SHA256);
    expect(sign(SPEC_SECRET, Buffer.from(SPEC_PAYLOAD))).toBe(SPEC_SHA256);
    const offset = new Uint8Array(Buffer.from(`xx${SPEC_PAYLOAD}yy`).buffer, 2, bytes.byteLength);
    expect(sign(SPEC_SECRET, new Uint8Array(Buffer.from(`xx${SPEC_PAYLOAD}yy`)).subarray(2, -2))).toBe(
      SPEC_SHA256,
    );
    expect(offset.byteLength).toBe(bytes.byteLength);
  });

  it('signs a string as UTF-8', () => {
    const text = '{"title":"café ☕ 🎉"}';
    expect(sign('s', text)).toBe(
      `sha256=${createHmac('sha256', 's').update(Buffer.from(text, 'utf8')).digest('hex')}`,
    );
  });

  it('signs with the first of several secrets', () => {
    expect(sign(['mysecret', 'other'], '{"foo":"bar"}')).toBe(FOO_SHA256);
  });

  it.each([
    [
      'a missing secret',
      undefined,
      'x',
      '"secret" must be a non-empty string or a non-empty array of strings',
    ],
    ['an empty secret', '', 'x', '"secret" must be a non-empty string or a non-empty array of strings'],
    ['an empty secret list', [], 'x', '"secret" must be a non-empty string or a non-empty array of strings'],
    ['an empty secret in a list', ['a', ''], 'x', '"secret" entries must be non-empty strings'],
    ['a missing payload', 's', undefined, '"payload" must be a non-empty string, Uint8Array or object'],
    ['a null payload', 's', null, '"payload" must be a non-empty string, Uint8Array or object'],
    ['an empty payload', 's', '', '"payload" must be a non-empty string, Uint8Array or object'],
    ['an empty Buffer', 's', Buffer.alloc(0), '"payload" must be a non-empty string, Uint8Array or object'],
    ['a number payload', 's', 42, '"payload" must be a non-empty string, Uint8Array or object'],
  ])('throws a TypeError for %s', (_case, secret, payload, message) => {
    expect(() => sign(secret as string, payload as string)).toThrow(new TypeError(message));
  });

  it('throws a TypeError for an unknown algorithm', () => {
    expect(() => sign('s', 'x', { algorithm: 'md5' as 'sha1' })).toThrow(
      new TypeError('"algorithm" must be "sha256" or "sha1"'),
    );
  });
});

describe('verify()', () => {
  it('accepts the published vectors', () => {
    expect(verify(SPEC_SECRET, SPEC_PAYLOAD, SPEC_SHA256)).toBe(true);
    expect(verify('mysecret', '{"foo":"bar"}', FOO_SHA1)).toBe(true);
    expect(verify('mysecret', '{"foo":"bar"}', FOO_SHA256)).toBe(true);
    expect(verify('mysecret', Buffer.from('{"foo":"bar"}'), FOO_SHA256)).toBe(true);
    expect(verify('mysecret', { foo: 'bar' }, FOO_SHA256)).toBe(true);
  });

  it('returns false for a signature that does not match', () => {
    expect(verify('mysecret', '{"foo":"baz"}', FOO_SHA256)).toBe(false);
    expect(verify('othersecret', '{"foo":"bar"}', FOO_SHA256)).toBe(false);
    expect(verify('othersecret', '{"foo":"bar"}', FOO_SHA1)).toBe(false);
  });

  it('accepts a signature made with any of several secrets (rotation)', () => {
    const oldSignature = sign('old-secret', SPEC_PAYLOAD);
    const newSignature = sign('new-secret', SPEC_PAYLOAD);
    expect(verify(['new-secret', 'old-secret'], SPEC_PAYLOAD, oldSignature)).toBe(true);
    expect(verify(['new-secret', 'old-secret'], SPEC_PAYLOAD, newSignature)).toBe(true);
    expect(verify(['new-secret', 'old-secret'], SPEC_PAYLOAD, sign('third', SPEC_PAYLOAD))).toBe(false);
  });

  it('never checks a sha256 signature as sha1, nor the reverse', () => {
    const sha1Hex = FOO_SHA1.slice('sha1='.length);
    const sha256Hex = FOO_SHA256.slice('sha256='.length);
    expect(verify('mysecret', '{"foo":"bar"}', `sha256=${sha1Hex}`)).toBe(false);
    expect(verify('mysecret', '{"foo":"bar"}', `sha1=${sha256Hex}`)).toBe(false);
  });

  it.each([
    ['bare hex without a prefix', FOO_SHA256.slice('sha256='.length)],
    ['an unknown prefix', `sha512=${FOO_SHA256.slice(7)}`],
    ['an uppercase prefix', `SHA256=${FOO_SHA256.slice(7)}`],
    ['a truncated digest', FOO_SHA256.slice(0, -2)],
    ['an over-long digest', `${FOO_SHA256}00`],
    ['non-hex characters of the right length', `sha256=${'z'.repeat(64)}`],
    ['hex with a trailing non-hex pair', `${FOO_SHA256.slice(0, -2)}zz`],
    ['garbage', 'not a signature at all'],
    ['the prefix alone', 'sha256='],
    ['whitespace around a valid signature', ` ${FOO_SHA256} `],
    ['uppercase hex', `sha256=${FOO_SHA256.slice(7).toUpperCase()}`],
    ['a non-ASCII look-alike of a hex digit', `${FOO_SHA256.slice(0, -1)}\u0663`],
    ['a hex digit replaced by a character whose low byte is that digit', `${FOO_SHA256.slice(0, -1)}\u0133`],
  ])('returns false, without throwing, for %s', (_case, signature) => {
    expect(verify('mysecret', '{"foo":"bar"}', signature)).toBe(false);
  });

  it.each([
    [
      'a missing secret',
      undefined,
      'x',
      'sha256=00',
      '"secret" must be a non-empty string or a non-empty array of strings',
    ],
    [
      'an empty secret',
      '',
      'x',
      'sha256=00',
      '"secret" must be a non-empty string or a non-empty array of strings',
    ],
    [
      'a missing payload',
      's',
      undefined,
      'sha256=00',
      '"payload" must be a non-empty string, Uint8Array or object',
    ],
    ['an empty payload', 's', '', 'sha256=00', '"payload" must be a non-empty string, Uint8Array or object'],
    ['a missing signature', 's', 'x', undefined, '"signature" must be a non-empty string'],
    ['an empty signature', 's', 'x', '', '"signature" must be a non-empty string'],
    ['a non-string signature', 's', 'x', 42, '"signature" must be a non-empty string'],
  ])('throws a TypeError for %s', (_case, secret, payload, signature, message) => {
    expect(() => verify(secret as string, payload as string, signature as string)).toThrow(
      new TypeError(message),
    );
  });

  it('verifies an object the way the forge serialized it, escapes included', () => {
    const wire = '{"body":"\\u001B[31mred\\u001B[0m","emoji":"🎉"}';
    const signature = sign('s', wire);
    expect(verify('s', JSON.parse(wire) as object, signature)).toBe(true);
  });
});

describe('sign() and verify() against @octokit/webhooks-methods', () => {
  const payloads = ['Hello, World!', '{"foo":"bar"}', '{"text":"café ☕ 🎉 — \\u001B"}', 'x'.repeat(25_000)];

  it.each(payloads.map((payload) => [payload.slice(0, 24), payload]))(
    'octokit verifies our sha256 signature and we verify its signature: %s',
    async (_label, payload) => {
      const ours = sign('shared-secret', payload);
      const theirs = await octokitSign('shared-secret', payload);
      expect(ours).toBe(theirs);
      expect(await octokitVerify('shared-secret', payload, ours)).toBe(true);
      expect(verify('shared-secret', payload, theirs)).toBe(true);
      expect(await octokitVerify('wrong-secret', payload, ours)).toBe(false);
    },
  );

  it('agrees with node:crypto HMAC-SHA1 for sha1 signatures', () => {
    for (const payload of payloads) {
      const expected = `sha1=${createHmac('sha1', 'shared-secret').update(payload, 'utf8').digest('hex')}`;
      expect(sign('shared-secret', payload, { algorithm: 'sha1' })).toBe(expected);
      expect(verify('shared-secret', payload, expected)).toBe(true);
    }
  });
});

describe('verify() properties', () => {
  it('never throws for any non-empty string signature', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (payload, signature) => {
        expect(typeof verify('secret', payload, signature)).toBe('boolean');
      }),
      { numRuns: 2_000 },
    );
  });

  it('never throws for signature-shaped strings with arbitrary digests', () => {
    const prefixed = fc
      .tuple(fc.constantFrom('sha256=', 'sha1=', 'sha256', 'sha1=sha1=', ''), fc.string({ maxLength: 80 }))
      .map(([prefix, rest]) => `${prefix}${rest}`)
      .filter((signature) => signature.length > 0);
    fc.assert(
      fc.property(prefixed, (signature) => {
        expect(verify('secret', 'payload', signature)).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });

  it('signs and verifies any string, ASCII or not, as its UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }), (text) => {
        const expected = `sha256=${createHmac('sha256', 'secret').update(Buffer.from(text, 'utf8')).digest('hex')}`;
        expect(sign('secret', text)).toBe(expected);
        expect(verify('secret', text, expected)).toBe(true);
        expect(verify('secret', Buffer.from(text, 'utf8'), expected)).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('never accepts a payload with one byte changed', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('sha256' as const, 'sha1' as const),
        (bytes, position, delta, algorithm) => {
          const signature = sign('secret', bytes, { algorithm });
          const changed = Uint8Array.from(bytes);
          const index = position % changed.length;
          changed[index] = ((changed[index] as number) + delta) % 256;
          expect(verify('secret', bytes, signature)).toBe(true);
          expect(verify('secret', changed, signature)).toBe(false);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
