// The reconciler's one HTTP call to a forge: an answer larger than the limit is refused while it is read, never
// buffered whole first.
import { describe, expect, it } from 'vitest';
import { ForgeApiError } from '../../../../lib/aws/errors.js';
import { sendForgeRequest } from '../../../../lib/aws/reconcile/forge-http.js';

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
