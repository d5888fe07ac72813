// The GitLab delivery-log client: paths per hook kind, GitLab's string `response_status`, the check of each
// listed event (a malformed one is refused, never guessed at), and the pagination against a stubbed fetch
// (GitLab's page headers, the Link fallback, a link to another origin refused).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForgeApiError } from '../../../../lib/aws/errors.js';
import {
  gitLabDeliveryLog,
  gitLabEventsPath,
  gitLabStatusCode,
  parseGitLabEvent,
} from '../../../../lib/aws/reconcile/gitlab.js';

const event = {
  id: 17,
  url: 'https://example.net/webhooks/acme',
  trigger: 'push_hooks',
  request_headers: {
    'Content-Type': 'application/json',
    'Idempotency-Key': '3a427872-00df-429c-9bc9-a9475de2efe4',
    'X-Gitlab-Event': 'Push Hook',
    'X-Gitlab-Event-UUID': '9cebe914-4827-408f-b014-cfa23a47a35f',
    'X-Gitlab-Token': '[REDACTED]',
  },
  request_data: { object_kind: 'push', ref: 'refs/heads/main' },
  response_headers: {},
  response_body: '',
  execution_duration: 10.01,
  response_status: 'internal error',
  created_at: '2026-11-20T10:00:00.000Z',
};

