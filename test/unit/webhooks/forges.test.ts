import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { routeCatalogue } from '../../../lib/webhooks/forge-routes.js';
import {
  type DeliveryRequest,
  deliveryHeaders,
  type Forge,
  Forges,
  readDelivery,
  resolvePreset,
  routeForgeEvent,
  sign,
  Webhooks,
  WebhookVerificationError,
} from '../../../lib/webhooks/index.js';
import { forgeDeliveries } from '../../fixtures/forges/deliveries.js';
import { documentedHeaders } from '../../fixtures/forges/headers.js';

const SECRET = 'forge-preset-secret';
const PRESETS: readonly Exclude<Forge, 'generic'>[] = ['github', 'gitea', 'forgejo', 'gitlab', 'bitbucket'];
const hex256 = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');
const hex1 = (body: string, secret = SECRET) => createHmac('sha1', secret).update(body).digest('hex');

function quiet() {
  return { warn: vi.fn(), error: vi.fn() };
}

function without(headers: Record<string, string>, ...names: string[]): Record<string, string> {
  const drop = new Set(names.map((name) => name.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([key]) => !drop.has(key.toLowerCase())));
}

function request(headers: Record<string, string>, body: string): DeliveryRequest {
  return { method: 'POST', headers, body };
}

describe('resolvePreset()', () => {
  it('defaults to the generic preset, the neutral headers of today', () => {
    expect(resolvePreset()).toEqual({
      forge: 'generic',
      eventHeaders: ['x-forge-event'],
      deliveryHeaders: ['x-forge-delivery'],
      hookHeaders: [],
      signatures: [
        { header: 'x-hub-signature-256', scheme: 'sha256' },
        { header: 'x-hub-signature', scheme: 'sha1' },
      ],
      standardHeaders: [],
      neutral: true,
      eventNames: 'catalogue',
      secretForm: 'text',
      signingToken: false,
      deliveryLog: undefined,
      route: routeCatalogue,
    });
  });

  it('has each forge documented headers and signature scheme', () => {
    expect(resolvePreset('github').eventHeaders).toEqual(['x-github-event']);
    expect(resolvePreset('gitea').signatures[0]).toEqual({
      header: 'x-gitea-signature',
      scheme: 'hex-sha256',
    });
    expect(resolvePreset('forgejo').eventHeaders).toEqual(['x-forgejo-event', 'x-gitea-event']);
    expect(resolvePreset('gitlab').deliveryHeaders).toEqual(['idempotency-key', 'x-gitlab-event-uuid']);
    expect(resolvePreset('gitlab').signatures).toEqual([{ header: 'x-gitlab-token', scheme: 'token' }]);
    expect(resolvePreset('bitbucket')).toMatchObject({
      eventHeaders: ['x-event-key'],
      deliveryHeaders: ['x-request-uuid'],
      signatures: [{ header: 'x-hub-signature', scheme: 'sha256' }],
    });
    expect(Forges).toEqual(['generic', ...PRESETS, 'standard', 'svix']);
  });

  it.each([['GitLab'], ['gitee'], [''], [42], [null]])(
    'refuses the unknown forge %j naming "forge"',
    (forge) => {
      const message =
        '"forge" must be one of "generic", "github", "gitea", "forgejo", "gitlab", "bitbucket", "standard", "svix"';
      expect(() => resolvePreset(forge)).toThrow(new TypeError(message));
      expect(() => readDelivery(request({}, '{}'), { secret: SECRET, forge: forge as Forge })).toThrow(
        message,
      );
      expect(() => new Webhooks({ secret: SECRET, forge: forge as Forge })).toThrow(message);
      expect(() => sign(SECRET, '{}', { forge: forge as Forge })).toThrow(message);
    },
  );
});

