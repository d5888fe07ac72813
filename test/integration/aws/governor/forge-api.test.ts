// createForgeApi's calls through the governor, against the local forge API stand-in enforcing GitHub's secondary
// limits (scaled down), oidc-provider for the tokens and DynamoDB Local for the token store and the governor: four
// ForgeApi instances, as four Lambda instances, comment at once; with the governor none gets a limit answer, without
// it they do. The stand-in's answers are held to GitHub's REST description.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDeliveryReport } from '../../../../lib/aws/delivery-log/index.js';
import { parseBudgets } from '../../../../lib/aws/governor/limits.js';
import {
  createForgeApi,
  type ForgeApi,
  ForgeRateLimitError,
  type SubscriberReport,
} from '../../../../lib/aws/index.js';
import { runInvocation } from '../../../../lib/aws/invocation.js';
import type { OAuthClientConfig } from '../../../../lib/aws/tokens/config.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../../../local-stack/authorization-server.js';
import { type ForgeApi as StandIn, startForgeApi } from '../../../../local-stack/forge-api.js';
import type { StandInResponse } from '../../../../local-stack/github-deliveries.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';
import { gitHubResponseErrors } from '../../../helpers/github-openapi.js';

const ddb = useDynamoDbLocal();
let server: AuthorizationServer;
let standIn: StandIn;
let tokenTable: string;
let provider = 0;

beforeAll(async () => {
  server = await startAuthorizationServer();
  standIn = await startForgeApi({
    issuer: server.issuer,
    jwksUri: server.jwksUri,
    audience: FORGE_API_RESOURCE,
    limits: { concurrency: 3, writes: 10, windowSeconds: 1 },
    delayMs: 40,
  });
  tokenTable = (await ddb.tables()).tokens;
});
afterAll(async () => {
  await standIn?.stop();
  await server?.stop();
});

/** `count` ForgeApi instances of one new client (its own token, its own budget), each with its own DynamoDB client. */
function instances(count: number, governor: 'on' | 'off', budgets = 'writes:8/1s') {
  provider += 1;
  const client: OAuthClientConfig = {
    provider: `local-${provider}`,
    clientId: DEFAULT_CLIENT.client_id,
    site: server.issuer,
    scope: 'forge:read',
    resource: FORGE_API_RESOURCE,
  };
  const env = {
    IS_OFFLINE: 'true',
    FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret,
    FORGEBRIDGE_TOKEN_TABLE: tokenTable,
    FORGEBRIDGE_FORGE_API_URL: standIn.url,
    FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([client]),
  };
  return Array.from({ length: count }, () =>
    createForgeApi({
      env,
      clients: { dynamodb: ddb.client() },
      governor: {
        enabled: governor === 'on',
        preset: 'github',
        // A notch under the stand-in's 10 a second: the governor paces the calls as they leave, the stand-in counts them
        // as they arrive, and on a loaded 2-core machine two calls 140 ms apart can arrive 10 ms apart.
        limits: { concurrency: 3, budgets: parseBudgets(budgets) },
        maxWaitMs: 20_000,
        leaseSeconds: 10,
      },
    }),
  );
}

const comment = (api: ForgeApi, number: number) =>
  api.post(`/repos/octo/hello/issues/${number}/comments`, {
    headers: { 'content-type': 'application/json' },
    body: { body: `seen ${number}` },
  });

