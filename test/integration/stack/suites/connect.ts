// End to end through the local stack: `forgebridge connect` connects a GitHub repository and a GitLab project to the
// stack's `github` and `gitlab` sources through the stack's forge stand-ins (their hooks APIs, with a token of the
// local authorization server), each forge's test delivery reaches the real ingest signed and is verified in the
// delivery log, the project's config/local.yml (a temporary copy) names both hooks, and `forgebridge reconcile`,
// configured from that file, reads both hooks' delivery logs. `--check` exits 0 on the hooks as connect left them
// and 1 on one planted wrong. No output holds the token or a source's secret.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIngestConfig } from '../../../../lib/aws/stage/function-config.js';
import { readStageConfig } from '../../../../lib/aws/stage/index.js';
import { DEFAULT_CLIENT, FORGE_API_RESOURCE } from '../../../../local-stack/authorization-server.js';
import type { ForgeStandIns } from '../../../../local-stack/forge-stand-ins.js';
import { writeStateFile } from '../../../../local-stack/state-file.js';
import type { Run } from '../../../helpers/cli.js';
import { runMain } from '../../../helpers/cli-in-process.js';
import { gitHubResponseErrors } from '../../../helpers/github-openapi.js';
import { gitLabResponseErrors } from '../../../helpers/gitlab-events-schema.js';
import type { TestStack } from '../../../helpers/stack.js';

const ROOT = new URL('../../../../', import.meta.url).pathname;

