// The Standard Webhooks scheme of the `standard`, `svix` and `gitlab` presets. The vectors are written from the
// specification's text: the signed content is `msg_id.timestamp.payload`, the key the base64 after `whsec_`,
// the signature `v1,` and the base64 HMAC-SHA256, several space-separated signatures of which any `v1` one may
// match, and a timestamp refused when it is too far from now either way.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryOptions,
  deliveryHeaders,
  readDelivery,
  resolvePreset,
  sign,
  standardSecret,
  Webhooks,
} from '../../../lib/webhooks/index.js';
import { replayHeaders } from '../../../lib/webhooks/replay-headers.js';
import {
  checkTimestamp,
  matchStandard,
  splitEventType,
  standardKey,
} from '../../../lib/webhooks/standard.js';

// The specification's worked example.
const SPEC = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
} as const;

const SECRET = 'whsec_c3RhbmRhcmQtd2ViaG9va3MtdGVzdC1rZXktMzItYnl0ZXMh';
const KEY = Buffer.from('c3RhbmRhcmQtd2ViaG9va3MtdGVzdC1rZXktMzItYnl0ZXMh', 'base64');
const now = () => Math.floor(Date.now() / 1000);

/** A signature written from the scheme's description, independently of the library's signer. */
function v1(key: Buffer, id: string, timestamp: number | string, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function delivery(
  body: string,
  options: { id?: string; timestamp?: number | string; signature?: string; key?: Buffer } = {},
) {
  const id = options.id ?? 'msg_1';
  const timestamp = options.timestamp ?? now();
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': options.signature ?? v1(options.key ?? KEY, id, timestamp, body),
    },
    body,
  };
}

const BODY = '{"type":"contact.created","timestamp":"2026-01-01T00:00:00Z","data":{"name":"Zoë 漢字 🚀"}}';
const standard = (extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
  secret: SECRET,
  forge: 'standard',
  ...extra,
});

