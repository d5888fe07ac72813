// `forgebridge connect`'s pure parts: the forges' hook requests (paths and bodies), what an answer says of a hook
// and its deliveries, what --check finds wrong, which events the stage's rules route, and the one-line refusals of
// bad input (the place, the token variable, the API base).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hookEntry, placeOf, tokenFrom } from '../../../lib/cli/commands/connect.js';
import { checkedHook, sourcePath } from '../../../lib/cli/connect-source.js';
import { judged } from '../../../lib/cli/connect-test.js';
import { redact } from '../../../lib/cli/forge-client.js';
import {
  attemptsRequest,
  createRequest,
  differences,
  type ForgeHook,
  hookFindings,
  hooksPath,
  listRequest,
  readAttempts,
  readHook,
  testRequest,
  updateRequest,
} from '../../../lib/cli/forge-hooks.js';
import { gitHubEvents, gitLabTriggers, routedEvents } from '../../../lib/cli/hook-events.js';

const URL_ = 'https://abc.lambda-url.eu-west-1.on.aws/webhooks/github';
const wanted = { url: URL_, secret: 's3cr3t', events: ['issues', 'push'] };
const repo = { kind: 'repo', owner: 'acme', repo: 'web' } as const;
const project = { kind: 'project', project: 'acme/sub/web' } as const;

const good = (over: Partial<ForgeHook> = {}): ForgeHook => ({
  id: 12,
  url: URL_,
  contentType: 'json',
  tlsVerification: true,
  active: true,
  hasSecret: true,
  events: ['issues', 'push'],
  ...over,
});

describe('hook requests', () => {
  it('builds the paths of both forges, a GitLab path URL-encoded', () => {
    expect(hooksPath(repo)).toBe('/repos/acme/web/hooks');
    expect(hooksPath({ kind: 'org', org: 'acme' })).toBe('/orgs/acme/hooks');
    expect(hooksPath(project)).toBe('/projects/acme%2Fsub%2Fweb/hooks');
    expect(hooksPath({ kind: 'group', group: 'acme' })).toBe('/groups/acme/hooks');
    expect(listRequest(repo, 2)).toEqual({
      method: 'GET',
      path: '/repos/acme/web/hooks?per_page=100&page=2',
    });
    expect(testRequest(repo, 12)).toEqual({ method: 'POST', path: '/repos/acme/web/hooks/12/pings' });
    expect(testRequest(project, 7)).toEqual({
      method: 'POST',
      path: '/projects/acme%2Fsub%2Fweb/hooks/7/test/push_events',
    });
    expect(attemptsRequest(repo, 12).path).toBe('/repos/acme/web/hooks/12/deliveries?per_page=20');
    expect(attemptsRequest(project, 7).path).toBe('/projects/acme%2Fsub%2Fweb/hooks/7/events?per_page=20');
  });

  it('creates a GitHub hook as JSON, with the secret, TLS verification on, active and the events', () => {
    expect(createRequest(repo, wanted)).toEqual({
      method: 'POST',
      path: '/repos/acme/web/hooks',
      body: {
        name: 'web',
        active: true,
        events: ['issues', 'push'],
        config: { url: URL_, content_type: 'json', secret: 's3cr3t', insecure_ssl: '0' },
      },
    });
  });

  it('creates a GitLab hook with the token, TLS verification on and every trigger flag set', () => {
    const request = createRequest(project, { ...wanted, events: ['push_events', 'issues_events'] });
    expect(request.body).toMatchObject({
      url: URL_,
      token: 's3cr3t',
      enable_ssl_verification: true,
      push_events: true,
      issues_events: true,
      merge_requests_events: false,
      tag_push_events: false,
    });
  });

  it('updates a GitHub hook without its secret unless asked, adding the missing events only', () => {
    const hook = good({ contentType: 'form', events: ['push', 'fork'] });
    const plain = updateRequest(repo, hook, wanted, { secret: false });
    expect(plain).toEqual({
      method: 'PATCH',
      path: '/repos/acme/web/hooks/12',
      body: {
        active: true,
        config: { url: URL_, content_type: 'json', insecure_ssl: '0' },
        add_events: ['issues'],
      },
    });
    const keyed = updateRequest(repo, hook, { ...wanted, events: ['*'] }, { secret: true });
    expect(keyed.body).toMatchObject({ config: { secret: 's3cr3t' }, events: ['*'] });
    const gitlab = updateRequest(
      project,
      { ...hook, id: 7 },
      { ...wanted, events: ['push_events'] },
      { secret: true },
    );
    expect(gitlab).toEqual({
      method: 'PUT',
      path: '/projects/acme%2Fsub%2Fweb/hooks/7',
      body: { url: URL_, enable_ssl_verification: true, token: 's3cr3t', push_events: true },
    });
  });
});

