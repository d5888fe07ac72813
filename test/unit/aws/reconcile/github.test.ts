// The pure parts of the GitHub delivery-log client: paths per hook kind, the Link header, and the check of each
// listed item (a malformed one is refused, never guessed at).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForgeApiError } from '../../../../lib/aws/errors.js';
import {
  gitHubDeliveriesPath,
  gitHubDeliveryLog,
  nextLink,
  parseGitHubDelivery,
} from '../../../../lib/aws/reconcile/github.js';
import { parseSourceHook } from '../../../../lib/aws/stage/source-hook.js';

const item = {
  id: 42,
  guid: '58474f00-b361-11eb-836d-0e4f3503ccbe',
  delivered_at: '2021-05-12T20:33:44Z',
  redelivery: false,
  duration: 0.03,
  status: 'failed to connect',
  status_code: 0,
  event: 'issues',
  action: 'opened',
  installation_id: null,
  repository_id: 123,
};

describe('gitHubDeliveriesPath()', () => {
  it('names the repository, organization and app hook paths, encoding each segment', () => {
    const base = { api: 'https://api.github.com', provider: 'p' };
    expect(gitHubDeliveriesPath({ ...base, kind: 'repo', owner: 'acme', repo: 'a.b', id: 1 })).toBe(
      '/repos/acme/a.b/hooks/1/deliveries',
    );
    expect(gitHubDeliveriesPath({ ...base, kind: 'org', org: 'acme', id: 2 })).toBe(
      '/orgs/acme/hooks/2/deliveries',
    );
    expect(gitHubDeliveriesPath({ ...base, kind: 'app' })).toBe('/app/hook/deliveries');
    expect(() => gitHubDeliveriesPath({ ...base, kind: 'project', project: 'x', id: 1 })).toThrow(
      'hook kind "project" is not a github hook',
    );
  });
});

