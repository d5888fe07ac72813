/**
 * GitLab's project and group hooks API ("Project webhooks", "Group webhooks"): a hook with a secret token and a
 * trigger flag per kind of event, its events log, its test hook (a push).
 */
import { CliError } from '../errors.js';
import { GITLAB_ALL_TRIGGERS, GITLAB_TEST_TRIGGER, gitLabTriggers } from '../hook-events.js';
import type { HookApi } from './types.js';

export const gitLabHooks: HookApi = {
  placeKinds: ['project', 'group'],
  placeWords: 'GitLab project or group',
  placeOptions: [
    ['--project <path>', 'the project (id or full path) whose hook to create'],
    ['--group <path>', "the group's hook instead"],
  ],
  placeOf(options) {
    if ((options.project === undefined) === (options.group === undefined)) {
      throw new CliError('pass one of "--project <path>" and "--group <path>"');
    }
    return options.project !== undefined
      ? { kind: 'project', project: options.project }
      : { kind: 'group', group: options.group as string };
  },
  headers: { accept: 'application/json' },
  // The secret token, TLS verification on and every trigger flag set: on for the events, off for the rest
  // (GitLab turns `push_events` on by default).
  createBody(wanted) {
    const flags = Object.fromEntries(GITLAB_ALL_TRIGGERS.map((flag) => [flag, wanted.events.includes(flag)]));
    return { url: wanted.url, token: wanted.secret, enable_ssl_verification: true, ...flags };
  },
  // `PUT`: the URL, the token, TLS verification and the wanted flags (the hook's other flags stay).
  update: (_hook, wanted, options) => ({
    method: 'PUT',
    body: {
      url: wanted.url,
      enable_ssl_verification: true,
      ...(options.secret ? { token: wanted.secret } : {}),
      ...Object.fromEntries(wanted.events.map((flag) => [flag, true])),
    },
  }),
  testPath: `/test/${GITLAB_TEST_TRIGGER}`,
  attemptsPath: '/events?per_page=20',
  readHook(hook) {
    const status = hook.alert_status;
    const disabledUntil =
      typeof hook.disabled_until === 'string' ? Date.parse(hook.disabled_until) : Number.NaN;
    return {
      id: hook.id,
      url: typeof hook.url === 'string' ? hook.url : undefined,
      contentType: 'json',
      tlsVerification: hook.enable_ssl_verification !== false,
      active:
        (status === undefined || status === 'executable') &&
        !(Number.isFinite(disabledUntil) && disabledUntil > Date.now()),
      hasSecret: undefined,
      events: Object.keys(hook).filter((key) => key.endsWith('_events') && hook[key] === true),
    };
  },
  readAttempt(entry) {
    const headers = (entry.request_headers ?? {}) as Record<string, unknown>;
    const key = headers['Idempotency-Key'];
    const status = Number(entry.response_status);
    return {
      id: entry.id,
      deliveryId: typeof key === 'string' ? key : undefined,
      event:
        typeof headers['X-Gitlab-Event'] === 'string' ? (headers['X-Gitlab-Event'] as string) : undefined,
      status: Number.isInteger(status) ? status : 0,
      sentSecret: 'X-Gitlab-Token' in headers,
    };
  },
  events: gitLabTriggers,
  testEvent: 'push',
  testAttemptEvent: undefined,
};