describe('reading the forges', () => {
  it("reads GitHub's hook: a masked secret is a secret, insecure_ssl 1 is TLS verification off", () => {
    const hook = readHook('github', {
      id: 3,
      active: false,
      events: ['push'],
      config: { url: 'https://x', content_type: 'form', insecure_ssl: '1', secret: '********' },
    });
    expect(hook).toEqual({
      id: 3,
      url: 'https://x',
      contentType: 'form',
      tlsVerification: false,
      active: false,
      hasSecret: true,
      events: ['push'],
    });
    expect(readHook('github', { id: 3, config: {} })?.hasSecret).toBe(false);
    expect(readHook('github', { message: 'Not Found' })).toBeUndefined();
  });

  it("reads GitLab's hook: the flags on are its events, a disabled alert status is inactive, the token unknown", () => {
    const hook = readHook('gitlab', {
      id: 7,
      url: 'https://x',
      push_events: true,
      issues_events: false,
      note_events: true,
      enable_ssl_verification: false,
      alert_status: 'disabled',
    });
    expect(hook).toEqual({
      id: 7,
      url: 'https://x',
      contentType: 'json',
      tlsVerification: false,
      active: false,
      hasSecret: undefined,
      events: ['push_events', 'note_events'],
    });
  });

  it("reads each forge's delivery attempts: the delivery id, the event, the status (0 for none)", () => {
    expect(
      readAttempts('github', [
        { id: 2, guid: 'g-2', event: 'ping', status_code: 0 },
        { id: 1, guid: 'g-1', event: 'push', status_code: 202 },
        { nope: true },
      ]),
    ).toEqual([
      { id: 2, deliveryId: 'g-2', event: 'ping', status: 0, sentSecret: undefined },
      { id: 1, deliveryId: 'g-1', event: 'push', status: 202, sentSecret: undefined },
    ]);
    expect(
      readAttempts('gitlab', [
        {
          id: 5,
          response_status: 'internal error',
          request_headers: { 'Idempotency-Key': 'k', 'X-Gitlab-Event': 'Push Hook' },
        },
        { id: 4, response_status: '202', request_headers: { 'X-Gitlab-Token': '[REDACTED]' } },
      ]),
    ).toEqual([
      { id: 5, deliveryId: 'k', event: 'Push Hook', status: 0, sentSecret: false },
      { id: 4, deliveryId: undefined, event: undefined, status: 202, sentSecret: true },
    ]);
  });
});

describe('what is wrong with a hook', () => {
  it('finds nothing wrong with a hook as connect makes it, and names every difference of one that is not', () => {
    expect(differences(good(), wanted)).toEqual([]);
    expect(
      hookFindings(good(), wanted, [
        { id: 1, deliveryId: 'x', event: 'ping', status: 202, sentSecret: undefined },
      ]),
    ).toEqual([]);
    const bad = good({
      url: 'https://old.example/hook',
      contentType: 'form',
      tlsVerification: false,
      active: false,
      hasSecret: false,
      events: ['push'],
    });
    expect(differences(bad, wanted)).toEqual([
      'url',
      'content type',
      'tls verification',
      'active',
      'events',
      'secret',
    ]);
    const failing = [500, 401, 0, 202].map((status, n) => ({
      id: 9 - n,
      deliveryId: `d${n}`,
      event: 'push',
      status,
      sentSecret: undefined,
    }));
    expect(hookFindings(bad, wanted, failing)).toEqual([
      `posts to another URL: https://old.example/hook (the source's is ${URL_})`,
      'content type "form": the ingest reads JSON only (set "application/json")',
      'TLS verification is off: turn SSL verification on',
      'inactive: the forge sends it nothing',
      'no secret: the ingest refuses every delivery it sends',
      "not subscribed to issues, which the stage's rules route",
      'the last 3 deliveries failed (500, 401, no answer)',
    ]);
  });

  it("takes GitHub's * for every event, and wants it when the rules route everything", () => {
    expect(hookFindings(good({ events: ['*'] }), wanted, [])).toEqual([]);
    expect(hookFindings(good(), { url: URL_, events: ['*'] }, [])).toEqual([
      "not subscribed to *, which the stage's rules route",
    ]);
  });

  it('says no secret for a GitLab hook whose last event went without X-Gitlab-Token', () => {
    const hook = good({ hasSecret: undefined, events: ['push_events'] });
    expect(
      hookFindings(hook, { url: URL_, events: ['push_events'] }, [
        { id: 1, deliveryId: 'k', event: 'Push Hook', status: 202, sentSecret: false },
      ]),
    ).toEqual(['no secret: the ingest refuses every delivery it sends']);
  });
});