describe('nextLink()', () => {
  it('reads the rel="next" url among others, and nothing on the last page', () => {
    const next = 'https://api.github.com/repos/a/b/hooks/1/deliveries?per_page=100&cursor=v1_9';
    expect(nextLink(`<https://x/prev>; rel="prev", <${next}>; rel="next"`)).toBe(next);
    expect(nextLink('<https://x/first>; rel="first"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
    expect(nextLink('garbage')).toBeUndefined();
  });
});

describe('parseGitHubDelivery()', () => {
  it('keeps what the reconciler needs of a hook-delivery-item', () => {
    expect(parseGitHubDelivery(item, 'GET x')).toEqual({
      attemptId: 42,
      deliveryId: item.guid,
      at: Date.parse(item.delivered_at),
      statusCode: 0,
      event: 'issues',
      action: 'opened',
      redelivery: false,
    });
    expect(parseGitHubDelivery({ ...item, action: null }, 'GET x')).not.toHaveProperty('action');
  });

  it.each([
    [{ ...item, id: '42' }, 'an item without an integer "id"'],
    [{ ...item, guid: undefined }, 'an item without a "guid"'],
    [{ ...item, guid: 'has space' }, 'an item without a "guid"'],
    [{ ...item, delivered_at: 'yesterday' }, 'an item without a "delivered_at" date'],
    [{ ...item, status_code: null }, 'an item without an integer "status_code"'],
    [{ ...item, redelivery: 'no' }, 'an item without a boolean "redelivery"'],
    [{ ...item, event: 1 }, 'an item without an "event"'],
    [{ ...item, action: 3 }, 'an item whose "action" is not a string'],
    [[], 'an item that is not an object'],
  ])('refuses a malformed item as forge_malformed (%#)', (value, detail) => {
    let caught: unknown;
    try {
      parseGitHubDelivery(value, 'GET /x');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ForgeApiError);
    expect(caught).toMatchObject({ code: 'forge_malformed', message: `GET /x answered ${detail}` });
  });
});

describe('the parsers on any input', () => {
  it('parseGitHubDelivery() returns or throws forge_malformed, nextLink() returns, parseSourceHook() returns or throws a TypeError', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, link) => {
        try {
          parseGitHubDelivery(value, 'GET /x');
        } catch (error) {
          if (!(error instanceof ForgeApiError) || error.code !== 'forge_malformed') throw error;
        }
        const next = nextLink(link);
        if (next !== undefined && typeof next !== 'string') throw new Error('not a string');
        for (const forge of ['github', 'gitlab', 'gitea'] as const) {
          try {
            parseSourceHook(value, forge, (field) => `"hook${field === undefined ? '' : `.${field}`}"`);
          } catch (error) {
            if (!(error instanceof TypeError)) throw error;
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('gitHubDeliveryLog().fetchPayload()', () => {
  const hook = {
    kind: 'repo' as const,
    api: 'https://api.github.com',
    provider: 'p',
    owner: 'a',
    repo: 'b',
    id: 1,
  };
  const auth = { authorization: async () => 'Bearer t', renew: async () => undefined };
  const listed = parseGitHubDelivery(item, 'GET x');
  const answering = (body: unknown) =>
    (async () =>
      new Response(JSON.stringify(body), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      })) as typeof fetch;
  const request = { headers: { 'X-GitHub-Event': 'issues' }, payload: { action: 'opened' } };

  it('returns the payload of the attempt that was listed', async () => {
    const api = gitHubDeliveryLog({ hook, auth, fetch: answering({ ...item, request }) });
    expect(await api.fetchPayload(listed)).toEqual({
      headers: { 'x-github-event': 'issues' },
      payload: { action: 'opened' },
    });
  });

  it.each([
    ['guid', { ...item, guid: 'another-delivery' }],
    ['event', { ...item, event: 'push' }],
    ['id', { ...item, id: 43 }],
  ])('refuses an answer with another %s as forge_malformed', async (_field, other) => {
    const api = gitHubDeliveryLog({ hook, auth, fetch: answering({ ...other, request }) });
    await expect(api.fetchPayload(listed)).rejects.toMatchObject({
      code: 'forge_malformed',
      message: `GET /repos/a/b/hooks/1/deliveries/42 answered 200 with another delivery's "id", "guid" or "event"`,
    });
  });
});

describe('gitHubDeliveryLog().hookOf()', () => {
  const app = { kind: 'app' as const, api: 'https://api.github.com', provider: 'app' };
  const auth = { authorization: async () => 'Bearer t', renew: async () => undefined };
  const listed = parseGitHubDelivery(item, 'GET x');
  /** A fetch answering the attempt with these request headers, counting its calls. */
  const answering = (headers: Record<string, string>) => {
    const calls: string[] = [];
    const fetch = (async (url: string | URL) => {
      calls.push(String(url));
      return Response.json({ ...item, request: { headers, payload: { action: 'opened' } } });
    }) as typeof globalThis.fetch;
    return { fetch, calls };
  };

  it("reads an App hook's id from one attempt's X-GitHub-Hook-ID, once", async () => {
    const { fetch, calls } = answering({ 'X-GitHub-Hook-ID': '480001', 'X-GitHub-Event': 'issues' });
    const api = gitHubDeliveryLog({ hook: app, auth, fetch });
    expect(await api.hookOf?.(listed)).toBe('480001');
    expect(await api.hookOf?.(listed)).toBe('480001');
    expect(calls).toEqual(['https://api.github.com/app/hook/deliveries/42']);
  });

  it('is undefined where the request carried no hook id, and asks again next time', async () => {
    const { fetch, calls } = answering({ 'X-GitHub-Event': 'issues' });
    const api = gitHubDeliveryLog({ hook: app, auth, fetch });
    expect(await api.hookOf?.(listed)).toBeUndefined();
    expect(await api.hookOf?.(listed)).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it.each(['0', 'hook', '12 3', '1'.repeat(21)])('refuses a hook id %j as forge_malformed', async (id) => {
    const api = gitHubDeliveryLog({ hook: app, auth, fetch: answering({ 'X-GitHub-Hook-ID': id }).fetch });
    await expect(api.hookOf?.(listed)).rejects.toMatchObject({
      code: 'forge_malformed',
      message: 'GET /app/hook/deliveries/42 answered a "x-github-hook-id" that is not a hook id',
    });
  });

  it('is absent for a repository hook: its configuration names the id', () => {
    const repo = { ...app, kind: 'repo' as const, owner: 'a', repo: 'b', id: 1 };
    expect(gitHubDeliveryLog({ hook: repo, auth, fetch: answering({}).fetch }).hookOf).toBeUndefined();
  });
});
