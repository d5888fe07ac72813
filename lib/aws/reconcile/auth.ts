/**
 * The token a hook's API calls carry: the token store's token of the hook's provider (an OAuth client's or a
 * GitHub App installation's), or, for a GitHub App's own hook, an app JWT signed with the app's private key.
 */
import type { KeyObject } from 'node:crypto';
import { AwsDefaults } from '../constants.js';
import { ForgeGovernor } from '../governor/governor.js';
import type { GovernorConfig } from '../governor/limits.js';
import { createSecretsProvider } from '../secrets.js';
import type { GitHubAppConfig, TokenSourceConfig } from '../tokens/config.js';
import { loadGitHubAppKey, signGitHubAppJwt } from '../tokens/github-app.js';
import { createTokenSource, type TokenSourceOptions } from '../tokens/token-source.js';
import type { HookAuth } from './types.js';

/** A JWT is signed anew once it is this old (GitHub accepts it for 10 minutes from its backdated `iat`). */
const JWT_REUSE_MS = 5 * 60 * 1000;

/**
 * The token store's token of one entry, as the `authorization` of API calls; `renew` forces a refresh. With
 * `governor` on, every call takes its turn with the token owner's forge API governor (docs/rate-limits.md).
 */
export function storeAuth(
  entry: TokenSourceConfig,
  options: TokenSourceOptions & { governor?: GovernorConfig | undefined },
): HookAuth {
  const source = createTokenSource(entry, options);
  const settings = options.governor;
  return {
    governor:
      settings?.enabled === true
        ? new ForgeGovernor({
            client: options.documentClient,
            tableName: options.tableName,
            owner: source.key,
            limits: settings.limits,
            maxWaitMs: settings.maxWaitMs,
            leaseSeconds: settings.leaseSeconds,
            logger: options.logger,
          })
        : undefined,
    async authorization() {
      const token = await (await source.store()).get();
      return `Bearer ${token.token}`;
    },
    async renew() {
      await (await source.store()).refresh({ force: true });
    },
  };
}

/** A GitHub App's JWT (for `/app/hook/...`), its private key read once from SSM or, offline, the environment. */
export function gitHubAppJwtAuth(
  entry: GitHubAppConfig,
  options: Pick<TokenSourceOptions, 'ssm' | 'env'> & { now?: (() => number) | undefined },
): HookAuth {
  const secrets = createSecretsProvider(
    { secretParameter: entry.privateKeyParameter, secretEnv: entry.privateKeyEnv },
    {
      ssm: options.ssm,
      env: options.env,
      single: true,
      defaultSecretEnv: AwsDefaults.githubAppPrivateKeyEnvVar,
    },
  );
  const now = options.now ?? Date.now;
  let key: KeyObject | undefined;
  let jwt: { value: string; at: number } | undefined;
  return {
    async authorization() {
      if (jwt === undefined || now() - jwt.at > JWT_REUSE_MS) {
        if (key === undefined) {
          const [pem] = await secrets.getSecrets();
          key = loadGitHubAppKey(pem as string, entry.appId);
        }
        jwt = { value: await signGitHubAppJwt(entry.appId, key, now()), at: now() };
      }
      return `Bearer ${jwt.value}`;
    },
    async renew() {
      jwt = undefined;
    },
  };
}