/** Runs in the shared local stack (../local-stack.test.ts), which has the forge stand-ins. */
export function connectSuite(stack: () => TestStack): void {
  describe('connect: forgebridge connect through the local stack', () => {
    let t: TestStack;
    let forges: ForgeStandIns;
    let dir: string;
    let project: string;
    let env: Record<string, string>;
    let token: string;
    let hidden: string[];

    beforeAll(async () => {
      t = stack();
      forges = t.stack.forgeStandIns as ForgeStandIns;
      dir = mkdtempSync(join(tmpdir(), 'forgebridge-connect-stack-'));
      const file = join(dir, 'local-stack.json');
      writeStateFile(t.stack, file);
      project = join(dir, 'project');
      mkdirSync(join(project, 'config'), { recursive: true });
      copyFileSync(join(ROOT, 'config/local.yml'), join(project, 'config/local.yml'));
      copyFileSync(join(ROOT, 'serverless.yml'), join(project, 'serverless.yml'));
      // A token of the local authorization server for the forge API: what the stand-ins take.
      const answer = await fetch(t.stack.authorizationServer.tokenEndpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${DEFAULT_CLIENT.client_id}:${DEFAULT_CLIENT.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: 'forge:read',
          resource: FORGE_API_RESOURCE,
        }),
      });
      token = ((await answer.json()) as { access_token: string }).access_token;
      env = { FORGEBRIDGE_STATE_FILE: file, FORGE_TOKEN: token };
      hidden = [token, t.source('github').secret, t.source('gitlab').secret];
    }, 60_000);

    afterAll(() => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    async function cli(args: string[], extra: Record<string, string> = {}): Promise<Run> {
      const run = await runMain(args, { ...env, ...extra });
      for (const value of hidden) {
        expect(run.stdout).not.toContain(value);
        expect(run.stderr).not.toContain(value);
      }
      return run;
    }

    const connectGitHub = () =>
      cli([
        'connect',
        'github',
        '--repo',
        'acme/site',
        '--api',
        forges.github.url,
        '--token-env',
        'FORGE_TOKEN',
        '--dir',
        project,
      ]);
    const connectGitLab = () =>
      cli([
        'connect',
        'gitlab',
        '--project',
        'acme/site',
        '--api',
        forges.gitlab.api,
        '--token-env',
        'FORGE_TOKEN',
        '--dir',
        project,
      ]);
    const sources = () => {
      const config = readStageConfig({ stage: 'local', dir: project, env: {}, offline: true });
      return config.settings.FORGEBRIDGE_WEBHOOK_SOURCES;
    };

    it('connects a GitHub repository and a GitLab project: one hook each, each test delivery verified, both in the file', async () => {
      const github = await connectGitHub();
      expect(github.stderr).toBe('');
      expect(github.code).toBe(0);
      const [ghHook] = [...forges.github.webHooks.values()].filter((hook) =>
        hook.path.startsWith('/repos/acme/site/'),
      );
      if (ghHook === undefined) throw new Error('no github hook');
      expect(github.stdout).toMatch(
        new RegExp(
          `^connected: github hook ${ghHook.id} -> source github; ping verified in \\d+\\.\\d s\\n$`,
        ),
      );
      expect(ghHook.config).toMatchObject({
        url: t.source('github').url,
        content_type: 'json',
        insecure_ssl: '0',
        secret: t.source('github').secret.split(',').at(-1),
      });

      const gitlab = await connectGitLab();
      expect(gitlab.stderr).toBe('');
      expect(gitlab.code).toBe(0);
      const [glHook] = [...forges.gitlab.webHooks.values()].filter((hook) =>
        hook.path.startsWith('/projects/acme%2Fsite/'),
      );
      if (glHook === undefined) throw new Error('no gitlab hook');
      expect(gitlab.stdout).toMatch(
        new RegExp(
          `^connected: gitlab hook ${glHook.id} -> source gitlab; ping verified in \\d+\\.\\d s\\n$`,
        ),
      );
      expect(glHook).toMatchObject({ url: t.source('gitlab').url, enable_ssl_verification: true });

      const hooks = readIngestConfig({
        ...readStageConfig({ stage: 'local', dir: project, env: {}, offline: true }).settings,
        IS_OFFLINE: 'true',
      }).sources.flatMap((source) => (source.hook === undefined ? [] : [[source.name, source.hook]]));
      expect(Object.fromEntries(hooks)).toEqual({
        github: {
          kind: 'repo',
          api: forges.github.url,
          id: ghHook.id,
          owner: 'acme',
          repo: 'site',
          provider: 'forge',
        },
        gitlab: {
          kind: 'project',
          api: forges.gitlab.api,
          id: glHook.id,
          project: 'acme/site',
          provider: 'forge',
        },
      });

      // Run again: the same hooks, nothing created or updated.
      const before = { github: forges.github.responses.length, gitlab: forges.gitlab.responses.length };
      expect((await connectGitHub()).code).toBe(0);
      expect((await connectGitLab()).code).toBe(0);
      const later = [
        ...forges.github.responses.slice(before.github),
        ...forges.gitlab.responses.slice(before.gitlab),
      ];
      expect(
        later.map((response) => response.operation).filter((op) => /^(create|update)-hook$/.test(op)),
      ).toEqual([]);
      expect(forges.github.responses.flatMap(gitHubResponseErrors)).toEqual([]);
      expect(forges.gitlab.responses.flatMap(gitLabResponseErrors)).toEqual([]);
    }, 90_000);

    it('forgebridge reconcile, configured from the file, reads both hooks', async () => {
      const run = await cli(['reconcile', '--json'], {
        FORGEBRIDGE_WEBHOOK_SOURCES: sources(),
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
          {
            provider: 'forge',
            clientId: DEFAULT_CLIENT.client_id,
            site: t.stack.authorizationServer.issuer,
            scope: 'forge:read',
            resource: FORGE_API_RESOURCE,
          },
        ]),
        FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
        FORGEBRIDGE_DEDUPE_TABLE: t.stack.names.dedupeTable,
        FORGEBRIDGE_TOKEN_TABLE: t.stack.names.tokenTable,
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as {
        sources: number;
        listed: number;
        errors: number;
        failed: number;
        bySource: Record<string, unknown>;
      };
      expect(report).toMatchObject({ sources: 2, errors: 0, failed: 0 });
      expect(Object.keys(report.bySource).sort()).toEqual(['github', 'gitlab']);
      // Each hook's log holds the test deliveries of both runs: two pings, two GitLab tests.
      expect(report.listed).toBeGreaterThanOrEqual(4);
    }, 60_000);

    it('--check exits 0 on the hooks as connect left them, 1 on a hook planted with form content', async () => {
      const clean = await cli(['connect', '--check', '--token-env', 'FORGE_TOKEN', '--dir', project]);
      expect(clean.stderr).toBe('');
      expect(clean.code).toBe(0);
      expect(
        clean.stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.replace(/ hook \d+/, ' hook N')),
      ).toEqual([
        'source github, github hook N on acme/site: ok',
        'source gitlab, gitlab hook N on project acme/site: ok',
      ]);
      const [hook] = [...forges.github.webHooks.values()].filter((each) =>
        each.path.startsWith('/repos/acme/site/'),
      );
      if (hook === undefined) throw new Error('no github hook');
      hook.config.content_type = 'form';
      try {
        const wrong = await cli(['connect', '--check', '--token-env', 'FORGE_TOKEN', '--dir', project]);
        expect(wrong.code).toBe(1);
        expect(wrong.stdout).toContain(
          `source github, github hook ${hook.id} on acme/site: content type "form": the ingest reads JSON only (set "application/json")\n`,
        );
      } finally {
        hook.config.content_type = 'json';
      }
    });
  });
}
