// The local stack's forge stand-ins: GitHub's hook-delivery API (local-stack/github-deliveries.ts) and GitLab's
// webhook-event API (local-stack/gitlab-events.ts), each with one hook that delivers into the stack's own
// `github` / `gitlab` source, signed with that source's secret, through the real ingest. Their API takes the
// local authorization server's access tokens (the token store's `forge` provider), so the reconcile function
// and `forgebridge reconcile` read and redeliver from them as they would from the forges.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { SourceHook } from '../lib/aws/internal.js';
import { type GitHubDeliveries, startGitHubDeliveries } from './github-deliveries.js';
import { type GitLabEvents, startGitLabEvents } from './gitlab-events.js';
import type { SendDelivery } from './stand-in-server.js';

/** The hook paths of the stand-ins (under GitHub's API root, and GitLab's `/api/v4`). */
export const STAND_IN_HOOKS = {
  github: { path: '/repos/acme/web/hooks/1', hook: { kind: 'repo', owner: 'acme', repo: 'web', id: 1 } },
  gitlab: { path: '/projects/acme%2Fweb/hooks/1', hook: { kind: 'project', project: 'acme/web', id: 1 } },
} as const;

/** Options of {@link startForgeStandIns}. */
export interface ForgeStandInsOptions {
  /** The local authorization server: its tokens (audience `audience`) are the ones the stand-ins accept. */
  issuer: string;
  jwksUri: string;
  audience: string;
  /** The token-store provider the hooks name. */
  provider: string;
  /** The secret each hook delivers with, by forge (the stack's `github` and `gitlab` sources' own). */
  secrets: { github: string; gitlab: string };
  /** How long a delivery may take before the stand-in records no answer, as a forge does. Default 10000 ms. */
  timeoutMs?: number;
}

/** The running stand-ins. */
export interface ForgeStandIns {
  readonly github: GitHubDeliveries;
  readonly gitlab: GitLabEvents;
  /** The `hook` of the stack's `github` and `gitlab` sources. */
  readonly hooks: { github: SourceHook; gitlab: SourceHook };
  /** Where each hook delivers: set once the ingest listens (deliveries before that are recorded as no answer). */
  target(urls: { github: string; gitlab: string }): void;
  stop(): Promise<void>;
}

/** Starts both stand-ins on 127.0.0.1. */
export async function startForgeStandIns(options: ForgeStandInsOptions): Promise<ForgeStandIns> {
  const jwks = createRemoteJWKSet(new URL(options.jwksUri));
  const accepts = async (token: string) => {
    try {
      await jwtVerify(token, jwks, { issuer: options.issuer, audience: options.audience });
      return true;
    } catch {
      return false;
    }
  };
  const urls: { github?: string; gitlab?: string } = {};
  const sender =
    (forge: 'github' | 'gitlab') =>
    async ({ headers, body, url: own }: Parameters<SendDelivery>[0]): Promise<number> => {
      const url = own ?? urls[forge];
      if (url === undefined) return 0;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
        await response.arrayBuffer();
        return response.status;
      } catch {
        // Timed out or no connection: the forge records no answer.
        return 0;
      }
    };
  const github = await startGitHubDeliveries({ accepts, send: sender('github') });
  const gitlab = await startGitLabEvents({ accepts, send: sender('gitlab') }).catch(
    async (error: unknown) => {
      await github.close();
      throw error;
    },
  );
  github.addHook(STAND_IN_HOOKS.github.path, options.secrets.github);
  gitlab.addHook(STAND_IN_HOOKS.gitlab.path, options.secrets.gitlab);
  return {
    github,
    gitlab,
    hooks: {
      github: { ...STAND_IN_HOOKS.github.hook, api: github.url, provider: options.provider },
      gitlab: { ...STAND_IN_HOOKS.gitlab.hook, api: gitlab.api, provider: options.provider },
    },
    target(given) {
      urls.github = given.github;
      urls.gitlab = given.gitlab;
      for (const hook of gitlab.hooks.values()) if (hook.target === undefined) hook.url = given.gitlab;
    },
    async stop() {
      await github.settled();
      await Promise.all([github.close(), gitlab.close()]);
    },
  };
}
