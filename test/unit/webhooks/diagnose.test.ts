import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DiagnosisCodes,
  deliveryHeaders,
  diagnoseSignature,
  type Forge,
  maskSignature,
  sign,
} from '../../../lib/webhooks/index.js';

const SECRET = 'diagnose-secret-7f3e';
const OTHER = 'another-secret-c4d1';
const PAYLOAD = {
  action: 'opened',
  issue: { number: 1, title: 'Café ☕ ünïcode' },
  sender: { login: 'octo' },
};
const COMPACT = JSON.stringify(PAYLOAD);
const PRETTY = JSON.stringify(PAYLOAD, null, 2);
const ESCAPED = COMPACT.replace(
  /[\u0080-\uffff]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
);

function hmac(algorithm: 'sha256' | 'sha1', secret: string, body: string | Buffer): string {
  return createHmac(algorithm, secret).update(body).digest('hex');
}

/** Nothing secret in what a diagnosis says: no secret, no full signature value. */
function expectNothingSecret(diagnosis: unknown, ...values: string[]): void {
  const text = JSON.stringify(diagnosis);
  for (const secret of [SECRET, OTHER]) expect(text).not.toContain(secret);
  for (const value of values) {
    expect(text).not.toContain(value);
    const hex = value.replace(/^sha(256|1)=/, '');
    if (hex.length >= 40) expect(text).not.toContain(hex.slice(0, 12));
  }
}

