// createReconcileHandler(): its configuration comes from the environment and every mistake in it is a TypeError
// at construction (the Lambda's cold start), never a failed run.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { createReconcileHandler } from '../../../../lib/aws/index.js';
import { readReconcileConfig } from '../../../../lib/aws/reconcile/config.js';

const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const base = {
  FORGEBRIDGE_BUS_NAME: 'bus',
  FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
  FORGEBRIDGE_TOKEN_TABLE: 'tokens',
  FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
    { provider: 'github', clientId: 'c', site: 'https://auth.example' },
    { kind: 'github_app', provider: 'app', appId: '12', installationId: 3 },
  ]),
};
const repoHook = { kind: 'repo', owner: 'acme', repo: 'web', id: 1, provider: 'github' };
const env = (sources: unknown[], extra: Record<string, string> = {}) => ({
  ...base,
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(sources),
  ...extra,
});
const build = (variables: Record<string, string | undefined>) =>
  createReconcileHandler({
    env: variables,
    logger,
    clients: { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) },
  });

describe('readReconcileConfig()', () => {
  it('keeps the sources that name a hook, with their token entry and the forge window', () => {
    const config = readReconcileConfig(
      env(
        [
          { name: 'plain', forge: 'github' },
          { name: 'acme', forge: 'github', hook: repoHook },
          { name: 'app', forge: 'github', hook: { kind: 'app', provider: 'app' } },
        ],
        { FORGEBRIDGE_RECONCILE_GITHUB_WINDOW_HOURS: '24', FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES: '7' },
      ),
    );
    expect(
      config.sources.map((source) => [source.name, source.token.provider, source.windowSeconds]),
    ).toEqual([
      ['acme', 'github', 86_400],
      ['app', 'app', 86_400],
    ]);
    expect(config).toMatchObject({
      maxRedeliveries: 7,
      maxPages: 10,
      backoffSeconds: 600,
      apiTimeoutMs: 10_000,
    });
  });

  it("defaults the windows to the forges' own: GitHub 3 days, GitLab 7", () => {
    const config = readReconcileConfig(
      env([
        { name: 'a', forge: 'github', hook: repoHook },
        { name: 'b', forge: 'gitlab', hook: { kind: 'project', project: 'x/y', id: 2, provider: 'github' } },
      ]),
    );
    expect(config.sources.map((source) => source.windowSeconds)).toEqual([259_200, 604_800]);
  });
});

describe('createReconcileHandler()', () => {
  it('refuses at construction a hook whose provider has no token entry', () => {
    expect(() =>
      build(env([{ name: 'acme', forge: 'github', hook: { ...repoHook, provider: 'nobody' } }])),
    ).toThrow(
      new TypeError('source "acme": "hook.provider" "nobody" names no entry of "FORGEBRIDGE_OAUTH_CLIENTS"'),
    );
  });

  it('refuses an app hook whose provider is not a GitHub App, and a hook on a forge without a delivery log', () => {
    expect(() =>
      build(env([{ name: 'acme', forge: 'github', hook: { kind: 'app', provider: 'github' } }])),
    ).toThrow(
      'source "acme": an "app" hook\'s "provider" must name a "github_app" entry of "FORGEBRIDGE_OAUTH_CLIENTS"',
    );
    expect(() => build(env([{ name: 'gitea', forge: 'gitea', hook: repoHook }]))).toThrow(
      'gitea offers no api to list and redeliver a hook\'s deliveries (remove "hook")',
    );
  });

  it('refuses a missing table and a bad number naming the variable', () => {
    expect(() => build({ ...env([{ name: 'plain' }]), FORGEBRIDGE_TOKEN_TABLE: undefined })).toThrow(
      '"FORGEBRIDGE_TOKEN_TABLE"',
    );
    expect(() => build(env([{ name: 'plain' }], { FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES: '-1' }))).toThrow(
      'environment variable "FORGEBRIDGE_RECONCILE_MAX_REDELIVERIES" must be a positive number',
    );
  });

  it('runs over no source when none names a hook, and refuses an unknown source name', async () => {
    const handler = build(env([{ name: 'plain', forge: 'github' }]));
    expect(await handler({})).toMatchObject({
      sources: 0,
      listed: 0,
      redelivered: 0,
      errors: 0,
      dryRun: false,
    });
    await expect(handler({ sourceName: 'acme' })).rejects.toThrow('source "acme" names no hook to reconcile');
  });
});
