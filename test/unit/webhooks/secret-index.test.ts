// readDelivery reports which secret of the list verified a delivery, by position, for every scheme.
import { describe, expect, it } from 'vitest';
import {
  type DeliveryRequest,
  deliveryHeaders,
  type Forge,
  readDelivery,
  standardSecret,
} from '../../../lib/webhooks/index.js';

const BODY = '{"action":"opened","object_kind":"push","type":"contact.created"}';
const OLD = 'old-secret-0123456789';
const NEW = 'new-secret-9876543210';

function request(secret: string, forge: Forge, name = 'issues'): DeliveryRequest {
  return {
    method: 'POST',
    body: BODY,
    headers: deliveryHeaders(secret, BODY, { forge, name, id: 'delivery-1' }),
  };
}

function indexOf(result: ReturnType<typeof readDelivery>): number | string {
  return result.ok ? result.secretIndex : result.code;
}

describe('readDelivery(): secretIndex', () => {
  it('HMAC: the position of the secret that signed, 0 for a single secret, a refusal for none', () => {
    expect(indexOf(readDelivery(request(OLD, 'generic'), { secret: OLD }))).toBe(0);
    expect(indexOf(readDelivery(request(OLD, 'generic'), { secret: [OLD, NEW] }))).toBe(0);
    expect(indexOf(readDelivery(request(NEW, 'generic'), { secret: [OLD, NEW] }))).toBe(1);
    expect(indexOf(readDelivery(request(NEW, 'generic'), { secret: [NEW, OLD] }))).toBe(0);
    expect(indexOf(readDelivery(request('third', 'generic'), { secret: [OLD, NEW] }))).toBe(
      'invalid_signature',
    );
  });

  it.each(['github', 'gitea', 'forgejo', 'bitbucket'] as const)(
    '%s: the index of the secret that signed',
    (forge) => {
      const name = forge === 'bitbucket' ? 'repo:push' : 'issues';
      expect(indexOf(readDelivery(request(NEW, forge, name), { secret: [OLD, NEW], forge }))).toBe(1);
      expect(indexOf(readDelivery(request(OLD, forge, name), { secret: [OLD, NEW], forge }))).toBe(0);
    },
  );

  it('GitLab token: the position of the matching token', () => {
    const options = { secret: [OLD, NEW], forge: 'gitlab' } as const;
    expect(indexOf(readDelivery(request(OLD, 'gitlab', 'Push Hook'), options))).toBe(0);
    expect(indexOf(readDelivery(request(NEW, 'gitlab', 'Push Hook'), options))).toBe(1);
  });

  it.each(['standard', 'svix'] as const)('%s: the position of the whsec_ secret that signed', (forge) => {
    const old = standardSecret();
    const fresh = standardSecret();
    const options = { secret: [old, fresh], forge };
    expect(indexOf(readDelivery(request(old, forge), options))).toBe(0);
    expect(indexOf(readDelivery(request(fresh, forge), options))).toBe(1);
    expect(indexOf(readDelivery(request(standardSecret(), forge), options))).toBe('invalid_signature');
  });
});