describe('the events the rules route', () => {
  it("reads this project's serverless.yml: a rule on source alone routes everything", () => {
    const text = readFileSync(new URL('../../../serverless.yml', import.meta.url), 'utf8');
    expect(routedEvents(text, 'github')).toEqual({ all: true });
    expect(gitHubEvents({ all: true })).toEqual(['*']);
  });

  it('reads detail-type names, prefixes and detail.event, per forge', () => {
    const yml = `
functions:
  a:
    handler: a.handler
    events:
      - eventBridge:
          eventBus: !GetAtt Bus.Name
          pattern:
            source: [forge.webhooks]
            detail-type: [issues.opened, { prefix: pull_request. }]
  b:
    handler: b.handler
    events:
      - eventBridge:
          pattern:
            source: [forge.webhooks]
            detail: { event: [push] }
  c:
    handler: c.handler
    events:
      - eventBridge:
          pattern:
            source: [forge.webhooks]
            detail: { forge: [gitea], event: [release] }
  d:
    handler: d.handler
    events:
      - schedule: rate(5 minutes)
`;
    const routed = routedEvents(yml, 'gitlab');
    expect(routed).toEqual({ all: false, events: ['issues', 'pull_request', 'push'] });
    expect(gitHubEvents(routed)).toEqual(['issues', 'pull_request', 'push']);
    expect(gitLabTriggers(routed)).toEqual([
      'push_events',
      'tag_push_events',
      'issues_events',
      'confidential_issues_events',
      'merge_requests_events',
    ]);
    expect(routedEvents(yml, 'gitea').all === false && routedEvents(yml, 'gitea')).toMatchObject({
      events: ['issues', 'pull_request', 'push', 'release'],
    });
  });
});

describe('bad input, in one line', () => {
  it('takes one place of the forge, owner/name for a repository', () => {
    expect(placeOf('github', { repo: 'acme/web', timeout: '30' })).toEqual(repo);
    expect(placeOf('gitlab', { group: 'acme', timeout: '30' })).toEqual({ kind: 'group', group: 'acme' });
    expect(() => placeOf('github', { timeout: '30' })).toThrow(
      'pass one of "--repo <owner/name>" and "--org <login>"',
    );
    expect(() => placeOf('github', { repo: 'a/b', org: 'c', timeout: '30' })).toThrow('pass one of');
    expect(() => placeOf('github', { repo: 'acme', timeout: '30' })).toThrow('"--repo" must be "owner/name"');
    expect(() => placeOf('gitlab', { timeout: '30' })).toThrow(
      'pass one of "--project <path>" and "--group <path>"',
    );
  });

  it('reads the token from the variable named, never from the command line', () => {
    expect(tokenFrom({ tokenEnv: 'GH' }, { GH: ' ghp_x ' })).toEqual({ token: 'ghp_x', label: '$GH' });
    expect(() => tokenFrom({}, {})).toThrow('missing "--token-env <NAME>"');
    expect(() => tokenFrom({ tokenEnv: 'GH' }, {})).toThrow(
      'the environment variable GH ("--token-env") is not set or empty',
    );
    expect(() => tokenFrom({ tokenEnv: 'GH' }, { GH: '  ' })).toThrow('is not set or empty');
    expect(() => tokenFrom({ tokenEnv: 'ghp_abc-1' }, {})).toThrow(
      '"--token-env" must be an environment variable name',
    );
  });

  it("checks the hook with the reconciler's reader: https, http only on loopback", () => {
    expect(checkedHook('github', hookEntry(repo, 1, 'https://ghe.example/api/v3', 'forge'))).toMatchObject({
      kind: 'repo',
      api: 'https://ghe.example/api/v3',
      owner: 'acme',
    });
    expect(checkedHook('gitlab', hookEntry(project, 1, 'http://127.0.0.1:9/api/v4', 'forge')).api).toBe(
      'http://127.0.0.1:9/api/v4',
    );
    expect(() => checkedHook('github', hookEntry(repo, 1, 'http://ghe.example/api/v3', 'forge'))).toThrow(
      '"--api" must be an https url without a query or credentials (http only on loopback)',
    );
    expect(() =>
      checkedHook('github', hookEntry({ kind: 'repo', owner: 'a b', repo: 'c' }, 1, 'https://x', 'f')),
    ).toThrow(/^"--repo" must be/);
  });

  it('never shows a hidden string, and names a source path', () => {
    expect(redact('token ghp_x and ghp_x, secret s', ['ghp_x', 's', ''])).toBe(
      'token [FILTERED] and [FILTERED], [FILTERED]ecret [FILTERED]',
    );
    expect(sourcePath('default')).toBe('/webhooks');
    expect(sourcePath('github')).toBe('/webhooks/github');
  });

  it("words the ingest's verdict: verified, or the diagnosis of the signature", () => {
    const base = { recordId: 'r', receivedAt: 0, bodyBytes: 2, outcome: 'rejected' as const, expiresAt: 0 };
    expect(judged({ ...base, verdict: 'verified', httpStatus: 202 }, 1300)).toEqual({
      verified: true,
      ms: 1300,
    });
    expect(
      judged(
        {
          ...base,
          verdict: 'bad_signature',
          httpStatus: 401,
          diagnosis: [{ code: 'wrong_secret', message: 'the signature was made with another secret' }],
        },
        900,
      ),
    ).toEqual({
      verified: false,
      ms: 900,
      reason: 'the ingest answered the test delivery 401: the signature was made with another secret',
      secretProblem: true,
    });
  });
});