describe('diagnoseSignature()', () => {
  it('says verified when the signature matches the exact body', () => {
    const signature = sign(SECRET, COMPACT);
    const diagnosis = diagnoseSignature({ body: COMPACT, signature, secrets: [SECRET] });
    expect(diagnosis.verdict).toBe('verified');
    expect(diagnosis.reasons.map((reason) => reason.code)).toEqual(['verified']);
    expect(diagnosis.checked).toEqual([
      { header: 'x-hub-signature-256', scheme: 'sha256', signature: expect.any(String), matches: true },
    ]);
    expectNothingSecret(diagnosis, signature);
  });

  it('verifies with the second of several secrets (rotation)', () => {
    const diagnosis = diagnoseSignature({
      body: COMPACT,
      signature: sign(OTHER, COMPACT),
      secrets: [SECRET, OTHER],
    });
    expect(diagnosis.verdict).toBe('verified');
    expect(diagnosis.reasons[0]?.message).toContain('one of the configured secrets');
  });

  it('says wrong secret for every configured one when nothing matches', () => {
    const signature = sign('the-forge-has-this-one', COMPACT);
    const diagnosis = diagnoseSignature({ body: COMPACT, signature, secrets: [SECRET, OTHER] });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons).toHaveLength(1);
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.wrongSecret);
    expect(diagnosis.reasons[0]?.message).toContain('any of the 2 configured secrets');
    expect(diagnosis.checked[0]?.matches).toBe(false);
    expectNothingSecret(diagnosis, signature);
  });

  it('says the body was re-serialized when the pretty-printed JSON verifies', () => {
    // The forge signed pretty-printed bytes; the receiver parsed and re-stringified them compactly.
    const signature = sign(SECRET, PRETTY);
    const diagnosis = diagnoseSignature({ body: COMPACT, signature, secrets: [SECRET] });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.reserialized);
    expect(diagnosis.reasons[0]?.message).toMatch(/pretty-printed \(2-space indent\)/);
    expect(diagnosis.reasons[0]?.message).toContain('raw bytes');
  });

  it('says the body was re-serialized when the compact JSON verifies', () => {
    const diagnosis = diagnoseSignature({
      body: PRETTY,
      signature: sign(SECRET, COMPACT),
      secrets: [SECRET],
    });
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.reserialized);
    expect(diagnosis.reasons[0]?.message).toContain('written compactly');
  });

  it('names a trailing newline added or removed', () => {
    const added = diagnoseSignature({
      body: COMPACT,
      signature: sign(SECRET, `${COMPACT}\n`),
      secrets: SECRET,
    });
    expect(added.reasons[0]).toMatchObject({
      code: 'reserialized',
      message: expect.stringContaining('with a trailing newline'),
    });
    const removed = diagnoseSignature({
      body: `${COMPACT}\n`,
      signature: sign(SECRET, COMPACT),
      secrets: SECRET,
    });
    expect(removed.reasons[0]?.message).toContain('without a trailing newline');
  });

  it('says unicode escapes were changed when the \\u-escaped JSON verifies', () => {
    const diagnosis = diagnoseSignature({
      body: COMPACT,
      signature: sign(SECRET, ESCAPED),
      secrets: [SECRET],
    });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.unicodeEscapes);
    expect(diagnosis.reasons[0]?.message).toContain('\\uXXXX escapes');
  });

  it('says unicode escapes were changed when the forge sent escapes and the receiver unescaped them', () => {
    // The body as received had \u escapes; a compact re-serialization writes the characters themselves.
    const diagnosis = diagnoseSignature({
      body: ESCAPED,
      signature: sign(SECRET, COMPACT),
      secrets: [SECRET],
    });
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.unicodeEscapes);
    expect(diagnosis.reasons[0]?.message).toContain(
      'written compactly with its \\uXXXX escapes written as UTF-8',
    );
    const pretty = diagnoseSignature({ body: ESCAPED, signature: sign(SECRET, PRETTY), secrets: [SECRET] });
    expect(pretty.reasons[0]?.code).toBe(DiagnosisCodes.unicodeEscapes);
    expect(pretty.reasons[0]?.message).toContain('written as UTF-8 characters');
  });

  it('says the body is still base64-encoded when its decoded bytes verify', () => {
    const body = Buffer.from(COMPACT, 'utf8').toString('base64');
    const diagnosis = diagnoseSignature({ body, signature: sign(SECRET, COMPACT), secrets: [SECRET] });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.base64Body);
    expect(diagnosis.reasons[0]?.message).toContain('isBase64Encoded');
  });

  it('says form-encoded when the JSON inside a payload= form verifies', () => {
    const form = new URLSearchParams({ payload: COMPACT }).toString();
    const diagnosis = diagnoseSignature({
      body: form,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-hub-signature-256': sign(SECRET, COMPACT),
      },
      secrets: [SECRET],
    });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.formEncoded);
    expect(diagnosis.reasons[0]?.message).toContain('"application/json"');
  });

  it('says form-encoded when the form itself verifies but the JSON taken out of it is checked', () => {
    const form = `payload=${encodeURIComponent(COMPACT)}`;
    const diagnosis = diagnoseSignature({ body: COMPACT, signature: sign(SECRET, form), secrets: [SECRET] });
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.formEncoded);
    expect(diagnosis.reasons[0]?.message).toContain('matches the form body');
  });

  it('says verified but form-encoded (the ingest answers 415) when the form body itself verifies', () => {
    const form = new URLSearchParams({ payload: COMPACT }).toString();
    const diagnosis = diagnoseSignature({ body: form, signature: sign(SECRET, form), secrets: [SECRET] });
    expect(diagnosis.verdict).toBe('verified');
    expect(diagnosis.reasons.map((reason) => reason.code)).toEqual(['verified', 'form_encoded']);
    expect(diagnosis.reasons[1]?.message).toContain('415');
  });

  it('says sha1 sent but sha256 required when only X-Hub-Signature is present and sha1 is off', () => {
    const sha1 = sign(SECRET, COMPACT, { algorithm: 'sha1' });
    const diagnosis = diagnoseSignature({
      body: COMPACT,
      headers: { 'X-Hub-Signature': sha1 },
      secrets: [SECRET],
      allowSha1: false,
    });
    expect(diagnosis.verdict).toBe('missing_header');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.sha1Only);
    expect(diagnosis.reasons[0]?.message).toContain('"x-hub-signature-256"');
    expectNothingSecret(diagnosis, sha1);
  });

  it('verifies a lone sha1 signature when sha1 is allowed (the default)', () => {
    const sha1 = sign(SECRET, COMPACT, { algorithm: 'sha1' });
    const diagnosis = diagnoseSignature({
      body: COMPACT,
      headers: { 'x-hub-signature': sha1 },
      secrets: SECRET,
    });
    expect(diagnosis.verdict).toBe('verified');
    expect(diagnosis.checked[0]?.scheme).toBe('sha1');
  });

  it('says sha1 sent but sha256 required for a forge whose only scheme is sha256 (Bitbucket)', () => {
    const sha1 = sign(SECRET, COMPACT, { algorithm: 'sha1' });
    const byValue = diagnoseSignature({
      body: COMPACT,
      signature: sha1,
      secrets: SECRET,
      forge: 'bitbucket',
    });
    expect(byValue.verdict).toBe('bad_signature');
    expect(byValue.reasons[0]?.code).toBe(DiagnosisCodes.sha1Only);
    const byHeader = diagnoseSignature({
      body: COMPACT,
      headers: { 'x-hub-signature': sha1 },
      secrets: SECRET,
      forge: 'bitbucket',
    });
    expect(byHeader.verdict).toBe('bad_signature');
    expect(byHeader.reasons[0]?.code).toBe(DiagnosisCodes.sha1Only);
  });

  it('says missing header when no signature header is present, naming the preset headers', () => {
    const generic = diagnoseSignature({
      body: COMPACT,
      headers: { 'content-type': 'application/json' },
      secrets: SECRET,
    });
    expect(generic.verdict).toBe('missing_header');
    expect(generic.reasons[0]?.code).toBe(DiagnosisCodes.missingHeader);
    expect(generic.reasons[0]?.message).toContain('"x-hub-signature-256" or "x-hub-signature"');
    expect(generic.checked).toEqual([]);
    const gitlab = diagnoseSignature({ body: COMPACT, headers: {}, secrets: SECRET, forge: 'gitlab' });
    expect(gitlab.reasons[0]?.message).toContain('"x-gitlab-token"');
    expect(gitlab.reasons[0]?.message).toContain('secret token');
    const empty = diagnoseSignature({ body: COMPACT, signature: '', secrets: SECRET });
    expect(empty.verdict).toBe('missing_header');
  });

  it('says malformed for a value that is no signature, and lacks-prefix for bare hex that would match', () => {
    const garbage = diagnoseSignature({ body: COMPACT, signature: 'sha256=nothex', secrets: SECRET });
    expect(garbage.reasons[0]).toMatchObject({
      code: 'malformed_signature',
      message: expect.stringContaining('is malformed'),
    });
    const bare = hmac('sha256', SECRET, COMPACT);
    const unprefixed = diagnoseSignature({
      body: COMPACT,
      headers: { 'x-hub-signature-256': bare },
      secrets: SECRET,
    });
    expect(unprefixed.reasons[0]?.code).toBe(DiagnosisCodes.malformedSignature);
    expect(unprefixed.reasons[0]?.message).toContain('lacks the "sha256=" prefix');
    expect(unprefixed.reasons[0]?.message).toContain('it matches the body');
    expectNothingSecret(unprefixed, bare);
  });

  it('says uppercase hex when the HMAC matches once lowercased', () => {
    const upper = `sha256=${hmac('sha256', SECRET, COMPACT).toUpperCase()}`;
    const diagnosis = diagnoseSignature({ body: COMPACT, signature: upper, secrets: SECRET });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.uppercaseHex);
  });

  it('says the body is empty', () => {
    const diagnosis = diagnoseSignature({
      body: Buffer.alloc(0),
      signature: sign(SECRET, 'x'),
      secrets: SECRET,
    });
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.emptyBody);
  });

  it('checks GitLab tokens in constant time and never shows any of the token', () => {
    const ok = diagnoseSignature({
      body: COMPACT,
      headers: { 'X-Gitlab-Token': SECRET },
      secrets: [OTHER, SECRET],
      forge: 'gitlab',
    });
    expect(ok.verdict).toBe('verified');
    expect(ok.checked[0]?.signature).toBe(`[token, ${SECRET.length} characters]`);
    const wrong = diagnoseSignature({
      body: COMPACT,
      signature: 'not-the-token-123',
      secrets: [SECRET],
      forge: 'gitlab',
    });
    expect(wrong.verdict).toBe('bad_signature');
    expect(wrong.reasons[0]?.code).toBe(DiagnosisCodes.wrongToken);
    expectNothingSecret([ok, wrong], 'not-the-token-123');
  });

  it('says which of two Gitea signatures fails (every sha256 one present must match)', () => {
    const headers = deliveryHeaders(SECRET, COMPACT, { forge: 'gitea', name: 'issues', id: 'd-1' });
    headers['x-hub-signature-256'] = sign(OTHER, COMPACT);
    const diagnosis = diagnoseSignature({ body: COMPACT, headers, secrets: [SECRET], forge: 'gitea' });
    expect(diagnosis.verdict).toBe('bad_signature');
    expect(diagnosis.reasons[0]?.code).toBe(DiagnosisCodes.partialMatch);
    expect(diagnosis.reasons[0]?.message).toBe(
      '"x-gitea-signature" matches but "x-hub-signature-256" does not: every sha256 signature sent must match',
    );
    expect(diagnosis.reasons[1]?.code).toBe(DiagnosisCodes.wrongSecret);
    expect(diagnosis.checked.map((signature) => signature.matches)).toEqual([true, false]);
  });

  it.each(['generic', 'github', 'gitea', 'forgejo', 'gitlab', 'bitbucket'] satisfies Forge[])(
    'verifies the headers deliveryHeaders() writes for %s, and names the re-serialization for them',
    (forge) => {
      const headers = deliveryHeaders(SECRET, PRETTY, { forge, name: 'issues', id: 'd-2' });
      expect(diagnoseSignature({ body: PRETTY, headers, secrets: SECRET, forge }).verdict).toBe('verified');
      const changed = diagnoseSignature({ body: COMPACT, headers, secrets: SECRET, forge });
      // A token carries no body integrity: a re-serialized body still verifies.
      if (forge === 'gitlab') expect(changed.verdict).toBe('verified');
      else expect(changed.reasons.map((reason) => reason.code)).toContain(DiagnosisCodes.reserialized);
    },
  );

  it('throws a TypeError naming the field for invalid options', () => {
    expect(() => diagnoseSignature({ body: COMPACT, signature: 'x', secrets: [] })).toThrow(
      new TypeError('"secrets" must be a non-empty string or a non-empty array of strings'),
    );
    expect(() => diagnoseSignature({ body: COMPACT, secrets: SECRET } as never)).toThrow(
      new TypeError('pass either "headers" or "signature"'),
    );
    expect(() =>
      diagnoseSignature({ body: COMPACT, secrets: SECRET, signature: 'x', headers: {} } as never),
    ).toThrow(new TypeError('pass either "headers" or "signature"'));
    expect(() => diagnoseSignature({ body: 42, secrets: SECRET, signature: 'x' } as never)).toThrow(
      new TypeError('"body" must be a string or a Uint8Array'),
    );
    expect(() =>
      diagnoseSignature({ body: COMPACT, secrets: SECRET, signature: 'x', forge: 'svn' as Forge }),
    ).toThrow(TypeError);
    expect(() =>
      diagnoseSignature({ body: COMPACT, secrets: SECRET, signature: 'x', extra: 1 } as never),
    ).toThrow(new TypeError('unknown option "extra"'));
  });
});

describe('maskSignature()', () => {
  it('keeps the prefix and 4 hex characters of an HMAC and nothing of a token', () => {
    const value = sign(SECRET, COMPACT);
    expect(maskSignature(value, 'sha256')).toBe(`${value.slice(0, 11)}…[64 characters]`);
    expect(maskSignature('abcdef0123', 'hex-sha256')).toBe('abcd…[10 characters]');
    expect(maskSignature(SECRET, 'token')).toBe(`[token, ${SECRET.length} characters]`);
    expect(maskSignature('sha1=\u0000\u0001zz', 'sha1')).toBe('sha1=??zz…[4 characters]');
  });
});
