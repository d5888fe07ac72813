// How `forgebridge connect` follows the forge's test delivery into the delivery log (a forge client and a log of
// records given by the test): by the delivery id the forge's own log names, or, where that log cannot be read, by
// the source's first new record of the test's event from this hook; a bounded wait that says why it ended.
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../../../lib/aws/index.js';
import { runTestDelivery } from '../../../lib/cli/connect-test.js';
import type { ForgeAnswer, ForgeClient } from '../../../lib/cli/forge-client.js';
import type { HookRequest } from '../../../lib/cli/forge-hooks.js';

const record = (over: Partial<DeliveryRecord>): DeliveryRecord => ({
  recordId: 'r',
  receivedAt: Date.now(),
  bodyBytes: 10,
  verdict: 'verified',
  httpStatus: 202,
  outcome: 'published',
  expiresAt: 0,
  event: 'ping',
  ...over,
});

/** A forge whose answers the test scripts by request, recording each request. */
function forge(answer: (request: HookRequest) => ForgeAnswer) {
  const sent: HookRequest[] = [];
  const client: ForgeClient = {
    async send(request, accept = []) {
      sent.push(request);
      const result = answer(request);
      if (result.status >= 300 && !accept.includes(result.status)) throw new Error(`status ${result.status}`);
      return result;
    },
  };
  return { client, sent };
}

/** A log whose records appear once `after` polls have listed it. */
function log(records: DeliveryRecord[], after: number) {
  let lists = 0;
  return {
    async list() {
      lists += 1;
      return { records: lists > after ? records : [] };
    },
    async get(deliveryId: string) {
      const found = records.filter((each) => each.deliveryId === deliveryId);
      return found.length === 0 ? undefined : ({ deliveryId, latest: found[0], records: found } as never);
    },
  };
}

const place = { kind: 'repo', owner: 'acme', repo: 'web' } as const;

describe('runTestDelivery', () => {
  it("without the forge's delivery log (404), takes the source's first new ping record of this hook", async () => {
    const { client, sent } = forge((request) =>
      request.path.includes('/deliveries')
        ? { status: 404, body: { message: 'Not Found' }, link: null }
        : { status: 204, body: undefined, link: null },
    );
    const outcome = await runTestDelivery({
      client,
      place,
      hookId: 12,
      log: log([record({ recordId: 'other-hook', hook: '99' }), record({ recordId: 'ours', hook: '12' })], 1),
      source: 'github',
      url: 'https://x/webhooks/github',
      timeoutMs: 5_000,
      pollMs: 5,
    });
    expect(outcome).toMatchObject({ verified: true });
    expect(sent.filter((request) => request.method === 'POST').map((request) => request.path)).toEqual([
      '/repos/acme/web/hooks/12/pings',
    ]);
  });

  it("follows the forge's delivery id, and words a refused signature with the ingest's diagnosis", async () => {
    let listed = 0;
    const { client } = forge((request) => {
      if (!request.path.includes('/deliveries')) return { status: 204, body: undefined, link: null };
      listed += 1;
      return {
        status: 200,
        body: listed === 1 ? [] : [{ id: 5, guid: 'g-5', event: 'ping', status_code: 401 }],
        link: null,
      };
    });
    const outcome = await runTestDelivery({
      client,
      place,
      hookId: 12,
      log: log(
        [
          record({
            recordId: 'r5',
            deliveryId: 'g-5',
            hook: '12',
            verdict: 'bad_signature',
            httpStatus: 401,
            diagnosis: [{ code: 'wrong_secret', message: 'no configured secret produces this signature' }],
          }),
        ],
        0,
      ),
      source: 'github',
      url: 'https://x/webhooks/github',
      timeoutMs: 5_000,
      pollMs: 5,
    });
    expect(outcome).toMatchObject({
      verified: false,
      secretProblem: true,
      reason: 'the ingest answered the test delivery 401: no configured secret produces this signature',
    });
  });

  it('gives up at the timeout, saying what the forge saw', async () => {
    const { client } = forge(() => ({ status: 204, body: undefined, link: null }));
    const outcome = await runTestDelivery({
      client,
      place,
      hookId: 12,
      log: log([], 0),
      source: 'github',
      url: 'https://x/webhooks/github',
      timeoutMs: 50,
      pollMs: 5,
    });
    expect(outcome.verified).toBe(false);
    expect(outcome.reason).toBe(
      'no test delivery reached the delivery log of source "github" in 0.05 s: check the hook\'s URL, and "forgebridge deliveries --source github"',
    );
  });
});
