/**
 * Sample deliveries in the names and payload shapes of the forges that do not send GitHub's: GitLab ("Webhook
 * events") and Bitbucket Cloud ("Event payloads"), small payloads for the catalogue names they map to
 * (docs/forges.md). GitHub, Gitea and Forgejo send GitHub's names and shapes: their samples are GitHub's.
 */
import { type Forge, resolvePreset } from './forges.js';

/** A forge's own delivery for a catalogue name: its event header's value and its payload. */
export interface ForgeOwnSample {
  /** The forge's own event name (`Merge Request Hook`, `pullrequest:created`). */
  readonly nativeName: string;
  readonly payload: Record<string, unknown>;
}

/** The forges whose event names and payload shapes are their own. */
export type OwnShapeForge = 'gitlab' | 'bitbucket';

const gitlabProject = { id: 15, name: 'hello', path_with_namespace: 'octo/hello' };
const gitlabUser = { id: 1, name: 'Octo', username: 'octo' };
const bitbucketRepository = { type: 'repository', name: 'hello', full_name: 'octo/hello' };
const bitbucketActor = { type: 'user', display_name: 'Octo' };

const OWN_SAMPLES: Record<OwnShapeForge, Record<string, [string, Record<string, unknown>]>> = {
  gitlab: {
    'pull_request.opened': [
      'Merge Request Hook',
      {
        object_kind: 'merge_request',
        user: gitlabUser,
        project: gitlabProject,
        object_attributes: { id: 99, iid: 1, title: 'Add a feature', state: 'opened', action: 'open' },
      },
    ],
    'issues.opened': [
      'Issue Hook',
      {
        object_kind: 'issue',
        user: gitlabUser,
        project: gitlabProject,
        object_attributes: { id: 301, iid: 1, title: 'A bug', state: 'opened', action: 'open' },
      },
    ],
    push: [
      'Push Hook',
      {
        object_kind: 'push',
        ref: 'refs/heads/main',
        before: '95790bf891e76fee5e1747ab589903a6a1f80f22',
        after: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
        user_username: 'octo',
        project: gitlabProject,
        commits: [],
        total_commits_count: 0,
      },
    ],
  },
  bitbucket: {
    'pull_request.opened': [
      'pullrequest:created',
      {
        actor: bitbucketActor,
        repository: bitbucketRepository,
        pullrequest: { type: 'pullrequest', id: 1, title: 'Add a feature', state: 'OPEN' },
      },
    ],
    'issues.opened': [
      'issue:created',
      {
        actor: bitbucketActor,
        repository: bitbucketRepository,
        issue: { type: 'issue', id: 1, title: 'A bug', state: 'new' },
      },
    ],
    push: [
      'repo:push',
      {
        actor: bitbucketActor,
        repository: bitbucketRepository,
        push: { changes: [{ new: { type: 'branch', name: 'main' }, old: { type: 'branch', name: 'main' } }] },
      },
    ],
  },
};

/**
 * A sample in GitHub's shape (its event header's value and payload) as `forge` sends it: a Standard Webhooks
 * sender (its preset's `eventNames` is `sender`) sends no event header and names the catalogue event in the
 * payload's `type` (`issues.opened`), which is then its native name; any other forge sends the sample as it is.
 *
 * @example
 * ```ts
 * asSentBy('standard', 'issues.opened', { nativeName: 'issues', payload: { action: 'opened' } });
 * // { nativeName: 'issues.opened', payload: { type: 'issues.opened', action: 'opened' } }
 * ```
 */
export function asSentBy(forge: Forge, eventName: string, sample: ForgeOwnSample): ForgeOwnSample {
  if (resolvePreset(forge).eventNames !== 'sender') return sample;
  return { nativeName: eventName, payload: { type: eventName, ...sample.payload } };
}

/** Whether `forge` names its events and shapes its payloads its own way (GitLab, Bitbucket), not GitHub's. */
export function hasOwnShapes(forge: Forge): forge is OwnShapeForge {
  return Object.hasOwn(OWN_SAMPLES, forge);
}

/**
 * The catalogue names `forge` has an own-shape sample for (`pull_request.opened`, `issues.opened`, `push`);
 * empty for the forges that send GitHub's shapes.
 */
export function forgeOwnSampleNames(forge: Forge): string[] {
  return hasOwnShapes(forge) ? Object.keys(OWN_SAMPLES[forge]) : [];
}

/**
 * A delivery as `forge` sends it for a catalogue name, in its own names and payload shape (a fresh copy), or
 * `undefined` when the forge sends GitHub's shapes or has no sample of that name.
 *
 * @example
 * ```ts
 * forgeOwnSample('gitlab', 'pull_request.opened')?.nativeName; // 'Merge Request Hook'
 * ```
 */
export function forgeOwnSample(forge: Forge, eventName: string): ForgeOwnSample | undefined {
  if (!hasOwnShapes(forge)) return undefined;
  const samples = OWN_SAMPLES[forge];
  const found = Object.hasOwn(samples, eventName) ? samples[eventName] : undefined;
  return found === undefined ? undefined : { nativeName: found[0], payload: structuredClone(found[1]) };
}
