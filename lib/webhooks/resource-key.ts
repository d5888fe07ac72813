/**
 * The resource a delivery is about, as a key: the pull request, issue or pushed ref of a forge's delivery
 * (`octo/hello#pr:42`), read by the rule its preset carries (`resource`), or, for a sender without a rule, the
 * value at a path the user names. The rules, fields and key format are in docs/forges.md, "The resource a
 * delivery is about"; what the keys are for is in docs/ordering.md.
 */
import { type Forge, resolvePreset } from './forges.js';

export { parseKeyPath, type ResourceKeyReader, resourceKeyAt } from './resource/key-path.js';
export type { ResourceRule } from './resource/rules.js';

/**
 * The key of the resource a delivery from `forge` is about: `octo/hello#pr:42` (a pull request, or a comment,
 * review or milestone on one), `octo/hello#issue:7`, `octo/hello@refs/heads/main` (a push), `group/project!mr:7`
 * (a GitLab merge request); the repository key (`octo/hello`) when the payload names no narrower resource or
 * lacks its fields; `undefined` when it names no repository either, and for a sender without a resource rule
 * (`generic`, `standard`, `svix`: use `resourceKeyAt`). Never throws on a payload.
 *
 * @param nativeName The event name as the forge sent it (`push`, `Merge Request Hook`).
 * @throws TypeError naming "forge" when it is not one of `Forges`.
 * @example
 * ```ts
 * resourceKey('github', 'issue_comment', { repository: { full_name: 'octo/hello' },
 *   issue: { number: 42, pull_request: { url: '…' } } }); // 'octo/hello#pr:42'
 * ```
 */
export function resourceKey(forge: Forge, nativeName: string, payload: unknown): string | undefined {
  return resolvePreset(forge).resource?.resource(nativeName, payload);
}

/**
 * The key of the repository (GitLab: the project) a delivery from `forge` comes from (`octo/hello`), for a
 * subscriber that groups by repository rather than by resource; `undefined` when the payload names none, and for
 * a sender without a resource rule. Never throws on a payload.
 *
 * @throws TypeError naming "forge" when it is not one of `Forges`.
 */
export function repositoryKey(forge: Forge, payload: unknown): string | undefined {
  return resolvePreset(forge).resource?.repository(payload);
}
