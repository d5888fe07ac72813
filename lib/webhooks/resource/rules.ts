/**
 * Each forge's rule for the resource a delivery is about (a pull request, an issue, a pushed ref) and the
 * repository it comes from, as keys (docs/forges.md, "The resource a delivery is about"). The presets in
 * forges.ts carry these rules as their `resource` trait. A rule never throws: a payload without the fields it
 * reads gets the repository key, or `undefined` when it names no repository either.
 */

/** A forge's rule for the keys of a delivery's repository and of the resource it is about. */
export interface ResourceRule {
  /**
   * The repository (GitLab: the project) a delivery comes from (`octo/hello`), or `undefined` when the payload
   * names none.
   */
  readonly repository: (payload: unknown) => string | undefined;
  /**
   * The resource a delivery is about (`octo/hello#pr:42`, `octo/hello@refs/heads/main`, `group/project!mr:7`);
   * the repository key when the payload names no narrower resource, `undefined` when it names no repository.
   */
  readonly resource: (nativeName: string, payload: unknown) => string | undefined;
}

/**
 * GitHub, Gitea and Forgejo: `repository.full_name`, plus the pull request's number (`pull_request.number`, or
 * `issue.number` when that issue is a pull request), the issue's number (`issue.number`), or `ref` for a `push`.
 */
export const githubResourceRule: ResourceRule = {
  repository: repositoryFullName,
  resource(nativeName, payload) {
    const repository = repositoryFullName(payload);
    if (repository === undefined) return undefined;
    const pullRequest = numberAt(objectAt(payload, 'pull_request'), 'number');
    if (pullRequest !== undefined) return `${repository}#pr:${pullRequest}`;
    const issue = objectAt(payload, 'issue');
    const issueNumber = numberAt(issue, 'number');
    if (issueNumber !== undefined) {
      // GitHub, Gitea and Forgejo number issues and pull requests in one sequence, and a comment on (or a
      // milestone of) a pull request comes as an issue event whose issue has a `pull_request` (Gitea: `is_pull`).
      const isPull = objectAt(issue, 'pull_request') !== undefined || fieldAt(payload, 'is_pull') === true;
      return `${repository}#${isPull ? 'pr' : 'issue'}:${issueNumber}`;
    }
    if (nativeName === 'push') return refKey(repository, stringAt(payload, 'ref'));
    return repository;
  },
};

// GitLab numbers merge requests and issues apart (each has its own `iid` sequence); work items are issues.
const GITLAB_NOTE_TARGETS: Readonly<Record<string, readonly [string, 'merge_request' | 'issue']>> = {
  MergeRequest: ['!mr:', 'merge_request'],
  Issue: ['#issue:', 'issue'],
};

/**
 * GitLab: `project.path_with_namespace`, plus the merge request's or issue's `iid` (`object_attributes.iid` of a
 * `merge_request`, `issue` or `work_item` event; `merge_request.iid` or `issue.iid` of a note on one), or `ref`
 * for a `push` or `tag_push`. The event is the payload's `object_kind` (a system hook's `event_name`).
 */
export const gitlabResourceRule: ResourceRule = {
  repository: projectPath,
  resource(_nativeName, payload) {
    const repository = projectPath(payload);
    if (repository === undefined) return undefined;
    const attributes = objectAt(payload, 'object_attributes');
    switch (stringAt(payload, 'object_kind') ?? stringAt(payload, 'event_name')) {
      case 'merge_request':
        return numberedKey(repository, '!mr:', numberAt(attributes, 'iid'));
      case 'issue':
      case 'work_item':
        return numberedKey(repository, '#issue:', numberAt(attributes, 'iid'));
      case 'note': {
        const target = stringAt(attributes, 'noteable_type');
        if (target === undefined || !Object.hasOwn(GITLAB_NOTE_TARGETS, target)) return repository;
        const [marker, field] = GITLAB_NOTE_TARGETS[target] as readonly [string, string];
        return numberedKey(repository, marker, numberAt(objectAt(payload, field), 'iid'));
      }
      case 'push':
      case 'tag_push':
        return refKey(repository, stringAt(payload, 'ref'));
      default:
        return repository;
    }
  },
};

const BITBUCKET_REF_PREFIXES: Readonly<Record<string, string>> = { branch: 'refs/heads/', tag: 'refs/tags/' };

/**
 * Bitbucket Cloud: `repository.full_name`, plus the pull request's `pullrequest.id` or the issue's `issue.id`
 * (numbered apart), or for a `repo:push` the one ref its `push.changes` all touch (`refs/heads/<name>` for a
 * branch, `refs/tags/<name>` for a tag; the repository alone when they touch several).
 */
export const bitbucketResourceRule: ResourceRule = {
  repository: repositoryFullName,
  resource(_nativeName, payload) {
    const repository = repositoryFullName(payload);
    if (repository === undefined) return undefined;
    const pullRequest = numberAt(objectAt(payload, 'pullrequest'), 'id');
    if (pullRequest !== undefined) return `${repository}#pr:${pullRequest}`;
    const issue = numberAt(objectAt(payload, 'issue'), 'id');
    if (issue !== undefined) return `${repository}#issue:${issue}`;
    const changes = fieldAt(objectAt(payload, 'push'), 'changes');
    if (!Array.isArray(changes)) return repository;
    const refs = new Set(
      changes.map((change) => bitbucketRef(objectAt(change, 'new') ?? objectAt(change, 'old'))),
    );
    const [ref] = refs;
    return refs.size === 1 ? refKey(repository, ref) : repository;
  },
};

function repositoryFullName(payload: unknown): string | undefined {
  return repositoryName(stringAt(objectAt(payload, 'repository'), 'full_name'));
}

function projectPath(payload: unknown): string | undefined {
  return repositoryName(stringAt(objectAt(payload, 'project'), 'path_with_namespace'));
}

function bitbucketRef(target: object | undefined): string | undefined {
  const type = stringAt(target, 'type');
  const name = stringAt(target, 'name');
  if (type === undefined || name === undefined || !Object.hasOwn(BITBUCKET_REF_PREFIXES, type))
    return undefined;
  return `${BITBUCKET_REF_PREFIXES[type]}${name}`;
}

function numberedKey(repository: string, marker: string, value: number | undefined): string {
  return value === undefined ? repository : `${repository}${marker}${value}`;
}

function refKey(repository: string, ref: string | undefined): string {
  return ref === undefined ? repository : `${repository}@${ref}`;
}

/**
 * A repository name fit for a key: no forge allows `#`, `!` or `@` in one, and a key's suffix starts with one of
 * them, so a name holding one is treated as missing (two resources' keys can then never be equal).
 */
function repositoryName(name: string | undefined): string | undefined {
  return name !== undefined && !/[#!@]/.test(name) ? name : undefined;
}

function fieldAt(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

function objectAt(value: unknown, key: string): object | undefined {
  const field = fieldAt(value, key);
  return field !== null && typeof field === 'object' && !Array.isArray(field) ? field : undefined;
}

function stringAt(value: unknown, key: string): string | undefined {
  const field = fieldAt(value, key);
  return typeof field === 'string' && field.length > 0 ? field : undefined;
}

function numberAt(value: unknown, key: string): number | undefined {
  const field = fieldAt(value, key);
  return Number.isSafeInteger(field) && (field as number) >= 0 ? (field as number) : undefined;
}
