/**
 * GitHub's repository and organization hooks API ("Repository webhooks", "Organization webhooks"): a `web` hook
 * with JSON content, its deliveries log, its ping.
 */
import { CliError } from '../errors.js';
import { gitHubEvents } from '../hook-events.js';
import type { HookApi } from './types.js';

export const gitHubHooks: HookApi = {
  placeKinds: ['repo', 'org'],
  placeWords: 'GitHub repository or organization',
  placeOptions: [
    ['--repo <owner/name>', 'the repository whose hook to create'],
    ['--org <login>', "the organization's hook instead"],
  ],
  placeOf(options) {
    if ((options.repo === undefined) === (options.org === undefined)) {
      throw new CliError('pass one of "--repo <owner/name>" and "--org <login>"');
    }
    if (options.org !== undefined) return { kind: 'org', org: options.org };
    const [owner, repo, extra] = (options.repo as string).split('/');
    if (owner === undefined || repo === undefined || extra !== undefined || owner === '' || repo === '') {
      throw new CliError('"--repo" must be "owner/name"');
    }
    return { kind: 'repo', owner, repo };
  },
  headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
  // A `web` hook with JSON content, the secret, TLS verification on (`insecure_ssl` "0"), active and the events.
  createBody: (wanted) => ({
    name: 'web',
    active: true,
    events: [...wanted.events],
    config: { url: wanted.url, content_type: 'json', secret: wanted.secret, insecure_ssl: '0' },
  }),
  // `PATCH`: the whole `config`, and `add_events` for the wanted events it lacks (`events: ["*"]` for all).
  update(hook, wanted, options) {
    const all = wanted.events.includes('*');
    const missing = wanted.events.filter((event) => !hook.events.includes(event));
    return {
      method: 'PATCH',
      body: {
        active: true,
        config: {
          url: wanted.url,
          content_type: 'json',
          insecure_ssl: '0',
          ...(options.secret ? { secret: wanted.secret } : {}),
        },
        ...(all ? { events: ['*'] } : missing.length > 0 ? { add_events: missing } : {}),
      },
    };
  },
  testPath: '/pings',
  attemptsPath: '/deliveries?per_page=20',
  readHook(hook) {
    const config = (hook.config ?? {}) as Record<string, unknown>;
    const insecure = config.insecure_ssl;
    return {
      id: hook.id,
      url: typeof config.url === 'string' ? config.url : undefined,
      contentType: typeof config.content_type === 'string' ? config.content_type : undefined,
      tlsVerification: insecure === undefined || insecure === '0' || insecure === 0,
      active: hook.active === true,
      hasSecret: typeof config.secret === 'string' && config.secret.length > 0,
      events: Array.isArray(hook.events) ? hook.events.filter((event) => typeof event === 'string') : [],
    };
  },
  readAttempt: (entry) => ({
    id: entry.id,
    deliveryId: typeof entry.guid === 'string' ? entry.guid : undefined,
    event: typeof entry.event === 'string' ? entry.event : undefined,
    status: typeof entry.status_code === 'number' ? entry.status_code : 0,
    sentSecret: undefined,
  }),
  events: gitHubEvents,
  testEvent: 'ping',
  testAttemptEvent: 'ping',
};
