// The resource a delivery is about, per forge preset (docs/forges.md, "The resource a delivery is about"): over
// every @octokit/webhooks-examples payload for the GitHub family, the per-forge fixtures and own-shape samples for
// GitLab and Bitbucket, the fall-backs for payloads missing fields, and properties: no JSON payload makes a rule
// throw, and two different resources never get one key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Forge,
  Forges,
  forgeOwnSample,
  forgeOwnSampleNames,
  repositoryKey,
  resolvePreset,
  resourceKey,
} from '../../../lib/webhooks/index.js';
import { forgeDeliveries } from '../../fixtures/forges/deliveries.js';
import { loadWebhookExamples } from '../../helpers/webhook-examples.js';

const GITHUB_FAMILY = ['github', 'gitea', 'forgejo'] as const;
const PULL_REQUEST_EVENTS = new Set([
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'pull_request_review_thread',
]);
const ISSUE_EVENTS = new Set(['issues', 'issue_comment']);

type Json = Record<string, unknown>;
const field = (value: unknown, key: string): Json => (value as Json)[key] as Json;

describe('the presets’ resource trait', () => {
  it('gives every forge a rule but the senders that name no repository (generic, standard, svix)', () => {
    expect(Forges.filter((forge) => resolvePreset(forge).resource === undefined)).toEqual([
      'generic',
      'standard',
      'svix',
    ]);
  });

  it('gives no key to a sender without a rule, even for a payload that names a repository', () => {
    const payload = { repository: { full_name: 'octo/hello' }, pull_request: { number: 1 } };
    for (const forge of ['generic', 'standard', 'svix'] as const) {
      expect(resourceKey(forge, 'pull_request', payload)).toBeUndefined();
      expect(repositoryKey(forge, payload)).toBeUndefined();
    }
  });

  it('refuses a forge that has no preset with a TypeError naming "forge"', () => {
    expect(() => resourceKey('gogs' as Forge, 'push', {})).toThrow(TypeError);
    expect(() => repositoryKey('gogs' as Forge, {})).toThrow(/"forge" must be one of/);
  });
});

