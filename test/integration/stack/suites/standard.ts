// End to end through the real local stack: its `standard` and `svix` sources take deliveries signed by the
// standardwebhooks and svix packages (an `issues.opened` payload type reaches the `issues.opened` rule), and
// refuse stale, future, tampered and wrong-secret ones 401 with their reason, recorded with the diagnosis.
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalSource } from '../../../../local-stack/stack.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function standardSuite(stack: () => TestStack): void {
  describe('standard: Standard Webhooks sources', () => {
    let t: TestStack;

    beforeAll(() => {
      t = stack();
    });

    const source = (name: string): LocalSource => t.source(name);

    function signed(forge: 'standard' | 'svix', secret: string, id: string, body: string, offset = 0) {
      const timestamp = Math.floor(Date.now() / 1000) + offset;
      const at = new Date(timestamp * 1000);
      const signature =
        forge === 'svix'
          ? new SvixWebhook(secret).sign(id, at, body)
          : new StandardWebhook(secret).sign(id, at, body);
      const prefix = forge === 'svix' ? 'svix' : 'webhook';
      return {
        'content-type': 'application/json',
        [`${prefix}-id`]: id,
        [`${prefix}-timestamp`]: String(timestamp),
        [`${prefix}-signature`]: signature,
      };
    }

    async function post(url: string, headers: Record<string, string>, body: string) {
      const response = await fetch(url, { method: 'POST', headers, body });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    }

    const payload = (type: string) =>
      JSON.stringify({
        type,
        action: 'opened',
        issue: { number: 7, title: 'Zoë' },
        repository: { full_name: 'o/r' },
      });

    describe.each(['standard', 'svix'] as const)('local stack: the %s source', (forge) => {
      it('publishes a delivery the package signed onto the issues.opened rule, once', async () => {
        const target = source(forge);
        expect(target.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        const id = `msg_${randomUUID()}`;
        const body = payload('issues.opened');
        const answer = await post(target.url, signed(forge, target.secret, id, body), body);
        expect([answer.status, answer.body]).toEqual([202, { delivery: id }]);
        await t.waitFor(() => Object.keys(t.receivedBy(id)).length >= 4, { timeoutMs: 60_000 });
        t.holds(() =>
          expect(t.receivedBy(id)).toEqual({
            onIssuesOpened: 1,
            onIssues: 1,
            onIssuesPrefix: 1,
            onEverything: 1,
          }),
        );
      });

      it.each([
        ['stale', { offset: -3600 }, 'stale_timestamp'],
        ['future', { offset: 3600 }, 'future_timestamp'],
        ['wrong-secret', { secret: `whsec_${randomBytes(32).toString('base64')}` }, 'invalid_signature'],
        ['tampered', { tamper: true }, 'invalid_signature'],
      ] as const)('refuses a %s delivery 401 with its reason', async (_label, options, code) => {
        const target = source(forge);
        const id = `msg_${randomUUID()}`;
        const body = payload('issues.opened');
        const secret = 'secret' in options ? options.secret : target.secret;
        const headers = signed(forge, secret, id, body, 'offset' in options ? options.offset : 0);
        const sent = 'tamper' in options ? body.replace('Zoë', 'Zoe') : body;
        const answer = await post(target.url, headers, sent);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatchObject({ error: { code } });
        if (code !== 'invalid_signature') {
          expect((answer.body.error as { message: string }).message).toMatch(
            /is (3599 s \(59 min 59 s\)|36\d\d s \(60 min \d+ s\))/,
          );
        }
      });
    });
  });
}