describe('readDelivery() with a forge preset', () => {
  it.each(forgeDeliveries.map((delivery) => [delivery.label, delivery] as const))(
    '%s: verifies the documented headers and routes onto the catalogue',
    (_label, delivery) => {
      const body = JSON.stringify(delivery.payload);
      const headers = documentedHeaders(delivery.forge, SECRET, body, delivery.nativeName, 'delivery-7');
      const result = readDelivery(request(headers, body), { secret: SECRET, forge: delivery.forge });
      expect(result).toMatchObject({
        ok: true,
        id: 'delivery-7',
        name: delivery.name,
        forge: delivery.forge,
        nativeName: delivery.nativeName,
        payload: delivery.payload,
        rawBody: Buffer.from(body),
      });
      expect(result.ok ? result.action : 'refused').toBe(delivery.action);
    },
  );

  it.each(PRESETS)('%s: reads the preset header names in any case', (forge) => {
    const delivery = forgeDeliveries.find((one) => one.forge === forge) as (typeof forgeDeliveries)[number];
    const body = JSON.stringify(delivery.payload);
    const documented = documentedHeaders(forge, SECRET, body, delivery.nativeName, 'd-case');
    for (const spell of [(key: string) => key.toLowerCase(), (key: string) => key.toUpperCase()]) {
      const headers = Object.fromEntries(
        Object.entries(documented).map(([key, value]) => [spell(key), value]),
      );
      expect(readDelivery(request(headers, body), { secret: SECRET, forge })).toMatchObject({
        ok: true,
        id: 'd-case',
        name: delivery.name,
      });
    }
  });

  it.each(PRESETS)('%s: a wrong secret is 401 invalid_signature', (forge) => {
    const delivery = forgeDeliveries.find((one) => one.forge === forge) as (typeof forgeDeliveries)[number];
    const body = JSON.stringify(delivery.payload);
    const headers = documentedHeaders(forge, 'not-the-secret', body, delivery.nativeName, 'd-1');
    expect(readDelivery(request(headers, body), { secret: SECRET, forge })).toMatchObject({
      ok: false,
      status: 401,
      code: 'invalid_signature',
    });
  });

  it.each(PRESETS.filter((forge) => forge !== 'gitlab'))(
    '%s: a body changed after signing is 401',
    (forge) => {
      const delivery = forgeDeliveries.find((one) => one.forge === forge) as (typeof forgeDeliveries)[number];
      const body = JSON.stringify(delivery.payload);
      const headers = documentedHeaders(forge, SECRET, body, delivery.nativeName, 'd-1');
      const tampered = body.replace('"', '"x":1,"');
      expect(readDelivery(request(headers, tampered), { secret: SECRET, forge })).toMatchObject({
        status: 401,
      });
    },
  );

  it('gitlab: the token carries no body integrity (documented): a changed body with the right token passes', () => {
    const body = '{"object_kind":"push"}';
    const headers = documentedHeaders('gitlab', SECRET, body, 'Push Hook', 'd-1');
    expect(
      readDelivery(request(headers, '{"object_kind":"tag_push"}'), { secret: SECRET, forge: 'gitlab' }).ok,
    ).toBe(true);
  });

  it('gitlab: the token is compared against each configured secret (rotation), any length', () => {
    const body = '{"object_kind":"push"}';
    const headers = (token: string) => ({ ...documentedHeaders('gitlab', token, body, 'Push Hook', 'd-1') });
    const options = { secret: ['old-secret', 'a-much-longer-new-secret'], forge: 'gitlab' as const };
    expect(readDelivery(request(headers('old-secret'), body), options).ok).toBe(true);
    expect(readDelivery(request(headers('a-much-longer-new-secret'), body), options).ok).toBe(true);
    for (const wrong of [
      'old-secre',
      'old-secret ',
      'OLD-SECRET',
      'x',
      'a-much-longer-new-secret-and-more',
    ]) {
      expect(readDelivery(request(headers(wrong), body), options)).toEqual({
        ok: false,
        status: 401,
        code: 'invalid_signature',
        message: 'token does not match',
      });
    }
  });

  it('gitlab: the delivery id is Idempotency-Key, else X-Gitlab-Event-UUID', () => {
    const body = '{"object_kind":"push"}';
    const headers = documentedHeaders('gitlab', SECRET, body, 'Push Hook', 'idem-1');
    expect(readDelivery(request(headers, body), { secret: SECRET, forge: 'gitlab' })).toMatchObject({
      id: 'idem-1',
    });
    const older = without(headers, 'Idempotency-Key');
    expect(readDelivery(request(older, body), { secret: SECRET, forge: 'gitlab' })).toMatchObject({
      id: 'uuid-idem-1',
    });
    expect(
      readDelivery(request(without(older, 'X-Gitlab-Event-UUID'), body), { secret: SECRET, forge: 'gitlab' }),
    ).toEqual({
      ok: false,
      status: 400,
      code: 'missing_header',
      message: 'missing "idempotency-key" header',
    });
  });

  describe.each(['gitea', 'forgejo'] as const)('%s signatures', (forge) => {
    const body = '{"action":"opened","number":1}';
    const own = forge === 'gitea' ? 'X-Gitea-Signature' : 'X-Forgejo-Signature';
    const all = () => documentedHeaders(forge, SECRET, body, 'pull_request', 'd-1');
    const read = (headers: Record<string, string>) =>
      readDelivery(request(headers, body), { secret: SECRET, forge });
    const hexHeaders =
      forge === 'gitea' ? ['X-Gitea-Signature'] : ['X-Forgejo-Signature', 'X-Gitea-Signature'];

    it('a delivery with both signatures verifies, and on either one alone', () => {
      expect(read(all())).toMatchObject({ ok: true, name: 'pull_request', action: 'opened' });
      expect(read(without(all(), 'X-Hub-Signature-256', 'X-Hub-Signature'))).toMatchObject({ ok: true });
      expect(read(without(all(), ...hexHeaders))).toMatchObject({ ok: true });
    });

    it('every sha256 signature present must match: one wrong is 401', () => {
      expect(read({ ...all(), [own]: hex256(body, 'other') })).toMatchObject({ status: 401 });
      expect(read({ ...all(), 'X-Hub-Signature-256': `sha256=${hex256(body, 'other')}` })).toMatchObject({
        status: 401,
      });
      expect(read({ ...all(), [own]: `sha256=${hex256(body)}` })).toMatchObject({ status: 401 });
      expect(read({ ...all(), [own]: hex256(body).toUpperCase() })).toMatchObject({ status: 401 });
    });

    it('never downgrades to sha1: a valid X-Hub-Signature does not rescue a wrong sha256 one', () => {
      const sha1Only = without(all(), ...hexHeaders, 'X-Hub-Signature-256');
      expect(read(sha1Only)).toMatchObject({ ok: true });
      expect(read({ ...sha1Only, [own]: hex256(body, 'other') })).toMatchObject({ status: 401 });
      expect(
        readDelivery(request(sha1Only, body), { secret: SECRET, forge, allowSha1: false }),
      ).toMatchObject({ status: 400, code: 'missing_header' });
    });
  });

  it('github and generic: a sha1 X-Hub-Signature is refused when a sha256 one is present and wrong', () => {
    const body = '{"action":"opened"}';
    for (const forge of ['github', 'generic'] as const) {
      const headers = {
        ...documentedHeaders(forge, SECRET, body, 'issues', 'd-1'),
        'X-Hub-Signature-256': `sha256=${hex256(body, 'other')}`,
        'X-Hub-Signature': `sha1=${hex1(body)}`,
      };
      expect(readDelivery(request(headers, body), { secret: SECRET, forge })).toMatchObject({ status: 401 });
    }
  });

  it('bitbucket: X-Hub-Signature must be sha256=<hex>; sha1= and the bare hex are refused', () => {
    const body = '{"push":{"changes":[]}}';
    const headers = documentedHeaders('bitbucket', SECRET, body, 'repo:push', 'd-1');
    const read = (signature: string) =>
      readDelivery(request({ ...headers, 'X-Hub-Signature': signature }, body), {
        secret: SECRET,
        forge: 'bitbucket',
      });
    expect(read(`sha256=${hex256(body)}`)).toMatchObject({ ok: true, name: 'push' });
    expect(read(`sha1=${hex1(body)}`)).toMatchObject({ status: 401 });
    expect(read(hex256(body))).toMatchObject({ status: 401 });
  });

  describe.each(PRESETS)('%s: malformed deliveries get only 4xx', (forge) => {
    const delivery = forgeDeliveries.find((one) => one.forge === forge) as (typeof forgeDeliveries)[number];
    const body = JSON.stringify(delivery.payload);
    const headers = documentedHeaders(forge, SECRET, body, delivery.nativeName, 'd-1');
    const preset = resolvePreset(forge);
    const read = (req: DeliveryRequest) => readDelivery(req, { secret: SECRET, forge });

    it('missing event, delivery or signature header: 400 naming the header', () => {
      const allEvents = Object.keys(headers).filter((key) => preset.eventHeaders.includes(key.toLowerCase()));
      expect(read(request(without(headers, ...allEvents), body))).toEqual({
        ok: false,
        status: 400,
        code: 'missing_header',
        message: `missing "${preset.eventHeaders[0]}" header`,
      });
      const allIds = Object.keys(headers).filter((key) => preset.deliveryHeaders.includes(key.toLowerCase()));
      expect(read(request(without(headers, ...allIds), body))).toMatchObject({ status: 400 });
      const allSignatures = preset.signatures.map((source) => source.header);
      expect(read(request(without(headers, ...allSignatures), body))).toEqual({
        ok: false,
        status: 400,
        code: 'missing_header',
        message: `missing "${preset.signatures[0]?.header}" header`,
      });
    });

    it('bad JSON, a JSON array, an empty body, a wrong method and a wrong type', () => {
      for (const bad of ['{"a":', '[1,2]', 'null']) {
        const signed = documentedHeaders(forge, SECRET, bad, delivery.nativeName, 'd-1');
        expect(read(request(signed, bad))).toMatchObject({ ok: false, status: 400, code: 'invalid_json' });
      }
      const empty = read(request(headers, ''));
      expect(empty.ok).toBe(false);
      expect(!empty.ok && empty.status >= 400 && empty.status < 500).toBe(true);
      expect(read({ ...request(headers, body), method: 'PUT' })).toMatchObject({ status: 404 });
      expect(
        read(request({ ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body)),
      ).toMatchObject({
        status: 415,
      });
    });

    it('garbage in every signature header is 401, never a throw', () => {
      for (const garbage of ['x', 'sha256=', 'sha256=zz', `${'a'.repeat(64)}é`, 'sha1=', '\u0000']) {
        const mangled = { ...headers };
        for (const { header } of preset.signatures) {
          const key = Object.keys(mangled).find((name) => name.toLowerCase() === header);
          if (key !== undefined) mangled[key] = garbage;
        }
        const result = read(request(mangled, body));
        expect(result.ok).toBe(false);
        expect(!result.ok && [400, 401]).toContain(!result.ok && result.status);
      }
    });
  });
});

describe('explicit header options override a preset', () => {
  const body = '{"action":"opened","number":1}';

  it('headers.event / headers.delivery / headers.signature256 replace the preset names, keeping its scheme', () => {
    const headers = {
      'content-type': 'application/json',
      'x-my-event': 'pull_request',
      'x-my-delivery': 'd-9',
      'x-my-signature': hex256(body),
    };
    const options = {
      secret: SECRET,
      forge: 'gitea' as const,
      headers: { event: 'X-My-Event', delivery: 'x-my-delivery', signature256: 'x-my-signature' },
    };
    expect(readDelivery(request(headers, body), options)).toMatchObject({
      ok: true,
      id: 'd-9',
      name: 'pull_request',
    });
    // The preset's own headers no longer count.
    const gitea = documentedHeaders('gitea', SECRET, body, 'pull_request', 'd-1');
    expect(readDelivery(request(gitea, body), options)).toMatchObject({
      status: 400,
      code: 'missing_header',
    });
  });

  it('headers.token renames GitLab token header', () => {
    const headers = {
      'content-type': 'application/json',
      'x-gitlab-event': 'Push Hook',
      'idempotency-key': 'd',
      'x-token': SECRET,
    };
    expect(
      readDelivery(request(headers, '{}'), {
        secret: SECRET,
        forge: 'gitlab',
        headers: { token: 'x-token' },
      }),
    ).toMatchObject({ ok: true, name: 'push' });
  });

  it.each([
    ['github', 'token'],
    ['generic', 'token'],
    ['gitlab', 'signature256'],
    ['gitlab', 'signature'],
    ['bitbucket', 'signature'],
  ] as const)('%s: headers.%s does not apply (TypeError)', (forge, field) => {
    expect(() =>
      readDelivery(request({}, '{}'), { secret: SECRET, forge, headers: { [field]: 'x-a' } }),
    ).toThrow(new TypeError(`"headers.${field}" does not apply to forge "${forge}"`));
  });
});

describe('routeForgeEvent()', () => {
  it.each([
    ['gitlab', 'Merge Request Hook', { object_attributes: { action: 'reopen' } }, 'pull_request', 'reopened'],
    ['gitlab', 'Merge Request Hook', { object_attributes: { action: 'close' } }, 'pull_request', 'closed'],
    ['gitlab', 'Merge Request Hook', { object_attributes: { action: 'update' } }, 'pull_request', 'edited'],
    [
      'gitlab',
      'Merge Request Hook',
      { object_attributes: { action: 'approved' } },
      'pull_request',
      'approved',
    ],
    ['gitlab', 'Tag Push Hook', { ref: 'refs/tags/v1' }, 'push', undefined],
    ['gitlab', 'Issue Hook', { object_attributes: { action: 'close' } }, 'issues', 'closed'],
    ['gitlab', 'Confidential Issue Hook', { object_attributes: { action: 'open' } }, 'issues', 'opened'],
    ['gitlab', 'Note Hook', { object_attributes: { noteable_type: 'Issue' } }, 'issue_comment', 'created'],
    ['gitlab', 'Note Hook', { object_attributes: { noteable_type: 'Commit' } }, 'commit_comment', 'created'],
    ['gitlab', 'Note Hook', { object_attributes: { noteable_type: 'Snippet' } }, 'Note Hook', undefined],
    [
      'gitlab',
      'Note Hook',
      { object_attributes: { noteable_type: 'Issue', action: 'update' } },
      'issue_comment',
      'edited',
    ],
    ['gitlab', 'Pipeline Hook', { object_attributes: { status: 'running' } }, 'workflow_run', 'in_progress'],
    ['gitlab', 'Pipeline Hook', { object_attributes: { status: 'pending' } }, 'workflow_run', 'requested'],
    ['gitlab', 'Job Hook', { build_status: 'failed' }, 'workflow_job', 'completed'],
    ['gitlab', 'Release Hook', { action: 'create' }, 'release', 'created'],
    ['gitlab', 'Wiki Page Hook', { object_attributes: { action: 'create' } }, 'gollum', undefined],
    ['gitlab', 'Feature Flag Hook', { object_attributes: {} }, 'Feature Flag Hook', undefined],
    ['gitlab', 'Merge Request Hook', { object_attributes: 'nonsense' }, 'pull_request', undefined],
    ['bitbucket', 'pullrequest:rejected', {}, 'pull_request', 'closed'],
    ['bitbucket', 'pullrequest:approved', {}, 'pull_request_review', 'submitted'],
    ['bitbucket', 'pullrequest:comment_created', { comment: { id: 1 } }, 'issue_comment', 'created'],
    ['bitbucket', 'issue:created', {}, 'issues', 'opened'],
    ['bitbucket', 'repo:transfer', {}, 'repo:transfer', undefined],
    ['gitea', 'pull_request_approved', { action: 'reviewed' }, 'pull_request_review', 'submitted'],
    ['gitea', 'issue_comment', { action: 'created' }, 'issue_comment', 'created'],
    ['forgejo', 'wiki', { action: 'created' }, 'wiki', 'created'],
    ['github', 'github_app_authorization', { action: 'revoked' }, 'forge_app_authorization', 'revoked'],
    ['generic', 'issues', { action: 42 }, 'issues', undefined],
  ] as const)('%s %s %j -> %s %s', (forge, nativeName, payload, name, action) => {
    expect(routeForgeEvent(forge, nativeName, payload)).toMatchObject({ name, action });
  });
});

describe('sign() and deliveryHeaders() per forge', () => {
  const body = '{"ref":"refs/heads/main"}';

  it('sign({ forge }) gives the value of the forge own signature header', () => {
    expect(sign(SECRET, body, { forge: 'github' })).toBe(`sha256=${hex256(body)}`);
    expect(sign(SECRET, body, { forge: 'bitbucket' })).toBe(`sha256=${hex256(body)}`);
    expect(sign(SECRET, body, { forge: 'gitea' })).toBe(hex256(body));
    expect(sign(SECRET, body, { forge: 'forgejo' })).toBe(hex256(body));
    expect(sign(SECRET, body, { forge: 'gitea', algorithm: 'sha1' })).toBe(`sha1=${hex1(body)}`);
    expect(sign([SECRET, 'next'], body, { forge: 'gitlab' })).toBe(SECRET);
    expect(() => sign(SECRET, body, { forge: 'gitea', other: 1 } as never)).toThrow('unknown option "other"');
  });

  it.each(Forges)(
    '%s: deliveryHeaders() writes headers readDelivery accepts, as the documentation spells them',
    (forge) => {
      // Standard Webhooks payloads name their event in `type`.
      const body =
        forge === 'standard' || forge === 'svix' ? '{"type":"push.created"}' : '{"ref":"refs/heads/main"}';
      const headers = deliveryHeaders(SECRET, body, { forge, name: 'push', id: 'd-3' });
      const documented = documentedHeaders(forge, SECRET, body, 'push', 'd-3');
      const lower = Object.fromEntries(
        Object.entries(documented).map(([key, value]) => [key.toLowerCase(), value]),
      );
      const preset = resolvePreset(forge);
      for (const key of [...preset.eventHeaders, ...preset.signatures.map((source) => source.header)]) {
        expect(headers[key], key).toBe(lower[key]);
      }
      expect(readDelivery(request(headers, body), { secret: SECRET, forge })).toMatchObject({
        ok: true,
        id: 'd-3',
      });
      expect(readDelivery(request(headers, body), { secret: 'other', forge })).toMatchObject({ status: 401 });
    },
  );

  it('deliveryHeaders() checks its arguments', () => {
    expect(() => deliveryHeaders(SECRET, body, { name: '', id: 'd' })).toThrow(
      '"name" must be a non-empty string',
    );
    expect(() => deliveryHeaders(SECRET, body, { name: 'push' } as never)).toThrow(
      '"id" must be a non-empty string',
    );
    expect(() => deliveryHeaders('', body, { name: 'push', id: 'd' })).toThrow(TypeError);
    expect(() => deliveryHeaders(SECRET, body, { name: 'push', id: 'd', forge: 'svn' as Forge })).toThrow(
      '"forge"',
    );
  });
});

describe('Webhooks with a forge preset', () => {
  it.each(forgeDeliveries.map((delivery) => [delivery.label, delivery] as const))(
    '%s: verifyAndReceive reaches the catalogue handler name',
    async (_label, delivery) => {
      const webhooks = new Webhooks({ secret: SECRET, forge: delivery.forge, log: quiet() });
      const byAction = vi.fn();
      const byName = vi.fn();
      const all = vi.fn();
      const fullName = delivery.action === undefined ? delivery.name : `${delivery.name}.${delivery.action}`;
      webhooks.on(fullName as 'push', byAction);
      if (delivery.action !== undefined) webhooks.on(delivery.name as 'push', byName);
      webhooks.on('*', all);
      const body = JSON.stringify(delivery.payload);
      const headers = documentedHeaders(delivery.forge, SECRET, body, delivery.nativeName, 'd-5');
      const signatureHeader = resolvePreset(delivery.forge).signatures[0]?.header as string;
      const signature = Object.entries(headers).find(([key]) => key.toLowerCase() === signatureHeader)?.[1];
      await webhooks.verifyAndReceive({
        id: 'd-5',
        name: delivery.nativeName,
        payload: body,
        signature: signature as string,
      });
      expect(byAction).toHaveBeenCalledTimes(1);
      expect(all).toHaveBeenCalledTimes(1);
      expect(all.mock.calls[0]?.[0]).toMatchObject({
        id: 'd-5',
        name: delivery.name,
        action: delivery.action,
        forge: delivery.forge,
        nativeName: delivery.nativeName,
        payload: delivery.payload,
      });
      // The event's own name is listened to only where it differs from the full name (a delivery with an action).
      expect(byName).toHaveBeenCalledTimes(delivery.action === undefined ? 0 : 1);
    },
  );

  it.each(PRESETS)(
    '%s: verifyAndReceive refuses a wrong signature or token with a 401 error',
    async (forge) => {
      const webhooks = new Webhooks({ secret: SECRET, forge, log: quiet() });
      const onError = vi.fn();
      webhooks.on('error', onError);
      const handler = vi.fn();
      webhooks.on('*', handler);
      const body = '{"action":"opened"}';
      const wrong = sign('other-secret', body, { forge });
      const rejection = webhooks.verifyAndReceive({ name: 'pull_request', payload: body, signature: wrong });
      await expect(rejection).rejects.toBeInstanceOf(WebhookVerificationError);
      await expect(rejection).rejects.toMatchObject({ status: 401, code: 'invalid_signature' });
      expect(onError).toHaveBeenCalledTimes(1);
      expect(handler).not.toHaveBeenCalled();
      expect(webhooks.verify(body, wrong)).toBe(false);
      expect(webhooks.verify(body, webhooks.sign(body))).toBe(true);
    },
  );

  it('gitea: verify() takes the bare hex and sha256=<hex>; a sha1 one only with allowSha1', () => {
    const body = '{"action":"opened"}';
    const webhooks = new Webhooks({ secret: SECRET, forge: 'gitea', log: quiet() });
    expect(webhooks.sign(body)).toBe(hex256(body));
    expect(webhooks.verify(body, hex256(body))).toBe(true);
    expect(webhooks.verify(body, `sha256=${hex256(body)}`)).toBe(true);
    expect(webhooks.verify(body, `sha1=${hex1(body)}`)).toBe(true);
    const strict = new Webhooks({ secret: SECRET, forge: 'gitea', allowSha1: false, log: quiet() });
    expect(strict.verify(body, `sha1=${hex1(body)}`)).toBe(false);
    const github = new Webhooks({ secret: SECRET, forge: 'github', log: quiet() });
    expect(github.verify(body, hex256(body))).toBe(false);
  });

  it('generic: handlers still get exactly { id, name, payload }', async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const handler = vi.fn();
    webhooks.on('issues.opened', handler);
    const body = '{"action":"opened"}';
    await webhooks.verifyAndReceive({
      id: 'g',
      name: 'issues',
      payload: body,
      signature: sign(SECRET, body),
    });
    expect(handler.mock.calls[0]?.[0]).toStrictEqual({
      id: 'g',
      name: 'issues',
      payload: { action: 'opened' },
    });
  });

  it("receive(): an event's own action wins over payload.action, even when undefined", async () => {
    const webhooks = new Webhooks({ secret: SECRET, log: quiet() });
    const opened = vi.fn();
    const created = vi.fn();
    webhooks.on('release.created', created);
    webhooks.on('release.published', opened);
    await webhooks.receive({ name: 'release', action: 'created', payload: { action: 'published' } });
    await webhooks.receive({ name: 'release', action: undefined, payload: { action: 'published' } });
    await webhooks.receive({ name: 'release', payload: { action: 'published' } });
    expect(created).toHaveBeenCalledTimes(1);
    expect(opened).toHaveBeenCalledTimes(1);
  });
});