describe('the specification vectors', () => {
  it('signs the worked example to its signature', () => {
    expect(sign(SPEC.secret, SPEC.body, { forge: 'standard', id: SPEC.id, timestamp: SPEC.timestamp })).toBe(
      SPEC.signature,
    );
    const key = standardKey(SPEC.secret);
    expect(matchStandard([key], SPEC.id, String(SPEC.timestamp), SPEC.body, SPEC.signature)).toBe(0);
  });

  it('reads a bare base64 secret as the same key as its whsec_ form, and another secret as raw bytes', () => {
    expect(standardKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toEqual(standardKey(SPEC.secret));
    expect(standardKey('not base64: a token!')).toEqual(Buffer.from('not base64: a token!', 'utf8'));
    expect(() => standardKey('whsec_not*base64')).toThrow(
      new TypeError('a "whsec_" secret must be followed by base64'),
    );
  });

  it('makes whsec_ secrets of 32 bytes with standardSecret(): random, or derived from a text', () => {
    const one = standardSecret();
    expect(one).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardKey(one)).toHaveLength(32);
    expect(standardSecret()).not.toBe(one);
    expect(standardSecret('dev-secret-standard')).toBe(standardSecret('dev-secret-standard'));
    expect(standardSecret('dev-secret-standard')).not.toBe(standardSecret('dev-secret-svix'));
  });

  it('refuses a changed payload, id or timestamp', () => {
    const key = standardKey(SPEC.secret);
    const t = String(SPEC.timestamp);
    expect(matchStandard([key], SPEC.id, t, '{"test": 2432232315}', SPEC.signature)).toBe(-1);
    expect(matchStandard([key], 'msg_p5jXN8AQM9LWM0D4loKWxJel', t, SPEC.body, SPEC.signature)).toBe(-1);
    expect(matchStandard([key], SPEC.id, String(SPEC.timestamp + 1), SPEC.body, SPEC.signature)).toBe(-1);
  });

  it('accepts any v1 signature of a space-separated list, and skips other versions and malformed entries', () => {
    const key = standardKey(SPEC.secret);
    const t = String(SPEC.timestamp);
    const digest = SPEC.signature.slice(3);
    const wrong = 'v1,Ld7yfQ7yB6Ob3Z3WvLyS5QFe8Pt3k4yC1a8r9XFzNP4=';
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `${wrong} ${SPEC.signature}`)).toBe(0);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `v1a,${digest} ${SPEC.signature} v2,xyz`)).toBe(0);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `v2,${digest}`)).toBe(-1);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `v1a,${digest}`)).toBe(-1);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, digest)).toBe(-1);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `v1,${digest.slice(0, -2)}`)).toBe(-1);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, `v1,${digest}=`)).toBe(-1);
    expect(matchStandard([key], SPEC.id, t, SPEC.body, '')).toBe(-1);
  });

  it('tells which key of several signed, by position', () => {
    const key = standardKey(SPEC.secret);
    const t = String(SPEC.timestamp);
    expect(matchStandard([KEY, key], SPEC.id, t, SPEC.body, SPEC.signature)).toBe(1);
    expect(matchStandard([KEY], SPEC.id, t, SPEC.body, SPEC.signature)).toBe(-1);
  });

  it('refuses a timestamp more than the tolerance away from now, either way, and nothing at the tolerance', () => {
    const at = 1_700_000_000_000;
    const t = at / 1000;
    expect(checkTimestamp(String(t - 300), 300, at)).toEqual({ ok: true, seconds: t - 300 });
    expect(checkTimestamp(String(t + 300), 300, at)).toEqual({ ok: true, seconds: t + 300 });
    expect(checkTimestamp(String(t - 301), 300, at)).toEqual({
      ok: false,
      reason: 'stale',
      by: 301,
      tolerance: 300,
    });
    expect(checkTimestamp(String(t + 301), 300, at)).toEqual({
      ok: false,
      reason: 'future',
      by: 301,
      tolerance: 300,
    });
    for (const bad of ['', '-5', '1.5', '1e9', ' 1', 'abc', '1614265330000000000']) {
      expect(checkTimestamp(bad, 300, at)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('splits the payload type at its first dot', () => {
    expect(splitEventType('contact.created')).toEqual({ name: 'contact', action: 'created' });
    expect(splitEventType('invoice.payment.failed')).toEqual({ name: 'invoice', action: 'payment.failed' });
    expect(splitEventType('ping')).toEqual({ name: 'ping', action: undefined });
    expect(splitEventType('.x')).toEqual({ name: '.x', action: undefined });
  });
});

describe('readDelivery() with the standard preset', () => {
  it('verifies, takes the id from webhook-id and the event from the payload type', () => {
    const result = readDelivery(delivery(BODY), standard());
    expect(result).toMatchObject({
      ok: true,
      id: 'msg_1',
      name: 'contact',
      action: 'created',
      forge: 'standard',
      nativeName: 'contact.created',
      nativeAction: 'created',
    });
  });

  it('accepts a delivery signed with any of several secrets (rotation), and the raw form of a secret', () => {
    const other = 'whsec_b3RoZXIta2V5LW9mLWEtcm90YXRpb24tMzItYnl0ZXMhIQ==';
    const signed = delivery(BODY);
    expect(readDelivery(signed, standard({ secret: [other, SECRET] })).ok).toBe(true);
    const raw = delivery(BODY, { key: Buffer.from('a raw secret, not base64!') });
    expect(readDelivery(raw, standard({ secret: 'a raw secret, not base64!' })).ok).toBe(true);
  });

  it('answers 401 stale_timestamp and future_timestamp saying by how much', () => {
    const stale = readDelivery(delivery(BODY, { timestamp: now() - 3600 }), standard());
    expect(stale).toMatchObject({ ok: false, status: 401, code: 'stale_timestamp' });
    expect(!stale.ok && stale.message).toMatch(
      /^"webhook-timestamp" is 36\d\d s \(60 min \d+ s\) old, beyond the tolerance of 300 s/,
    );
    const future = readDelivery(delivery(BODY, { timestamp: now() + 900 }), standard());
    expect(future).toMatchObject({ ok: false, status: 401, code: 'future_timestamp' });
    expect(!future.ok && future.message).toMatch(/in the future, beyond the tolerance of 300 s/);
  });

  it('takes the tolerance from toleranceSeconds', () => {
    const late = delivery(BODY, { timestamp: now() - 1200 });
    expect(readDelivery(late, standard()).ok).toBe(false);
    expect(readDelivery(late, standard({ toleranceSeconds: 3600 })).ok).toBe(true);
    expect(
      readDelivery(delivery(BODY, { timestamp: now() - 30 }), standard({ toleranceSeconds: 10 })),
    ).toMatchObject({
      code: 'stale_timestamp',
    });
    expect(() => readDelivery(late, standard({ toleranceSeconds: 0 }))).toThrow(
      '"toleranceSeconds" must be a positive integer',
    );
  });

  it('answers 401 invalid_signature for a changed body, a wrong secret or a signature over another id', () => {
    const good = delivery(BODY);
    const tampered = { ...good, body: BODY.replace('Zoë', 'Zoe') };
    for (const request of [tampered, delivery(BODY, { key: Buffer.from('wrong') })]) {
      expect(readDelivery(request, standard())).toMatchObject({
        status: 401,
        code: 'invalid_signature',
        message: 'signature does not match the id, timestamp and body',
      });
    }
    const otherId = { ...good, headers: { ...good.headers, 'webhook-id': 'msg_2' } };
    expect(readDelivery(otherId, standard())).toMatchObject({ status: 401, code: 'invalid_signature' });
  });

  it('answers 400 for a missing header, a malformed timestamp or a payload without a type', () => {
    const good = delivery(BODY);
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers = Object.fromEntries(Object.entries(good.headers).filter(([name]) => name !== header));
      expect(readDelivery({ ...good, headers }, standard())).toMatchObject({
        status: 400,
        code: 'missing_header',
        message: `missing "${header}" header`,
      });
    }
    const malformed = { ...good, headers: { ...good.headers, 'webhook-timestamp': '2026-01-01T00:00:00Z' } };
    expect(readDelivery(malformed, standard())).toMatchObject({ status: 400, code: 'invalid_header' });
    expect(readDelivery(delivery('{"data":{}}'), standard())).toMatchObject({
      status: 400,
      code: 'invalid_json',
      message: 'body has no "type" string naming the event',
    });
    expect(readDelivery(delivery(''), standard())).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it('refuses a whsec_ secret that is not base64 at configuration, naming no secret', () => {
    expect(() => readDelivery(delivery(BODY), standard({ secret: 'whsec_s3cr*t' }))).toThrow(
      new TypeError('"secret": a "whsec_" secret must be followed by base64'),
    );
  });

  it('reads the svix-* names with the svix preset, and the webhook-* ones it may send instead', () => {
    const signed = delivery(BODY);
    const svix = {
      ...signed,
      headers: {
        'content-type': 'application/json',
        'svix-id': signed.headers['webhook-id'],
        'svix-timestamp': signed.headers['webhook-timestamp'],
        'svix-signature': signed.headers['webhook-signature'],
      },
    };
    expect(readDelivery(svix, { secret: SECRET, forge: 'svix' })).toMatchObject({
      ok: true,
      id: 'msg_1',
      name: 'contact',
    });
    expect(readDelivery(signed, { secret: SECRET, forge: 'svix' })).toMatchObject({ ok: true, id: 'msg_1' });
    expect(readDelivery(svix, standard())).toMatchObject({ status: 400, code: 'missing_header' });
  });

  it('writes the scheme headers with deliveryHeaders() and sign()', () => {
    const timestamp = now();
    const headers = deliveryHeaders(SECRET, BODY, {
      forge: 'standard',
      name: 'ignored',
      id: 'msg_9',
      timestamp,
    });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'webhook-id': 'msg_9',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': v1(KEY, 'msg_9', timestamp, BODY),
    });
    expect(sign(SECRET, BODY, { forge: 'svix', id: 'msg_9', timestamp })).toBe(headers['webhook-signature']);
    expect(() => sign(SECRET, BODY, { forge: 'standard' })).toThrow('"id" must be a non-empty string');
    expect(() => sign(SECRET, BODY, { forge: 'standard', id: 'x', timestamp: 1.5 })).toThrow('"timestamp"');
    const svix = deliveryHeaders(SECRET, BODY, { forge: 'svix', name: 'x', id: 'msg_9', timestamp });
    expect(Object.keys(svix).sort()).toEqual(['content-type', 'svix-id', 'svix-signature', 'svix-timestamp']);
    expect(readDelivery({ headers: svix, body: BODY }, { secret: SECRET, forge: 'svix' }).ok).toBe(true);
  });

  it('routes contact.created to on("contact.created") and on("contact")', async () => {
    const webhooks = new Webhooks({ secret: SECRET, forge: 'standard' });
    const seen: string[] = [];
    webhooks.on('contact.created' as never, () => void seen.push('contact.created'));
    webhooks.on('contact' as never, () => void seen.push('contact'));
    const result = readDelivery(delivery(BODY), standard());
    if (!result.ok) throw new Error('not verified');
    await webhooks.receive({
      id: result.id,
      name: result.name,
      action: result.action,
      payload: result.payload,
    });
    expect(seen.sort()).toEqual(['contact', 'contact.created']);
  });
});

describe('the gitlab preset with a signing token', () => {
  const TOKEN = 'gitlab-shared-token';
  const gitlabBody = '{"object_kind":"push","ref":"refs/heads/main"}';
  function signedByGitlab(body: string, secret = SECRET) {
    const timestamp = now();
    return {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': 'Push Hook',
        'idempotency-key': 'idem-1',
        'x-gitlab-event-uuid': 'uuid-1',
        'webhook-id': 'idem-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': v1(standardKey(secret), 'idem-1', timestamp, body),
      },
      body,
    };
  }

  it('verifies the signature when its headers are present, routes by X-Gitlab-Event, keeps Idempotency-Key', () => {
    const result = readDelivery(signedByGitlab(gitlabBody), { secret: [TOKEN, SECRET], forge: 'gitlab' });
    expect(result).toMatchObject({
      ok: true,
      id: 'idem-1',
      name: 'push',
      nativeName: 'Push Hook',
      forge: 'gitlab',
    });
    const tampered = { ...signedByGitlab(gitlabBody), body: gitlabBody.replace('main', 'evil') };
    expect(readDelivery(tampered, { secret: SECRET, forge: 'gitlab' })).toMatchObject({ status: 401 });
    const late = signedByGitlab(gitlabBody);
    late.headers['webhook-timestamp'] = String(now() - 1000);
    expect(readDelivery(late, { secret: SECRET, forge: 'gitlab' })).toMatchObject({
      status: 401,
      code: 'stale_timestamp',
    });
  });

  it('still verifies the shared token when no signature is sent, unless the source requires the signature', () => {
    const tokenOnly = {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': 'Push Hook',
        'idempotency-key': 'idem-2',
        'x-gitlab-token': TOKEN,
      },
      body: gitlabBody,
    };
    expect(readDelivery(tokenOnly, { secret: [TOKEN, SECRET], forge: 'gitlab' }).ok).toBe(true);
    expect(
      readDelivery(tokenOnly, { secret: [TOKEN, SECRET], forge: 'gitlab', verifyWith: 'signature' }),
    ).toMatchObject({
      status: 400,
      code: 'missing_header',
      message: 'missing "webhook-signature" header',
    });
    expect(readDelivery(tokenOnly, { secret: TOKEN, forge: 'gitlab', verifyWith: 'token' }).ok).toBe(true);
    // Required to carry the token, a signed delivery without one is refused.
    expect(
      readDelivery(signedByGitlab(gitlabBody), { secret: SECRET, forge: 'gitlab', verifyWith: 'token' }),
    ).toMatchObject({
      status: 400,
      message: 'missing "x-gitlab-token" header',
    });
    expect(
      readDelivery(signedByGitlab(gitlabBody), { secret: SECRET, forge: 'gitlab', verifyWith: 'signature' })
        .ok,
    ).toBe(true);
  });

  it('writes the signing headers with deliveryHeaders() when the first secret is a whsec_ one', () => {
    const headers = deliveryHeaders(SECRET, gitlabBody, { forge: 'gitlab', name: 'Push Hook', id: 'idem-3' });
    expect(headers['x-gitlab-token']).toBeUndefined();
    expect(headers['webhook-id']).toBe('idem-3');
    expect(headers['idempotency-key']).toBe('idem-3');
    expect(
      readDelivery(
        { headers, body: gitlabBody },
        { secret: SECRET, forge: 'gitlab', verifyWith: 'signature' },
      ),
    ).toMatchObject({
      ok: true,
      id: 'idem-3',
    });
    expect(
      deliveryHeaders(TOKEN, gitlabBody, { forge: 'gitlab', name: 'Push Hook', id: 'i' })['x-gitlab-token'],
    ).toBe(TOKEN);
  });

  it('refuses verifyWith where it does not apply, or with an unknown value', () => {
    expect(() =>
      readDelivery(signedByGitlab(gitlabBody), { secret: SECRET, forge: 'github', verifyWith: 'token' }),
    ).toThrow('"verifyWith" does not apply to forge "github"');
    expect(() =>
      readDelivery(signedByGitlab(gitlabBody), {
        secret: SECRET,
        forge: 'gitlab',
        verifyWith: 'both' as never,
      }),
    ).toThrow('"verifyWith" must be "signature" or "token"');
    expect(resolvePreset('gitlab').standardHeaders).toEqual([
      { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' },
    ]);
  });
});

