import { describe, expect, it } from 'vitest';
import {
  type DeliveryOptions,
  type DeliveryRequest,
  readDelivery,
  sign,
} from '../../../lib/webhooks/index.js';

const SECRET = 'delivery-test-secret';
const BODY = '{"action":"opened","issue":{"number":7,"title":"café 🎉"}}';

function request(overrides: Partial<DeliveryRequest> = {}, headers: Record<string, string | undefined> = {}) {
  return {
    method: 'POST',
    body: BODY,
    ...overrides,
    headers: {
      'content-type': 'application/json',
      'x-forge-event': 'issues',
      'x-forge-delivery': 'delivery-1',
      'x-hub-signature-256': sign(SECRET, overrides.body ?? BODY),
      ...headers,
    },
  } satisfies DeliveryRequest;
}

const options: DeliveryOptions = { secret: SECRET };

describe('readDelivery()', () => {
  it('returns the verified, parsed delivery with its exact raw bytes', () => {
    const result = readDelivery(request(), options);
    expect(result).toEqual({
      ok: true,
      id: 'delivery-1',
      name: 'issues',
      action: 'opened',
      forge: 'generic',
      nativeName: 'issues',
      nativeAction: 'opened',
      payload: JSON.parse(BODY),
      rawBody: Buffer.from(BODY, 'utf8'),
      secretIndex: 0,
    });
  });

  it('accepts the body as bytes and keeps them without copying a Buffer', () => {
    const bytes = Buffer.from(BODY, 'utf8');
    const result = readDelivery(request({ body: bytes }), options);
    expect(result.ok && result.rawBody).toBe(bytes);
    const view = new Uint8Array(bytes);
    const fromView = readDelivery(request({ body: view }), options);
    expect(fromView.ok && fromView.rawBody.equals(bytes)).toBe(true);
  });

  it('reads header names in any case and takes the first of a repeated header', () => {
    const result = readDelivery(
      {
        body: BODY,
        headers: {
          'Content-Type': 'Application/JSON; charset=UTF-8',
          'X-Forge-Event': ['issues', 'push'],
          'X-FORGE-DELIVERY': 'delivery-2',
          'X-Hub-Signature-256': sign(SECRET, BODY),
        },
      },
      options,
    );
    expect(result).toMatchObject({ ok: true, id: 'delivery-2', name: 'issues' });
  });

  it('works without a method (the Lambda ingest passes none)', () => {
    const { method: _method, ...withoutMethod } = request();
    expect(readDelivery(withoutMethod, options).ok).toBe(true);
  });

  it.each([
    ['GET', 'GET'],
    ['PUT', 'PUT'],
  ])('answers 404 for a %s request', (_label, method) => {
    expect(readDelivery(request({ method }), options)).toEqual({
      ok: false,
      status: 404,
      code: 'not_found',
      message: `method "${method}" is not allowed, use "POST"`,
    });
  });

  it('accepts a lowercase post', () => {
    expect(readDelivery(request({ method: 'post' }), options).ok).toBe(true);
  });

  it.each([
    [
      'form-encoded',
      'application/x-www-form-urlencoded',
      'content type "application/x-www-form-urlencoded" is not supported, use "application/json" in the webhook settings',
    ],
    ['text/plain', 'text/plain', 'content type "text/plain" is not supported, use "application/json"'],
    [
      'an application/jsonp',
      'application/jsonp',
      'content type "application/jsonp" is not supported, use "application/json"',
    ],
  ])('answers 415 for a %s content type', (_label, contentType, message) => {
    expect(readDelivery(request({}, { 'content-type': contentType }), options)).toEqual({
      ok: false,
      status: 415,
      code: 'unsupported_media_type',
      message,
    });
  });

  it('answers 415 when the content type is missing', () => {
    expect(readDelivery(request({}, { 'content-type': undefined }), options)).toMatchObject({
      status: 415,
      code: 'unsupported_media_type',
      message: 'content type none is not supported, use "application/json"',
    });
  });

  it.each([
    ['event', 'x-forge-event'],
    ['delivery', 'x-forge-delivery'],
    ['signature', 'x-hub-signature-256'],
  ])('answers 400 when the %s header is missing', (_label, header) => {
    expect(readDelivery(request({}, { [header]: undefined }), options)).toEqual({
      ok: false,
      status: 400,
      code: 'missing_header',
      message: `missing "${header}" header`,
    });
  });

  it('treats an empty header as missing', () => {
    expect(readDelivery(request({}, { 'x-forge-event': '' }), options)).toMatchObject({
      status: 400,
      code: 'missing_header',
    });
  });

  it('accepts a delivery without an id when requireDeliveryId is off', () => {
    const result = readDelivery(request({}, { 'x-forge-delivery': undefined }), {
      secret: SECRET,
      requireDeliveryId: false,
    });
    expect(result).toMatchObject({ ok: true, id: '', name: 'issues' });
  });

  it('answers 413 for a body over maxBodyBytes, counting bytes not characters', () => {
    const bytes = Buffer.byteLength(BODY);
    expect(readDelivery(request(), { secret: SECRET, maxBodyBytes: bytes }).ok).toBe(true);
    expect(readDelivery(request(), { secret: SECRET, maxBodyBytes: bytes - 1 })).toEqual({
      ok: false,
      status: 413,
      code: 'payload_too_large',
      message: `body is larger than the limit of ${bytes - 1} bytes`,
    });
    expect(BODY.length).toBeLessThan(bytes);
  });

  it('answers 401 for a signature made with another secret', () => {
    const result = readDelivery(
      request({}, { 'x-hub-signature-256': sign('another-secret', BODY) }),
      options,
    );
    expect(result).toEqual({
      ok: false,
      status: 401,
      code: 'invalid_signature',
      message: 'signature does not match the body',
    });
  });

  it('answers 401 for a body changed after signing', () => {
    const signature = sign(SECRET, BODY);
    const tampered = BODY.replace('7', '8');
    const result = readDelivery(request({ body: tampered }, { 'x-hub-signature-256': signature }), options);
    expect(result).toMatchObject({ status: 401, code: 'invalid_signature' });
  });

  it('answers 401 for an empty or absent body, which no signature can cover', () => {
    for (const body of ['', undefined]) {
      const result = readDelivery(
        { method: 'POST', headers: request().headers, body: body as unknown as string },
        options,
      );
      expect(result).toMatchObject({ status: 401, code: 'invalid_signature' });
    }
  });

  it('answers 401 for a garbage signature', () => {
    expect(readDelivery(request({}, { 'x-hub-signature-256': 'sha256=nope' }), options)).toMatchObject({
      status: 401,
      code: 'invalid_signature',
    });
  });

  it('checks only sha256 when X-Hub-Signature-256 is present, even if a valid sha1 is there too', () => {
    const result = readDelivery(
      request(
        {},
        {
          'x-hub-signature-256': sign('another-secret', BODY),
          'x-hub-signature': sign(SECRET, BODY, { algorithm: 'sha1' }),
        },
      ),
      options,
    );
    expect(result).toMatchObject({ status: 401, code: 'invalid_signature' });
  });

  it('refuses a sha1 value in the sha256 header', () => {
    const sha1 = sign(SECRET, BODY, { algorithm: 'sha1' });
    expect(readDelivery(request({}, { 'x-hub-signature-256': sha1 }), options)).toMatchObject({
      status: 401,
      code: 'invalid_signature',
    });
  });

  it('accepts sha1 when it is the only signature', () => {
    const result = readDelivery(
      request(
        {},
        { 'x-hub-signature-256': undefined, 'x-hub-signature': sign(SECRET, BODY, { algorithm: 'sha1' }) },
      ),
      options,
    );
    expect(result.ok).toBe(true);
  });

  it('refuses a sha256 value in the sha1 header', () => {
    const result = readDelivery(
      request({}, { 'x-hub-signature-256': undefined, 'x-hub-signature': sign(SECRET, BODY) }),
      options,
    );
    expect(result).toMatchObject({ status: 401, code: 'invalid_signature' });
  });

  it('answers 400 for a sole sha1 signature when allowSha1 is off', () => {
    const result = readDelivery(
      request(
        {},
        { 'x-hub-signature-256': undefined, 'x-hub-signature': sign(SECRET, BODY, { algorithm: 'sha1' }) },
      ),
      { secret: SECRET, allowSha1: false },
    );
    expect(result).toEqual({
      ok: false,
      status: 400,
      code: 'missing_header',
      message: 'missing "x-hub-signature-256" header ("x-hub-signature" sha1 signatures are disabled)',
    });
  });

  it('accepts a signature made with any configured secret', () => {
    const result = readDelivery(request({}, { 'x-hub-signature-256': sign('old-secret', BODY) }), {
      secret: ['new-secret', 'old-secret'],
    });
    expect(result.ok).toBe(true);
  });

  it('answers 400 for a verified body that is not JSON, parsing only after verification', () => {
    const body = '{"action": "opened"';
    expect(readDelivery(request({ body }), options)).toEqual({
      ok: false,
      status: 400,
      code: 'invalid_json',
      message: 'body is not valid JSON',
    });
    // Not verified: the signature failure wins, the body is never parsed.
    expect(
      readDelivery(request({ body }, { 'x-hub-signature-256': sign('x', body) }), options),
    ).toMatchObject({
      status: 401,
    });
  });

  it.each(['[1,2]', 'null', '42', '"text"'])('answers 400 for the verified JSON value %s', (body) => {
    expect(readDelivery(request({ body }), options)).toEqual({
      ok: false,
      status: 400,
      code: 'invalid_json',
      message: 'body must be a JSON object',
    });
  });

  it('reads configurable header names, such as a real forge sends', () => {
    const result = readDelivery(
      {
        method: 'POST',
        body: BODY,
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'issues',
          'x-github-delivery': 'gh-1',
          'x-hub-signature-256': sign(SECRET, BODY),
        },
      },
      { secret: SECRET, headers: { event: 'X-GitHub-Event', delivery: 'X-GitHub-Delivery' } },
    );
    expect(result).toMatchObject({ ok: true, id: 'gh-1', name: 'issues' });
  });

  it("reports a real forge's github_app_authorization under the neutral name", () => {
    const body = '{"action":"revoked"}';
    const result = readDelivery(request({ body }, { 'x-forge-event': 'github_app_authorization' }), options);
    expect(result).toMatchObject({ ok: true, name: 'forge_app_authorization' });
  });

  it('never puts the secret or the signature into a message', () => {
    const signature = sign('another-secret', BODY);
    const cases = [
      readDelivery(request({}, { 'x-hub-signature-256': signature }), options),
      readDelivery(request({}, { 'x-hub-signature-256': SECRET }), options),
      readDelivery(request({ body: 'nope' }), options),
    ];
    for (const result of cases) {
      expect(result.ok).toBe(false);
      const text = JSON.stringify(result);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(signature.slice(7));
    }
  });

  it.each([
    ['a missing secret', {}, '"secret" must be a non-empty string or a non-empty array of strings'],
    ['an unknown option', { secret: 's', maxBody: 1 }, 'unknown option "maxBody"'],
    ['an unknown header option', { secret: 's', headers: { id: 'x' } }, 'unknown option "headers.id"'],
    [
      'an empty header name',
      { secret: 's', headers: { event: '' } },
      '"headers.event" must be a non-empty string',
    ],
    ['a non-boolean allowSha1', { secret: 's', allowSha1: 'no' }, '"allowSha1" must be a boolean'],
    ['a zero maxBodyBytes', { secret: 's', maxBodyBytes: 0 }, '"maxBodyBytes" must be a positive integer'],
    [
      'a fractional maxBodyBytes',
      { secret: 's', maxBodyBytes: 1.5 },
      '"maxBodyBytes" must be a positive integer',
    ],
  ])('throws a TypeError for %s', (_label, badOptions, message) => {
    expect(() => readDelivery(request(), badOptions as DeliveryOptions)).toThrow(new TypeError(message));
  });
});