describe('createForgeApi through the governor, against the rate-limited stand-in', {
  timeout: 60_000,
}, () => {
  it('18 comments from 4 instances: all made, no limit answer, never more in flight than allowed', async () => {
    const apis = instances(4, 'on');
    // Tokens first: the calls below measure the forge API alone.
    await Promise.all(apis.map((api) => api.token()));
    standIn.resetLimitStats();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 18 }, (_, index) => comment(apis[index % 4] as ForgeApi, index + 1)),
    );
    const elapsed = Date.now() - started;
    expect(answers.map((answer) => answer.status)).toEqual(Array(18).fill(201));
    const stats = standIn.limitStats();
    expect(stats).toMatchObject({ concurrencyAnswers: 0, writeAnswers: 0, writesDone: 18 });
    expect(stats.maxConcurrent).toBeLessThanOrEqual(3);
    // 8 a second, paced one every 1000 / 7 ms: 17 intervals at least, and not far above.
    expect(elapsed).toBeGreaterThanOrEqual((17 * 1000) / 7 - 50);
    expect(elapsed).toBeLessThan(((17 * 1000) / 7) * 1.6);
    // Each answer conforms to GitHub's description of "create an issue comment".
    const answer = answers[0];
    const recorded = {
      operation: 'create-comment',
      method: 'POST',
      path: '/repos/octo/hello/issues/1/comments',
      status: answer?.status,
      body: answer?.parsed,
    } as unknown as StandInResponse;
    expect(gitHubResponseErrors(recorded)).toEqual([]);
  });

  it("without the governor the same burst gets the stand-in's limit answers, GitHub-shaped, with retry-after", async () => {
    const apis = instances(4, 'off');
    await Promise.all(apis.map((api) => api.token()));
    standIn.resetLimitStats();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 18 }, (_, index) => comment(apis[index % 4] as ForgeApi, index + 1)),
    );
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    const stats = standIn.limitStats();
    expect(stats.concurrencyAnswers + stats.writeAnswers).toBe(refused.length);
    expect(refused.length).toBeGreaterThan(0);
    const limitAnswer = (refused[0] as PromiseRejectedResult).reason as {
      response: { status: number; headers: Headers; parsed: unknown };
    };
    expect(limitAnswer.response.status).toBe(403);
    expect(limitAnswer.response.headers.get('retry-after')).toMatch(/^\d+$/);
    const recorded = {
      operation: 'error',
      method: 'POST',
      path: '/repos/octo/hello/issues/1/comments',
      status: 403,
      body: limitAnswer.response.parsed,
    } as unknown as StandInResponse;
    expect(gitHubResponseErrors(recorded)).toEqual([]);
  });

  it('a call in a Lambda invocation waits no longer than the invocation has, then fails with a typed error', async () => {
    const [api] = instances(1, 'on', 'writes:2/2s') as [ForgeApi];
    await api.token();
    // The budget's first write goes; the next can only go 2 s later, past this invocation's end (1.5 s, less the
    // second kept for the answer), though well within the governor's longest wait (20 s).
    await comment(api, 1);
    const context = { getRemainingTimeInMillis: () => 1_500 };
    const started = Date.now();
    const error = await runInvocation(context, () => comment(api, 2)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect((error as ForgeRateLimitError).limit).toBe('writes:2/2s');
    expect(Date.now() - started).toBeLessThan(1_000);
    // Outside an invocation the same call waits its turn.
    expect((await comment(api, 3)).status).toBe(201);
    expect(String((error as Error).message)).not.toContain((await api.token()).token);
  });

  it("puts the waits of a subscriber's forge calls into its delivery-log report", async () => {
    const [api] = instances(1, 'on', 'writes:2/1s') as [ForgeApi];
    await api.token();
    const reports: SubscriberReport[] = [];
    const handler = withDeliveryReport(
      async (_event: unknown, _context: unknown) => {
        await comment(api, 1);
        await comment(api, 2);
      },
      {
        name: 'onPullRequestOpened',
        deliveryLog: {
          recordSubscriber: async (_id: string, report: SubscriberReport) => void reports.push(report),
        },
      },
    );
    await handler({ detail: { delivery: 'd-wait' } }, { getRemainingTimeInMillis: () => 10_000 });
    expect(reports).toHaveLength(1);
    expect(reports[0]?.outcome).toBe('ok');
    expect(reports[0]?.forgeWaitMs).toBeGreaterThanOrEqual(700);
    expect(reports[0]?.forgeWaitMs).toBeLessThanOrEqual(1_100);
  });

  it('refuses a comment without a body as GitHub does (422)', async () => {
    const [api] = instances(1, 'on') as [ForgeApi];
    const error = (await api
      .post('/repos/octo/hello/issues/3/comments', {
        headers: { 'content-type': 'application/json' },
        body: {},
      })
      .catch((e: unknown) => e)) as { response: { status: number; parsed: unknown } };
    expect(error.response.status).toBe(422);
    const recorded = {
      operation: 'invalid',
      method: 'POST',
      path: '/repos/octo/hello/issues/3/comments',
      status: 422,
      body: error.response.parsed,
    } as unknown as StandInResponse;
    expect(gitHubResponseErrors(recorded)).toEqual([]);
  });
});
