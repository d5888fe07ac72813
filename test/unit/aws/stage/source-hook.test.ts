// The `hook` object of a source in FORGEBRIDGE_WEBHOOK_SOURCES, read by readIngestConfig (the reconciler reads
// the same sources): each kind's fields, defaults, and a clear error for every malformed field or forge.
import { describe, expect, it } from 'vitest';
import { readIngestConfig } from '../../../../lib/aws/stage/function-config.js';

const base = { FORGEBRIDGE_BUS_NAME: 'bus', FORGEBRIDGE_DEDUPE_TABLE: 'dedupe' };
const withSources = (sources: unknown[]) =>
  readIngestConfig({ ...base, FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(sources) });
const hookOf = (forge: string, hook: unknown) => withSources([{ name: 's', forge, hook }]).sources[0]?.hook;

describe('a source\'s "hook"', () => {
  it('reads each github kind with the default api and only the fields the kind needs', () => {
    expect(hookOf('github', { kind: 'repo', owner: 'acme', repo: 'app.js', id: 12, provider: 'gh' })).toEqual(
      {
        kind: 'repo',
        api: 'https://api.github.com',
        id: 12,
        provider: 'gh',
        owner: 'acme',
        repo: 'app.js',
      },
    );
    expect(
      hookOf('github', {
        kind: 'org',
        org: 'acme',
        id: '7',
        provider: 'gh',
        api: 'http://127.0.0.1:9/api/v3/',
      }),
    ).toEqual({
      kind: 'org',
      api: 'http://127.0.0.1:9/api/v3',
      id: 7,
      provider: 'gh',
      org: 'acme',
    });
    expect(hookOf('github', { kind: 'app', provider: 'app' })).toEqual({
      kind: 'app',
      api: 'https://api.github.com',
      provider: 'app',
    });
  });

  it('reads gitlab project and group hooks, a nested path or an id', () => {
    expect(hookOf('gitlab', { kind: 'project', project: 'acme/web/site', id: 3, provider: 'gl' })).toEqual({
      kind: 'project',
      api: 'https://gitlab.com/api/v4',
      id: 3,
      provider: 'gl',
      project: 'acme/web/site',
    });
    expect(hookOf('gitlab', { kind: 'group', group: 42, id: 3, provider: 'gl' })).toMatchObject({
      group: '42',
    });
  });

  it('leaves a source without "hook" as it was', () => {
    expect(withSources([{ name: 's', forge: 'github' }]).sources[0]).not.toHaveProperty('hook');
  });

  it.each(['gitea', 'forgejo', 'bitbucket', 'generic', 'standard', 'svix'])(
    'refuses a hook on a %s source: no delivery-log api',
    (forge) => {
      expect(() => hookOf(forge, { kind: 'repo', owner: 'a', repo: 'b', id: 1, provider: 'p' })).toThrow(
        new TypeError(
          `"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook" cannot be reconciled: ${forge} offers no api to list and redeliver a hook's deliveries (remove "hook")`,
        ),
      );
    },
  );

  it('names the field of every malformed hook', () => {
    const cases: [string, unknown, string][] = [
      ['github', 'repo', '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook" must be an object'],
      [
        'github',
        { kind: 'fork' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.kind" must be one of "repo", "org", "app", "project", "group"',
      ],
      [
        'gitlab',
        { kind: 'repo' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.kind" "repo" is a github hook: the source\'s "forge" must be "github"',
      ],
      [
        'github',
        { kind: 'project' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.kind" "project" is a gitlab hook: the source\'s "forge" must be "gitlab"',
      ],
      [
        'github',
        { kind: 'org', org: 'a', id: 1, provider: 'p', repo: 'x' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook" of kind "org" has an unknown field "repo"',
      ],
      [
        'github',
        { kind: 'org', org: 'a', id: 1 },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.provider" is required',
      ],
      [
        'github',
        { kind: 'org', org: 'a', provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.id" must be the hook\'s id, a positive integer',
      ],
      [
        'github',
        { kind: 'org', org: 'a', id: -1, provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.id" must be the hook\'s id, a positive integer',
      ],
      [
        'github',
        { kind: 'app', id: 1, provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.id" must be left out: an app has one hook',
      ],
      [
        'github',
        { kind: 'repo', owner: 'a', id: 1, provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.repo" is required',
      ],
      [
        'github',
        { kind: 'repo', owner: 'a/b', repo: 'c', id: 1, provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.owner" must be a user or organization login',
      ],
      [
        'github',
        { kind: 'org', org: 'a', id: 1, provider: 'p', api: 'ftp://x' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.api" must be an https url without a query or credentials (http only on loopback)',
      ],
      [
        'github',
        { kind: 'org', org: 'a', id: 1, provider: 'p', api: 'http://ghe.example.com/api/v3' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.api" must be an https url without a query or credentials (http only on loopback)',
      ],
      [
        'gitlab',
        {
          kind: 'project',
          project: 'a/b',
          id: 1,
          provider: 'p',
          api: 'http://127.0.0.1.evil.example/api/v4',
        },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.api" must be an https url without a query or credentials (http only on loopback)',
      ],
      [
        'gitlab',
        { kind: 'group', group: '../x/', id: 1, provider: 'p' },
        '"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook.group" must be a group id or its full path',
      ],
    ];
    for (const [forge, hook, message] of cases) {
      expect(() => hookOf(forge, hook), message).toThrow(new TypeError(message));
    }
  });
});