describe('replayHeaders() for the Standard Webhooks scheme', () => {
  it('signs a stored delivery again with a timestamp of now, under the new id', () => {
    const stored = delivery(BODY, { timestamp: now() - 86_400 }).headers;
    expect(readDelivery({ headers: stored, body: BODY }, standard())).toMatchObject({
      code: 'stale_timestamp',
    });
    const headers = replayHeaders(stored, Buffer.from(BODY), {
      secret: SECRET,
      forge: 'standard',
      id: 'msg_again',
    });
    expect(headers['webhook-id']).toBe('msg_again');
    expect(Math.abs(Number(headers['webhook-timestamp']) - now())).toBeLessThanOrEqual(5);
    expect(readDelivery({ headers, body: BODY }, standard())).toMatchObject({ ok: true, id: 'msg_again' });
  });

  it('drops a stored GitLab signature when the replay secret is the shared token', () => {
    const stored = {
      'content-type': 'application/json',
      'x-gitlab-event': 'Push Hook',
      'idempotency-key': 'idem-1',
      'webhook-id': 'idem-1',
      'webhook-timestamp': String(now() - 86_400),
      'webhook-signature': 'v1,[masked]',
      'x-gitlab-token': '[masked]',
    };
    const body = Buffer.from('{"object_kind":"push"}');
    const headers = replayHeaders(stored, body, { secret: 'token', forge: 'gitlab', id: 'idem-2' });
    expect(headers['webhook-signature']).toBeUndefined();
    expect(headers['webhook-timestamp']).toBeUndefined();
    expect(headers['x-gitlab-token']).toBe('token');
    expect(readDelivery({ headers, body }, { secret: 'token', forge: 'gitlab' })).toMatchObject({
      ok: true,
      id: 'idem-2',
    });
    const signed = replayHeaders(stored, body, { secret: SECRET, forge: 'gitlab', id: 'idem-3' });
    expect(
      readDelivery({ headers: signed, body }, { secret: SECRET, forge: 'gitlab', verifyWith: 'signature' }),
    ).toMatchObject({
      ok: true,
      id: 'idem-3',
    });
  });
});
