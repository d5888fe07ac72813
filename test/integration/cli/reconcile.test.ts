// `forgebridge reconcile` as a process: one reconciliation run here, configured like the reconcile function
// from the environment, against DynamoDB Local, the local authorization server (the hook's token) and the
// GitHub deliveries stand-in (every answer validated against GitHub's description); its report printed as one
// line or JSON; a misconfiguration or a stage without AWS credentials as one line on stderr.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../local-stack/authorization-server.js';
import { createTables } from '../../../local-stack/dynamodb.js';
import { type GitHubDeliveries, startGitHubDeliveries } from '../../../local-stack/github-deliveries.js';
import { freePort } from '../../../local-stack/ports.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { cleanCliEnv, expectOneLineError, NO_AWS_CREDENTIALS, runCli } from '../../helpers/cli.js';
import { runMain } from '../../helpers/cli-in-process.js';
import { gitHubResponseErrors } from '../../helpers/github-openapi.js';

const ddb = useDynamoDbLocal();
const HOOK_PATH = '/repos/acme/web/hooks/5';
let authServer: AuthorizationServer;
let forge: GitHubDeliveries;
let env: NodeJS.ProcessEnv;
const received: string[] = [];

beforeAll(async () => {
  authServer = await startAuthorizationServer();
  const jwks = createRemoteJWKSet(new URL(authServer.jwksUri));
  forge = await startGitHubDeliveries({
    accepts: async (token) => {
      try {
        await jwtVerify(token, jwks, { issuer: authServer.issuer, audience: FORGE_API_RESOURCE });
        return true;
      } catch {
        return false;
      }
    },
    // The receiver takes every redelivery.
    send: async ({ headers }) => {
      received.push(headers['x-github-delivery'] as string);
      return 202;
    },
  });
  forge.addHook(HOOK_PATH, 'hook-secret');
  const { dedupe, tokens } = await ddb.tables();
  const deliveries = `deliveries-${dedupe.slice(-8)}`;
  await createTables(ddb.endpoint, { deliveries });
  env = {
    ...cleanCliEnv(),
    FORGEBRIDGE_DYNAMODB_ENDPOINT: ddb.endpoint,
    FORGEBRIDGE_DEDUPE_TABLE: dedupe,
    FORGEBRIDGE_TOKEN_TABLE: tokens,
    FORGEBRIDGE_DELIVERIES_TABLE: deliveries,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
      {
        provider: 'local',
        clientId: DEFAULT_CLIENT.client_id,
        site: authServer.issuer,
        scope: 'forge:read',
        resource: FORGE_API_RESOURCE,
      },
    ]),
    FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
    FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
      {
        name: 'acme',
        forge: 'github',
        hook: { kind: 'repo', owner: 'acme', repo: 'web', id: 5, provider: 'local', api: forge.url },
      },
    ]),
  };
}, 60_000);

afterAll(async () => {
  await forge?.close();
  await authServer?.stop();
});

/** The CLI in this process (its coverage counts), with the same environment as the process runs. */
const cli = (args: string[], environment: NodeJS.ProcessEnv) =>
  runMain(
    args,
    Object.fromEntries(
      Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
  );

describe('forgebridge reconcile', () => {
  it('reports a dry run, then redelivers what never reached us, and a second run nothing', async () => {
    const lost: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      lost.push(
        (await forge.deliver(HOOK_PATH, { event: 'push', payload: { ref: `r${n}` }, statusCode: 0 })).guid,
      );
    }
    await forge.deliver(HOOK_PATH, { event: 'push', payload: { ref: 'ok' } });
    const dry = await runCli(['reconcile', '--dry-run'], env);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toBe(
      'dry run, 1 source: listed 4, failed at the forge 3, already ours 0 (0 newly late), would redeliver 3, would recover 0, skipped 0, gave up 0, errors 0\n',
    );
    expect(forge.redeliveries).toEqual([]);

    const run = await cli(['reconcile', '--source', 'acme', '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      sources: 1,
      listed: 4,
      failed: 3,
      redelivered: 3,
      errors: 0,
    });
    await forge.settled();
    expect([...forge.redeliveries].sort()).toEqual([...lost].sort());
    expect(received.filter((id) => lost.includes(id)).sort()).toEqual([...lost].sort());

    const again = await cli(['reconcile', '--json'], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ listed: 7, failed: 0, redelivered: 0 });
    expect(forge.responses.flatMap(gitHubResponseErrors)).toEqual([]);
  }, 60_000);

  it('exits 1 when the forge api is down, with the report', async () => {
    forge.faults.down = true;
    try {
      const run = await cli(['reconcile'], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^1 source: listed 0, .*errors 1\n$/);
    } finally {
      forge.faults.down = false;
    }
  });

  it('says in one line what is wrong with the configuration, an unknown source, or a stage without credentials', async () => {
    const gitea = JSON.stringify([{ name: 'g', forge: 'gitea', hook: { kind: 'repo' } }]);
    expectOneLineError(
      await cli(['reconcile'], { ...env, FORGEBRIDGE_WEBHOOK_SOURCES: gitea }),
      2,
      `"FORGEBRIDGE_WEBHOOK_SOURCES[0].hook" cannot be reconciled: gitea offers no api to list and redeliver a hook's deliveries (remove "hook")`,
    );
    expectOneLineError(
      await cli(['reconcile', '--source', 'other'], env),
      2,
      'source "other" names no hook to reconcile',
    );
    expectOneLineError(
      await cli(['reconcile', '--source', 'Bad_Name'], env),
      2,
      /"--source" must be 1 to 64 lowercase letters, digits or inner hyphens/,
    );
    expectOneLineError(
      await cli(['reconcile', '--stage', 'prod', '--region', 'eu-west-1'], {
        ...cleanCliEnv(),
        ...NO_AWS_CREDENTIALS,
      }),
      2,
      /AWS credentials not found for stage "prod"/,
    );
  }, 60_000);

  it("without sources of its own, invokes the local stack's function, and says in one line when it cannot be reached", async () => {
    const port = await freePort();
    const unreachable = await cli(['reconcile'], {
      ...cleanCliEnv(),
      FORGEBRIDGE_LAMBDA_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expectOneLineError(
      unreachable,
      3,
      `could not reach http://127.0.0.1:${port}: connection refused (is "npm start" running?)`,
    );
    // Sources of its own in the environment: it runs here, the Lambda endpoint unused.
    const here = await cli(['reconcile', '--json'], {
      ...env,
      FORGEBRIDGE_LAMBDA_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expect(here.code).toBe(0);
    expect(JSON.parse(here.stdout)).toMatchObject({ sources: 1, errors: 0 });
  });
});