describe('resourceKey() for GitHub, Gitea and Forgejo, over every @octokit/webhooks-examples payload', () => {
  const examples = loadWebhookExamples();

  it('keys a pull request’s events by its number, which is also the payload’s top-level number', () => {
    const pulls = examples.filter((example) => PULL_REQUEST_EVENTS.has(example.forgeName));
    expect(pulls.length).toBeGreaterThan(40);
    for (const { forgeName, payload, label } of pulls) {
      const repository = field(payload.repository, 'full_name');
      const number = field(payload.pull_request, 'number');
      for (const forge of GITHUB_FAMILY) {
        expect(resourceKey(forge, forgeName, payload), label).toBe(`${repository}#pr:${number}`);
      }
      if (forgeName === 'pull_request') expect(number, label).toBe(payload.number);
    }
  });

  it('keys an issue’s events by its number, and those of an issue that is a pull request as that pull request', () => {
    const issues = examples.filter((example) => ISSUE_EVENTS.has(example.forgeName));
    expect(issues.length).toBeGreaterThan(30);
    const onPulls = issues.filter((example) => field(example.payload.issue, 'pull_request') !== undefined);
    // The milestoned and demilestoned examples are about pull request 2 of Codertocat/Hello-World.
    expect(onPulls.map((example) => example.action)).toContain('milestoned');
    for (const { forgeName, payload, label } of issues) {
      const repository = field(payload.repository, 'full_name');
      const issue = payload.issue as Json;
      const kind = issue.pull_request === undefined ? 'issue' : 'pr';
      for (const forge of GITHUB_FAMILY) {
        expect(resourceKey(forge, forgeName, payload), label).toBe(`${repository}#${kind}:${issue.number}`);
      }
    }
    for (const { forgeName, payload } of onPulls) {
      expect(resourceKey('github', forgeName, payload)).toBe('Codertocat/Hello-World#pr:2');
    }
  });

  it('keys a comment on a pull request (an issue_comment) as the pull request itself', () => {
    const comment = examples.find((example) => example.forgeName === 'issue_comment');
    const pull = examples.find((example) => example.forgeName === 'pull_request');
    if (comment === undefined || pull === undefined)
      throw new Error('no issue_comment or pull_request example');
    const issue = { ...(comment.payload.issue as Json), number: field(pull.payload.pull_request, 'number') };
    const onPull = {
      ...comment.payload,
      repository: pull.payload.repository,
      issue: { ...issue, pull_request: { url: 'https://api.github.com/repos/o/r/pulls/2' } },
    };
    expect(resourceKey('github', 'issue_comment', onPull)).toBe(
      resourceKey('github', 'pull_request', pull.payload),
    );
  });

  it('keys a push by its ref', () => {
    const pushes = examples.filter((example) => example.forgeName === 'push');
    expect(pushes.length).toBeGreaterThan(0);
    for (const { payload, label } of pushes) {
      expect(payload.ref, label).toMatch(/^refs\//);
      for (const forge of GITHUB_FAMILY) {
        expect(resourceKey(forge, 'push', payload), label).toBe(
          `${field(payload.repository, 'full_name')}@${payload.ref}`,
        );
      }
    }
  });

  it('keys every other event by its repository alone, and one without a repository not at all', () => {
    const others = examples.filter(
      (example) =>
        !PULL_REQUEST_EVENTS.has(example.forgeName) &&
        !ISSUE_EVENTS.has(example.forgeName) &&
        example.forgeName !== 'push',
    );
    const repositoryless = others.filter((example) => example.payload.repository === undefined);
    // create, delete and workflow_dispatch carry a `ref` too, but only a push is keyed by it.
    expect(others.filter((example) => typeof example.payload.ref === 'string').length).toBeGreaterThan(0);
    expect(repositoryless.length).toBeGreaterThan(0);
    for (const { forgeName, payload, label } of others) {
      const repository =
        payload.repository === undefined ? undefined : field(payload.repository, 'full_name');
      for (const forge of GITHUB_FAMILY) {
        expect(resourceKey(forge, forgeName, payload), label).toBe(repository);
        expect(repositoryKey(forge, payload), label).toBe(repository);
      }
    }
  });

  it('gives every example of the three forges its repository key as the repository key', () => {
    for (const { payload, label } of examples) {
      const repository =
        payload.repository === undefined ? undefined : field(payload.repository, 'full_name');
      expect(repositoryKey('github', payload), label).toBe(repository);
    }
  });
});

describe('resourceKey() for Gitea’s and Forgejo’s own event names and fields', () => {
  const repository = { id: 140, full_name: 'gitea/webhooks' };

  it('keys their pull request events (a label change, an approval, a rejection, a review) by the pull request', () => {
    const pull = { id: 9, number: 4 };
    const deliveries: [string, Json][] = [
      ['pull_request', { action: 'label_updated', number: 4, pull_request: pull, repository }],
      ['pull_request', { action: 'synchronized', number: 4, pull_request: pull, repository }],
      [
        'pull_request_approved',
        {
          action: 'reviewed',
          pull_request: pull,
          review: { type: 'pull_request_review_approved' },
          repository,
        },
      ],
      [
        'pull_request_rejected',
        {
          action: 'reviewed',
          pull_request: pull,
          review: { type: 'pull_request_review_rejected' },
          repository,
        },
      ],
      [
        'pull_request_comment',
        {
          action: 'reviewed',
          pull_request: pull,
          review: { type: 'pull_request_review_comment' },
          repository,
        },
      ],
    ];
    for (const [name, payload] of deliveries) {
      expect(resourceKey('gitea', name, payload), name).toBe('gitea/webhooks#pr:4');
      expect(resourceKey('forgejo', name, payload), name).toBe('gitea/webhooks#pr:4');
    }
  });

  it('keys a comment on a pull request (is_pull, the issue’s pull_request) as the pull request', () => {
    const issue = { id: 12, number: 4, pull_request: { merged: false } };
    expect(
      resourceKey('gitea', 'issue_comment', { action: 'created', issue, repository, is_pull: true }),
    ).toBe('gitea/webhooks#pr:4');
    expect(
      resourceKey('forgejo', 'issue_comment', {
        action: 'created',
        issue: { id: 12, number: 4, pull_request: null },
        repository,
        is_pull: true,
      }),
    ).toBe('gitea/webhooks#pr:4');
  });

  it('keys a comment on an issue (a null pull_request, is_pull false) as the issue', () => {
    const payload = { issue: { number: 5, pull_request: null }, repository, is_pull: false };
    expect(resourceKey('gitea', 'issue_comment', payload)).toBe('gitea/webhooks#issue:5');
  });

  it('keys the fixtures’ Gitea and Forgejo deliveries by their pull request or ref', () => {
    const keys = forgeDeliveries
      .filter((delivery) => delivery.forge === 'gitea' || delivery.forge === 'forgejo')
      .map((delivery) => [
        delivery.label,
        resourceKey(delivery.forge, delivery.nativeName, delivery.payload),
      ]);
    expect(keys).toEqual([
      ['gitea pull request opened', 'gitea/webhooks#pr:1'],
      ['gitea push', 'gitea/webhooks@refs/heads/develop'],
      ['gitea pull request synchronized', 'gitea/webhooks#pr:1'],
      ['forgejo pull request opened', 'forgejo/webhooks#pr:3'],
      ['forgejo push', 'forgejo/webhooks@refs/heads/develop'],
    ]);
  });
});

describe('resourceKey() for GitLab', () => {
  const project = { id: 15, path_with_namespace: 'group/project' };

  it('keys the fixtures’ deliveries by merge request, issue or ref, falling back to the project', () => {
    const keys = forgeDeliveries
      .filter((delivery) => delivery.forge === 'gitlab')
      .map((delivery) => [delivery.label, resourceKey('gitlab', delivery.nativeName, delivery.payload)]);
    expect(keys).toEqual([
      ['gitlab merge request opened', 'gitlabhq/gitlab-test!mr:1'],
      ['gitlab push', 'gitlabhq/gitlab-test@refs/heads/master'],
      ['gitlab merge request merged', 'gitlabhq/gitlab-test!mr:1'],
      ['gitlab merge request updated with new commits', 'gitlabhq/gitlab-test!mr:1'],
      ['gitlab issue opened', 'gitlabhq/gitlab-test#issue:23'],
      ['gitlab comment on a merge request', 'gitlabhq/gitlab-test!mr:1'],
      // This note's payload lacks the `merge_request` GitLab sends: the project is the key.
      ['gitlab diff comment on a merge request', 'gitlabhq/gitlab-test'],
      ['gitlab pipeline succeeded', 'gitlabhq/gitlab-test'],
      // A system hook names no project under `project`.
      ['gitlab system hook', undefined],
    ]);
  });

  it('keys the own-shape samples (local-stack deliveries) by merge request, issue and ref', () => {
    const keys = forgeOwnSampleNames('gitlab').map((name) => {
      const sample = forgeOwnSample('gitlab', name);
      return sample && resourceKey('gitlab', sample.nativeName, sample.payload);
    });
    expect(keys).toEqual(['octo/hello!mr:1', 'octo/hello#issue:1', 'octo/hello@refs/heads/main']);
  });

  it('never gives a merge request and an issue of one iid one key', () => {
    const mr = { object_kind: 'merge_request', project, object_attributes: { iid: 7 } };
    const issue = { object_kind: 'issue', project, object_attributes: { iid: 7 } };
    expect(resourceKey('gitlab', 'Merge Request Hook', mr)).toBe('group/project!mr:7');
    expect(resourceKey('gitlab', 'Issue Hook', issue)).toBe('group/project#issue:7');
  });

  it('keys a note by the merge request or issue it is on, and one on a commit or snippet by the project', () => {
    const note = (noteable_type: string, extra: Json) => ({
      object_kind: 'note',
      project,
      object_attributes: { id: 1, noteable_type },
      ...extra,
    });
    expect(resourceKey('gitlab', 'Note Hook', note('MergeRequest', { merge_request: { iid: 3 } }))).toBe(
      'group/project!mr:3',
    );
    expect(resourceKey('gitlab', 'Confidential Note Hook', note('Issue', { issue: { iid: 3 } }))).toBe(
      'group/project#issue:3',
    );
    expect(resourceKey('gitlab', 'Note Hook', note('Commit', { commit: { id: 'da15608' } }))).toBe(
      'group/project',
    );
    expect(resourceKey('gitlab', 'Note Hook', note('Snippet', { snippet: { id: 53 } }))).toBe(
      'group/project',
    );
  });

  it('keys a confidential issue and a work item as issues, a tag push by its tag', () => {
    const attributes = { object_attributes: { iid: 2 }, project };
    expect(resourceKey('gitlab', 'Confidential Issue Hook', { object_kind: 'issue', ...attributes })).toBe(
      'group/project#issue:2',
    );
    expect(resourceKey('gitlab', 'Issue Hook', { object_kind: 'work_item', ...attributes })).toBe(
      'group/project#issue:2',
    );
    expect(
      resourceKey('gitlab', 'Tag Push Hook', { object_kind: 'tag_push', ref: 'refs/tags/v1.0.0', project }),
    ).toBe('group/project@refs/tags/v1.0.0');
  });

  it('gives the project key as the repository key', () => {
    expect(
      repositoryKey('gitlab', { object_kind: 'merge_request', project, object_attributes: { iid: 7 } }),
    ).toBe('group/project');
  });
});

describe('resourceKey() for Bitbucket Cloud', () => {
  const repository = { type: 'repository', full_name: 'team/hello' };

  it('keys the fixtures’ deliveries by pull request or ref', () => {
    const keys = forgeDeliveries
      .filter((delivery) => delivery.forge === 'bitbucket')
      .map((delivery) => [delivery.label, resourceKey('bitbucket', delivery.nativeName, delivery.payload)]);
    expect(keys).toEqual([
      ['bitbucket pull request created', 'team/hello#pr:5'],
      ['bitbucket push', 'team/hello@refs/heads/main'],
      ['bitbucket inline pull request comment', 'team/hello#pr:5'],
      ['bitbucket pull request merged', 'team/hello#pr:5'],
    ]);
  });

  it('keys the own-shape samples (local-stack deliveries) by pull request, issue and ref', () => {
    const keys = forgeOwnSampleNames('bitbucket').map((name) => {
      const sample = forgeOwnSample('bitbucket', name);
      return sample && resourceKey('bitbucket', sample.nativeName, sample.payload);
    });
    expect(keys).toEqual(['octo/hello#pr:1', 'octo/hello#issue:1', 'octo/hello@refs/heads/main']);
  });

  it('keys a comment on an issue by the issue, numbered apart from pull requests', () => {
    const payload = { repository, issue: { type: 'issue', id: 5 }, comment: { id: 1 } };
    expect(resourceKey('bitbucket', 'issue:comment_created', payload)).toBe('team/hello#issue:5');
  });

  it('keys a push by the one ref its changes touch: a deleted branch, a tag; several refs by the repository', () => {
    const push = (...changes: Json[]) => ({ repository, push: { changes } });
    const branch = (name: string) => ({ type: 'branch', name });
    expect(
      resourceKey('bitbucket', 'repo:push', push({ new: null, old: branch('gone'), closed: true })),
    ).toBe('team/hello@refs/heads/gone');
    expect(resourceKey('bitbucket', 'repo:push', push({ new: { type: 'tag', name: 'v1' }, old: null }))).toBe(
      'team/hello@refs/tags/v1',
    );
    expect(resourceKey('bitbucket', 'repo:push', push({ new: branch('a') }, { new: branch('b') }))).toBe(
      'team/hello',
    );
    expect(resourceKey('bitbucket', 'repo:push', push({ new: branch('a') }, { new: branch('a') }))).toBe(
      'team/hello@refs/heads/a',
    );
    expect(resourceKey('bitbucket', 'repo:push', push({ new: { type: 'named_branch', name: 'hg' } }))).toBe(
      'team/hello',
    );
    expect(resourceKey('bitbucket', 'repo:push', push())).toBe('team/hello');
  });
});

describe('resourceKey() on payloads missing fields', () => {
  it('falls back to the repository key when the resource’s field is missing or not a number', () => {
    const repository = { full_name: 'octo/hello' };
    expect(resourceKey('github', 'pull_request', { repository, pull_request: {} })).toBe('octo/hello');
    expect(resourceKey('github', 'pull_request', { repository, pull_request: { number: '2' } })).toBe(
      'octo/hello',
    );
    expect(resourceKey('github', 'issues', { repository, issue: { number: -1 } })).toBe('octo/hello');
    expect(resourceKey('github', 'issues', { repository, issue: { number: 1.5 } })).toBe('octo/hello');
    expect(resourceKey('github', 'push', { repository, ref: '' })).toBe('octo/hello');
    expect(resourceKey('gitlab', 'Merge Request Hook', { object_kind: 'merge_request', project: {} })).toBe(
      undefined,
    );
    expect(
      resourceKey('gitlab', 'Merge Request Hook', {
        object_kind: 'merge_request',
        project: { path_with_namespace: 'g/p' },
      }),
    ).toBe('g/p');
    expect(resourceKey('bitbucket', 'pullrequest:created', { repository, pullrequest: { id: null } })).toBe(
      'octo/hello',
    );
  });

  it('gives no key when the payload names no repository, or one no forge allows', () => {
    for (const payload of [
      null,
      'text',
      42,
      [],
      {},
      { repository: 'octo/hello' },
      { repository: { full_name: 7 } },
    ]) {
      expect(resourceKey('github', 'push', payload)).toBeUndefined();
      expect(resourceKey('bitbucket', 'repo:push', payload)).toBeUndefined();
      expect(resourceKey('gitlab', 'Push Hook', payload)).toBeUndefined();
    }
    for (const full_name of ['octo/hello#pr:1', 'octo/hello@refs/heads/main', 'group/project!mr:7', '']) {
      expect(
        resourceKey('github', 'issues', { repository: { full_name }, issue: { number: 1 } }),
      ).toBeUndefined();
    }
  });

  it('reads a payload’s own fields only, never inherited ones', () => {
    const inherited = Object.create({ repository: { full_name: 'octo/hello' } }) as object;
    expect(resourceKey('github', 'push', inherited)).toBeUndefined();
    expect(
      resourceKey('github', 'push', JSON.parse('{"__proto__": {"full_name": "octo/hello"}}')),
    ).toBeUndefined();
  });
});

describe('resourceKey() properties', () => {
  const RULED = Forges.filter((forge) => resolvePreset(forge).resource !== undefined);
  const names = fc.constantFrom(
    'push',
    'pull_request',
    'issues',
    'issue_comment',
    'Merge Request Hook',
    'Note Hook',
    'repo:push',
    'pullrequest:created',
  );
  // Arbitrary JSON, and arbitrary JSON in the places the rules read, so that each branch meets odd values.
  const shaped = fc.record(
    {
      repository: fc.oneof(fc.jsonValue(), fc.record({ full_name: fc.jsonValue() })),
      project: fc.oneof(fc.jsonValue(), fc.record({ path_with_namespace: fc.jsonValue() })),
      pull_request: fc.jsonValue(),
      pullrequest: fc.jsonValue(),
      issue: fc.jsonValue(),
      merge_request: fc.jsonValue(),
      object_kind: fc.constantFrom(
        'merge_request',
        'issue',
        'note',
        'push',
        'tag_push',
        'work_item',
        'pipeline',
      ),
      object_attributes: fc.oneof(
        fc.jsonValue(),
        fc.record({ noteable_type: fc.constantFrom('MergeRequest', 'Issue') }),
      ),
      ref: fc.jsonValue(),
      is_pull: fc.jsonValue(),
      push: fc.oneof(fc.jsonValue(), fc.record({ changes: fc.array(fc.jsonValue()) })),
    },
    { requiredKeys: [] },
  );

  it('never throws on arbitrary JSON, and gives a non-empty string or undefined', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RULED),
        names,
        fc.oneof(fc.jsonValue(), shaped),
        (forge, name, payload) => {
          const key = resourceKey(forge, name, payload);
          const repository = repositoryKey(forge, payload);
          expect(key === undefined || (typeof key === 'string' && key.length > 0)).toBe(true);
          // A resource key is its repository key, or starts with it and a separator.
          if (key !== undefined)
            expect(key === repository || /^[#!@]/.test(key.slice(repository?.length))).toBe(true);
          else expect(repository).toBeUndefined();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('gives two different resources two different keys', () => {
    // Small domains, so that pairs often share a repository, a number or a ref and differ in the rest.
    const resource = fc.record({
      forge: fc.constantFrom('github', 'gitlab', 'bitbucket'),
      repository: fc.constantFrom('octo/hello', 'octo/hello-2', 'group/sub/project'),
      kind: fc.constantFrom('pull', 'issue', 'push', 'other'),
      number: fc.nat(3),
      ref: fc.oneof(
        fc.constantFrom('refs/heads/main', 'refs/tags/1'),
        // An empty branch or tag name is no ref: such a push is keyed by its repository.
        fc.string({ minLength: 1, maxLength: 12 }).filter((ref) => !/^refs\/(heads|tags)\/$/.test(ref)),
      ),
    });
    type Resource = typeof resource extends fc.Arbitrary<infer T> ? T : never;
    const delivery = ({ forge, repository, kind, number, ref }: Resource): [string, Json] => {
      if (forge === 'gitlab') {
        const objectKind = { pull: 'merge_request', issue: 'issue', push: 'push', other: 'pipeline' }[kind];
        const project = { path_with_namespace: repository };
        return ['Hook', { object_kind: objectKind, project, object_attributes: { iid: number }, ref }];
      }
      const repo = { full_name: repository };
      if (forge === 'bitbucket') {
        const name = ref.replace(/^refs\/(heads|tags)\//, '');
        const target = { type: ref.startsWith('refs/tags/') ? 'tag' : 'branch', name };
        if (kind === 'push') return ['repo:push', { repository: repo, push: { changes: [{ new: target }] } }];
        if (kind === 'other') return ['repo:fork', { repository: repo }];
        return ['event', { repository: repo, [kind === 'pull' ? 'pullrequest' : 'issue']: { id: number } }];
      }
      if (kind === 'push') return ['push', { repository: repo, ref }];
      if (kind === 'other') return ['star', { repository: repo }];
      return ['issues', { repository: repo, [kind === 'pull' ? 'pull_request' : 'issue']: { number } }];
    };
    // Bitbucket keys a push by `refs/heads/<name>` whatever the ref was called here.
    const refOf = ({ forge, ref }: Resource) =>
      forge === 'bitbucket' && !/^refs\/(heads|tags)\//.test(ref) ? `refs/heads/${ref}` : ref;
    const identity = (r: Resource) =>
      JSON.stringify([
        r.repository,
        r.kind,
        r.kind === 'push' ? refOf(r) : r.kind === 'other' ? 0 : r.number,
      ]);
    fc.assert(
      fc.property(resource, resource, (a, b) => {
        // Keys name a resource within one forge.
        fc.pre(a.forge === b.forge);
        const keyA = resourceKey(a.forge, ...delivery(a));
        const keyB = resourceKey(b.forge, ...delivery(b));
        expect(keyA).toBeDefined();
        expect(keyA === keyB, `${keyA} / ${keyB}`).toBe(identity(a) === identity(b));
      }),
      { numRuns: 2000 },
    );
  });
});
