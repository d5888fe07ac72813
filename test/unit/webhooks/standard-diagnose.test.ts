// diagnoseSignature() on Standard Webhooks deliveries: the plain-words reasons the inspector and
// `forgebridge verify` show, for each way such a delivery fails.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { diagnoseSignature, type Forge } from '../../../lib/webhooks/index.js';

const SECRET = 'whsec_ZGlhZ25vc2UtdGhlLXN0YW5kYXJkLXNjaGVtZS0zMmJ5dGVz';
const KEY = Buffer.from('ZGlhZ25vc2UtdGhlLXN0YW5kYXJkLXNjaGVtZS0zMmJ5dGVz', 'base64');
const BODY = '{"type":"invoice.paid","data":{"amount":42,"note":"déjà vu"}}';
const now = () => Math.floor(Date.now() / 1000);

function v1(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function headers(options: { offset?: number; key?: Buffer; body?: string; id?: string } = {}) {
  const timestamp = now() + (options.offset ?? 0);
  const id = options.id ?? 'msg_d';
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': v1(options.key ?? KEY, id, timestamp, options.body ?? BODY),
  } as Record<string, string>;
}

const diagnose = (
  given: Record<string, string>,
  extra: { secrets?: string | string[]; body?: string; forge?: Forge; toleranceSeconds?: number } = {},
) =>
  diagnoseSignature({
    body: extra.body ?? BODY,
    headers: given,
    secrets: extra.secrets ?? SECRET,
    forge: extra.forge ?? 'standard',
    ...(extra.toleranceSeconds === undefined ? {} : { toleranceSeconds: extra.toleranceSeconds }),
  });

describe('diagnoseSignature() for Standard Webhooks', () => {
  it('says verified, with the signature masked', () => {
    const result = diagnose(headers());
    expect(result.verdict).toBe('verified');
    expect(result.reasons[0]?.code).toBe('verified');
    expect(result.checked).toHaveLength(1);
    expect(result.checked[0]).toMatchObject({
      header: 'webhook-signature',
      scheme: 'standard',
      matches: true,
    });
    expect(result.checked[0]?.signature).toMatch(/^v1,.{4}…\[44 characters\]$/);
  });

  it('says how stale or how far ahead a timestamp is, and that the signature itself matches', () => {
    const stale = diagnose(headers({ offset: -7200 }));
    expect(stale.verdict).toBe('bad_signature');
    expect(stale.reasons.map((reason) => reason.code)).toEqual(['stale_timestamp', 'verified']);
    expect(stale.reasons[0]?.message).toMatch(
      /^"webhook-timestamp" is 720\d s \(2 h 0 min\) old, beyond the tolerance of 300 s \(5 min 0 s\): a late delivery, a captured one replayed/,
    );
    const future = diagnose(headers({ offset: 400 }), { toleranceSeconds: 60 });
    expect(future.reasons[0]).toMatchObject({ code: 'future_timestamp' });
    expect(future.reasons[0]?.message).toMatch(
      /is (399|40\d) s \(6 min \d+ s\) in the future, beyond the tolerance of 60 s/,
    );
  });

  it('tells a changed body, a wrong secret and a malformed header apart', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(diagnose(headers(), { body: pretty }).reasons[0]).toMatchObject({ code: 'reserialized' });
    const wrong = diagnose(headers({ key: Buffer.from('another key') }));
    expect(wrong.reasons[0]?.code).toBe('wrong_secret');
    expect(wrong.reasons[0]?.message).toMatch(
      /not made with the configured secret over this id, timestamp and body/,
    );
    const malformed = diagnose({ ...headers(), 'webhook-signature': 'sha256=abcdef' });
    expect(malformed.reasons[0]?.code).toBe('malformed_signature');
    const notSeconds = diagnose({ ...headers(), 'webhook-timestamp': '2026-11-26T10:00:00Z' });
    expect(notSeconds.reasons[0]).toMatchObject({ code: 'malformed_timestamp' });
    const { 'webhook-id': _id, ...noId } = headers();
    expect(diagnose(noId)).toMatchObject({
      verdict: 'missing_header',
      reasons: [{ code: 'missing_header', message: expect.stringContaining('"webhook-id" is missing') }],
    });
    const { 'webhook-signature': _signature, ...unsigned } = headers();
    expect(diagnose(unsigned).verdict).toBe('missing_header');
  });

  it('finds a whsec_ secret that is not base64, and a sender that keyed with the whsec_ text itself', () => {
    const broken = diagnose(headers(), { secrets: ['whsec_not*base64', SECRET] });
    // The receiver refuses such a list at its configuration: the good secret's match is said, not taken.
    expect(broken.verdict).toBe('bad_signature');
    expect(broken.reasons.map((reason) => reason.code)).toEqual(['secret_not_base64', 'verified']);
    expect(broken.reasons[0]?.message).toMatch(
      /^secret 1 of the list starts with "whsec_" but the rest is not base64/,
    );
    const onlyBroken = diagnose(headers(), { secrets: 'whsec_not*base64' });
    expect(onlyBroken.reasons.map((reason) => reason.code)).toContain('secret_not_base64');
    const undecoded = diagnose(headers({ key: Buffer.from(SECRET, 'utf8') }));
    expect(undecoded.reasons[0]?.code).toBe('secret_not_decoded');
    for (const reason of [...broken.reasons, ...onlyBroken.reasons, ...undecoded.reasons]) {
      expect(reason.message).not.toContain(SECRET.slice(6, 20));
    }
  });

  it('asks for the headers when only a signature value is given', () => {
    const result = diagnoseSignature({ body: BODY, signature: 'v1,abc', secrets: SECRET, forge: 'svix' });
    expect(result.verdict).toBe('missing_header');
    expect(result.reasons[0]?.message).toContain('"svix-id", "svix-timestamp" and "svix-signature"');
  });

  it('diagnoses GitLab the token way without its signature headers, and the standard way with them', () => {
    const token = diagnoseSignature({
      body: BODY,
      headers: { 'x-gitlab-token': 'nope' },
      secrets: 'token',
      forge: 'gitlab',
    });
    expect(token.reasons[0]?.code).toBe('wrong_token');
    expect(diagnose(headers({ offset: -999 }), { forge: 'gitlab' }).reasons[0]?.code).toBe('stale_timestamp');
    expect(() => diagnose(headers(), { toleranceSeconds: -1 })).toThrow(
      '"toleranceSeconds" must be a positive integer',
    );
  });
});