function malformed(value: unknown): unknown {
  try {
    parseGitLabEvent(value, 'GET /x');
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('gitLabEventsPath()', () => {
  it('names the project and group hook paths, a nested path encoded as one segment', () => {
    const base = { api: 'https://gitlab.com/api/v4', provider: 'p', id: 5 };
    expect(gitLabEventsPath({ ...base, kind: 'project', project: 'acme/sub/web' })).toBe(
      '/projects/acme%2Fsub%2Fweb/hooks/5/events',
    );
    expect(gitLabEventsPath({ ...base, kind: 'project', project: '42' })).toBe('/projects/42/hooks/5/events');
    expect(gitLabEventsPath({ ...base, kind: 'group', group: 'acme' })).toBe('/groups/acme/hooks/5/events');
    expect(() => gitLabEventsPath({ ...base, kind: 'repo', owner: 'a', repo: 'b' })).toThrow(
      'hook kind "repo" is not a gitlab hook',
    );
  });
});

describe('gitLabStatusCode()', () => {
  it('reads the string status, "internal error" as no answer (0), and nothing else', () => {
    expect(gitLabStatusCode('200')).toBe(200);
    expect(gitLabStatusCode('413')).toBe(413);
    expect(gitLabStatusCode('internal error')).toBe(0);
    for (const bad of [200, '2000', '', 'timeout', null, undefined])
      expect(gitLabStatusCode(bad)).toBeUndefined();
  });
});

describe('parseGitLabEvent()', () => {
  it('keeps what the reconciler needs: the Idempotency-Key as the delivery id (the ingest reads it first)', () => {
    expect(parseGitLabEvent(event, 'GET /x')).toEqual({
      delivery: {
        attemptId: 17,
        deliveryId: '3a427872-00df-429c-9bc9-a9475de2efe4',
        at: Date.parse(event.created_at),
        statusCode: 0,
        event: 'Push Hook',
        redelivery: false,
      },
      headers: {
        'content-type': 'application/json',
        'idempotency-key': '3a427872-00df-429c-9bc9-a9475de2efe4',
        'x-gitlab-event': 'Push Hook',
        'x-gitlab-event-uuid': '9cebe914-4827-408f-b014-cfa23a47a35f',
        'x-gitlab-token': '[REDACTED]',
      },
      payload: event.request_data,
    });
  });

  it('falls back to X-Gitlab-Event-UUID when GitLab sent no Idempotency-Key (before 17.4)', () => {
    const { 'Idempotency-Key': _key, ...headers } = event.request_headers;
    expect(parseGitLabEvent({ ...event, request_headers: headers }, 'GET /x').delivery.deliveryId).toBe(
      '9cebe914-4827-408f-b014-cfa23a47a35f',
    );
  });

  it('refuses an event missing or mistyping a field it needs, as forge_malformed', () => {
    const { 'Idempotency-Key': _k, 'X-Gitlab-Event-UUID': _u, ...noId } = event.request_headers;
    const { 'X-Gitlab-Event': _e, ...noEvent } = event.request_headers;
    const cases: [unknown, string][] = [
      [[], 'an event that is not an object'],
      [{ ...event, id: '17' }, 'an event without an integer "id"'],
      [{ ...event, request_headers: null }, 'an event without a "request_headers" object'],
      [
        { ...event, request_headers: noId },
        'an event without an "Idempotency-Key" or "X-Gitlab-Event-UUID" request header',
      ],
      [{ ...event, request_headers: noEvent }, 'an event without an "X-Gitlab-Event" request header'],
      [{ ...event, request_data: '{}' }, 'an event without a "request_data" object'],
      [{ ...event, response_status: 500 }, 'an event without a "response_status"'],
      [{ ...event, created_at: 'yesterday' }, 'an event without a "created_at" date'],
    ];
    for (const [value, detail] of cases) {
      const caught = malformed(value);
      expect(caught).toBeInstanceOf(ForgeApiError);
      expect(caught).toMatchObject({ code: 'forge_malformed', message: `GET /x answered ${detail}` });
    }
  });

  it('returns or throws forge_malformed on any input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const caught = malformed(value);
        if (caught !== undefined && !(caught instanceof ForgeApiError && caught.code === 'forge_malformed')) {
          throw caught;
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('gitLabDeliveryLog().list()', () => {
  const hook = {
    kind: 'project' as const,
    api: 'https://gitlab.example/api/v4',
    provider: 'p',
    id: 5,
    project: 'acme/web',
  };
  const auth = { authorization: async () => 'Bearer t', renew: async () => undefined };
  const page = (id: number) => [{ ...event, id, created_at: new Date().toISOString() }];

  /** A fetch answering each URL from `pages` (headers and events), recording the URLs asked. */
  function fakeFetch(pages: Record<string, { headers: Record<string, string>; body: unknown }>) {
    const asked: string[] = [];
    const fetch = (async (url: string) => {
      asked.push(url);
      const answer = pages[url];
      if (answer === undefined) return new Response('{"message":"404 Not found"}', { status: 404 });
      return new Response(JSON.stringify(answer.body), { status: 200, headers: answer.headers });
    }) as typeof globalThis.fetch;
    return { fetch, asked };
  }

  const base = 'https://gitlab.example/api/v4/projects/acme%2Fweb/hooks/5/events';

  it('follows x-next-page, else the Link header past 10,000 events, and stops on an empty x-next-page', async () => {
    const { fetch, asked } = fakeFetch({
      [`${base}?per_page=20&page=1`]: { headers: { 'x-next-page': '2' }, body: page(1) },
      // Without the x-* headers (GitLab leaves them out past 10,000 events): the Link header's next page.
      [`${base}?per_page=20&page=2`]: {
        headers: {
          link: `<${base}?page=3&per_page=20>; rel="next", <${base}?page=1&per_page=20>; rel="first"`,
        },
        body: page(2),
      },
      [`${base}?page=3&per_page=20`]: { headers: { 'x-next-page': '' }, body: page(3) },
    });
    const ids: number[] = [];
    for await (const items of gitLabDeliveryLog({ hook, auth, fetch }).list(0, 10)) {
      ids.push(...items.map((item) => item.attemptId));
    }
    expect(ids).toEqual([1, 2, 3]);
    expect(asked).toHaveLength(3);
  });

  it('refuses a Link to another origin and an x-next-page that does not move on, as forge_malformed', async () => {
    for (const headers of [
      { link: '<https://elsewhere.example/steal?page=2>; rel="next"' },
      { 'x-next-page': '1' },
    ]) {
      const { fetch } = fakeFetch({ [`${base}?per_page=20&page=1`]: { headers, body: page(1) } });
      const list = gitLabDeliveryLog({ hook, auth, fetch }).list(0, 10);
      await expect(
        (async () => {
          for await (const _ of list) {
            // drain
          }
        })(),
      ).rejects.toMatchObject({ code: 'forge_malformed' });
    }
  });

  it('has no payload for an event the last list did not answer 413', async () => {
    const { fetch } = fakeFetch({ [`${base}?per_page=20&page=1`]: { headers: {}, body: page(1) } });
    const api = gitLabDeliveryLog({ hook, auth, fetch });
    for await (const _ of api.list(0, 1)) {
      // one page
    }
    await expect(
      api.fetchPayload({
        attemptId: 1,
        deliveryId: 'd',
        at: 0,
        statusCode: 0,
        event: 'Push Hook',
        redelivery: false,
      }),
    ).rejects.toMatchObject({
      code: 'forge_malformed',
      message:
        'event 1 of /api/v4/projects/acme%2Fweb/hooks/5/events has no "request_data" from the last list',
    });
  });
});
