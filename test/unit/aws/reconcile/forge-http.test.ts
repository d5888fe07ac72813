// The reconciler's one HTTP call to a forge: an answer larger than the limit is refused while it is read, never
// buffered whole first.
import { describe, expect, it } from 'vitest';
import { ForgeApiError, ForgeApiErrorCodes, ForgeRateLimitError } from '../../../../lib/aws/errors.js';
import type { ForgeGovernor } from '../../../../lib/aws/governor/governor.js';
import { sendAuthorized, sendForgeRequest } from '../../../../lib/aws/reconcile/forge-http.js';

const CHUNK = 64 * 1024;

/** A 200 answer of `chunks` × 64 KiB without a content-length, counting the chunks the reader pulled. */
function streamingAnswer(chunks: number) {
  const seen = { pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) {
        controller.close();
        return;
      }
      seen.pulled += 1;
      controller.enqueue(new Uint8Array(CHUNK).fill(0x20));
    },
  });
  const fetch = (async () =>
    new Response(body, {
      status: 200,
      headers: { 'content-type': 'application/json' },
    })) as typeof globalThis.fetch;
  return { seen, fetch };
}

describe('sendForgeRequest()', () => {
  it('stops reading an answer without a content-length at the limit, and refuses it as forge_unavailable', async () => {
    const { seen, fetch } = streamingAnswer(64);
    const request = {
      method: 'GET' as const,
      url: 'https://api.github.com/x',
      authorization: 'Bearer t0ken',
    };
    const caught = await sendForgeRequest(request, { fetch, maxBodyBytes: 4 * CHUNK }).catch(
      (error) => error,
    );
    expect(caught).toBeInstanceOf(ForgeApiError);
    expect(caught).toMatchObject({
      code: 'forge_unavailable',
      message: 'GET /x failed: the answer could not be read',
    });
    expect(String(caught.message)).not.toContain('t0ken');
    // Four chunks fit; the fifth goes over: the other 59 were never pulled.
    expect(seen.pulled).toBeLessThanOrEqual(6);
  });

  it('reads an answer within the limit whole', async () => {
    const { fetch } = streamingAnswer(3);
    const answer = await sendForgeRequest(
      { method: 'GET', url: 'https://api.github.com/x', authorization: 'Bearer t' },
      { fetch, maxBodyBytes: 4 * CHUNK },
    ).catch((error) => error);
    // Three chunks of spaces are not json: read whole, then refused for what they are.
    expect(answer).toMatchObject({
      code: 'forge_malformed',
      message: 'GET /x answered 200 with a body that is not json',
    });
  });
});

describe('sendAuthorized() through a governor', () => {
  /** A governor that hands out permits (recording what each was released with), or refuses with `refuse`. */
  function fakeGovernor(refuse?: Error) {
    const released: unknown[] = [];
    const governor = {
      owner: 'github#app#1',
      acquire: async () => {
        if (refuse !== undefined) throw refuse;
        return {
          waitedMs: 0,
          governed: true,
          release: async (answer?: unknown) => {
            released.push(answer);
            return {};
          },
        };
      },
    } as unknown as ForgeGovernor;
    return { governor, released };
  }
  const auth = (governor: ForgeGovernor) => ({
    governor,
    authorization: async () => 'Bearer t0ken',
    renew: async () => undefined,
  });
  const request = { method: 'POST' as const, url: 'https://api.github.com/app/hook/deliveries/1/attempts' };

  it('gives the slot back with the answer, and with the retry-after of a rate-limit answer', async () => {
    const { governor, released } = fakeGovernor();
    const ok = (async () =>
      new Response('{}', { status: 202, headers: { 'x-ratelimit-remaining': '9' } })) as typeof fetch;
    expect((await sendAuthorized(auth(governor), request, { fetch: ok })).status).toBe(202);
    const limited = (async () =>
      new Response('{"message":"slow down"}', {
        status: 429,
        headers: { 'retry-after': '7' },
      })) as typeof fetch;
    const error = await sendAuthorized(auth(governor), request, { fetch: limited }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ForgeApiErrorCodes.rateLimited, retryAfterSeconds: 7 });
    const [first, second] = released as { status: number; headers: Headers }[];
    expect(first?.headers.get('x-ratelimit-remaining')).toBe('9');
    expect([second?.status, second?.headers.get('retry-after')]).toEqual([429, '7']);
    // A primary budget at 0 without a reset time: the rate limit is released with no retry-after to share.
    const spent = (async () =>
      new Response('{"message":"API rate limit exceeded"}', {
        status: 403,
        headers: { 'x-ratelimit-remaining': '0' },
      })) as typeof fetch;
    await expect(sendAuthorized(auth(governor), request, { fetch: spent })).rejects.toMatchObject({
      code: ForgeApiErrorCodes.rateLimited,
      status: 403,
    });
    const third = released.pop() as { status: number; headers: Headers };
    expect([third.status, third.headers.get('retry-after')]).toEqual([403, null]);
    const failing = (async () => new Response('{}', { status: 500 })) as typeof fetch;
    await expect(sendAuthorized(auth(governor), request, { fetch: failing })).rejects.toMatchObject({
      code: ForgeApiErrorCodes.unavailable,
    });
    expect(released[2]).toBeUndefined();
  });

  it('a turn that cannot come in time is a rate limit the reconciler stops on, with when it frees up', async () => {
    const resetAt = new Date(Date.now() + 30_000);
    const { governor } = fakeGovernor(new ForgeRateLimitError('github#app#1', 'writes:80/60s', resetAt));
    const never = (async () => {
      throw new Error('not sent');
    }) as typeof fetch;
    const error = (await sendAuthorized(auth(governor), request, { fetch: never }).catch(
      (e: unknown) => e,
    )) as ForgeApiError;
    expect(error.code).toBe(ForgeApiErrorCodes.rateLimited);
    expect(error.message).toBe(
      'POST /app/hook/deliveries/1/attempts waits for the forge api limit "writes:80/60s"',
    );
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(29);
    const other = fakeGovernor(new TypeError('boom'));
    await expect(sendAuthorized(auth(other.governor), request, { fetch: never })).rejects.toThrow('boom');
  });
});
