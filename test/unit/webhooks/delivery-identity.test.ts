// What a delivery is, as readDelivery tells it: GitHub's GUID names the event and X-GitHub-Hook-ID the hook
// (two Apps on one URL get one GUID each with its own hook); Bitbucket's X-Hook-UUID names the hook too. Where a
// scheme signs an id (Standard Webhooks), the delivery is that id: another id header that disagrees is refused,
// so one signed delivery cannot pass again under a new Idempotency-Key or svix-id.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readDelivery, resolvePreset, sign } from '../../../lib/webhooks/index.js';
import { standardKey } from '../../../lib/webhooks/standard.js';

const SECRET = 'hook-identity-secret';
const BODY = '{"action":"opened","issue":{"number":1},"installation":{"id":501}}';

function github(headers: Record<string, string>) {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': 'guid-1',
      'x-hub-signature-256': sign(SECRET, BODY),
      ...headers,
    },
    body: BODY,
  };
}

describe('the hook a delivery comes from', () => {
  it("reads GitHub's X-GitHub-Hook-ID beside the GUID, and nothing when a delivery has none", () => {
    expect(
      readDelivery(github({ 'x-github-hook-id': '1101' }), { secret: SECRET, forge: 'github' }),
    ).toMatchObject({
      ok: true,
      id: 'guid-1',
      hook: '1101',
    });
    const without = readDelivery(github({}), { secret: SECRET, forge: 'github' });
    expect(without.ok).toBe(true);
    expect(without).not.toHaveProperty('hook');
  });

  it("reads Bitbucket's X-Hook-UUID, and names the hook header of each preset", () => {
    const body = '{"repository":{"full_name":"a/b"}}';
    const result = readDelivery(
      {
        headers: {
          'content-type': 'application/json',
          'x-event-key': 'repo:push',
          'x-request-uuid': 'req-1',
          'x-hook-uuid': '{5a2e0bd4-1c63-4e2c-a6a5-0f1fb8c5b6a3}',
          'x-hub-signature': sign(SECRET, body),
        },
        body,
      },
      { secret: SECRET, forge: 'bitbucket' },
    );
    expect(result).toMatchObject({ ok: true, id: 'req-1', hook: '{5a2e0bd4-1c63-4e2c-a6a5-0f1fb8c5b6a3}' });
    expect(resolvePreset('github').hookHeaders).toEqual(['x-github-hook-id']);
    expect(resolvePreset('bitbucket').hookHeaders).toEqual(['x-hook-uuid']);
    // Their delivery ids are already one hook's: a task's UUID (Gitea, Forgejo), an Idempotency-Key (GitLab).
    for (const forge of ['generic', 'gitea', 'forgejo', 'gitlab', 'standard', 'svix'] as const) {
      expect(resolvePreset(forge).hookHeaders, forge).toEqual([]);
    }
  });

  it('refuses a hook header that is not a hook id, as a 400 that names the header', () => {
    for (const value of ['1101 1102', 'a'.repeat(129), '<script>', '11#01']) {
      expect(
        readDelivery(github({ 'x-github-hook-id': value }), { secret: SECRET, forge: 'github' }),
        value,
      ).toEqual({
        ok: false,
        status: 400,
        code: 'invalid_header',
        message: '"x-github-hook-id" is not a hook id',
      });
    }
  });
});

describe('the id a signature covers is the delivery id', () => {
  const KEY_SECRET = 'whsec_c3RhbmRhcmQtd2ViaG9va3MtdGVzdC1rZXktMzItYnl0ZXMh';
  const key = standardKey(KEY_SECRET);
  const v1 = (id: string, timestamp: number, body: string) =>
    `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  const now = () => Math.floor(Date.now() / 1000);
  const gitlabBody = '{"object_kind":"push","ref":"refs/heads/main"}';

  function gitlab(headers: Record<string, string>) {
    const timestamp = now();
    return {
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': 'Push Hook',
        'webhook-id': 'idem-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': v1('idem-1', timestamp, gitlabBody),
        ...headers,
      },
      body: gitlabBody,
    };
  }

  it('dedupes a signed GitLab delivery under its signed webhook-id, and refuses a disagreeing Idempotency-Key', () => {
    expect(
      readDelivery(gitlab({ 'idempotency-key': 'idem-1' }), { secret: KEY_SECRET, forge: 'gitlab' }),
    ).toMatchObject({
      ok: true,
      id: 'idem-1',
    });
    // The same signed delivery resent under a new Idempotency-Key would be a new delivery: refused.
    expect(
      readDelivery(gitlab({ 'idempotency-key': 'idem-2' }), { secret: KEY_SECRET, forge: 'gitlab' }),
    ).toEqual({
      ok: false,
      status: 400,
      code: 'invalid_header',
      message: 'the delivery id header disagrees with the signed "webhook-id"',
    });
  });

  it("refuses svix-* headers renamed to webhook-* beside an svix-id of the sender's choosing", () => {
    const timestamp = now();
    const body = '{"type":"contact.created"}';
    const renamed = {
      headers: {
        'content-type': 'application/json',
        'svix-id': 'msg_new',
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': v1('msg_1', timestamp, body),
      },
      body,
    };
    expect(readDelivery(renamed, { secret: KEY_SECRET, forge: 'svix' })).toMatchObject({
      ok: false,
      status: 400,
      code: 'invalid_header',
    });
    // The same delivery with its own ids only passes, under the signed one.
    const { 'svix-id': _, ...own } = renamed.headers;
    expect(readDelivery({ ...renamed, headers: own }, { secret: KEY_SECRET, forge: 'svix' })).toMatchObject({
      ok: true,
      id: 'msg_1',
    });
  });
});
