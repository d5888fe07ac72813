// End to end through the local stack with its forge stand-ins (GitHub's hook-delivery API and GitLab's
// webhook-event API, local-stack/forge-stand-ins.ts): each forge delivers into the stack's real ingest with a
// wrong secret (every delivery answered 401, nothing published), the secret is fixed, and `forgebridge
// reconcile` (the CLI as a process, pointed at the stack by the state file `npm start` writes) runs the stack's
// own reconcile function through serverless-offline's Lambda API: it asks each stand-in to redeliver, the
// redeliveries come through the ingest verified, each is published once, and the inspector's API and
// `forgebridge deliveries` show the rows `redelivered by reconciler`. Every answer of the stand-ins is validated
// against the forge's published description.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ForgeStandIns } from '../../../../local-stack/forge-stand-ins.js';
import { STAND_IN_HOOKS } from '../../../../local-stack/forge-stand-ins.js';
import { writeStateFile } from '../../../../local-stack/state-file.js';
import { cleanCliEnv, runCli } from '../../../helpers/cli.js';
import { gitHubResponseErrors } from '../../../helpers/github-openapi.js';
import { gitLabResponseErrors } from '../../../helpers/gitlab-events-schema.js';
import { inspectorFetch } from '../../../helpers/inspector.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts), which has the forge stand-ins. */
export function reconcileSuite(stack: () => TestStack): void {
  describe('reconcile: the forge stand-ins and forgebridge reconcile', () => {
    let t: TestStack;
    let forges: ForgeStandIns;
    let dir: string;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      t = stack();
      forges = t.stack.forgeStandIns as ForgeStandIns;
      dir = mkdtempSync(join(tmpdir(), 'forgebridge-reconcile-stack-'));
      const file = join(dir, 'local-stack.json');
      // What `npm start` writes, in a file of this test's own (a running `npm start` may own the repository's).
      writeStateFile(t.stack, file);
      env = { ...cleanCliEnv(), FORGEBRIDGE_STATE_FILE: file };
    }, 150_000);

    afterAll(async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    interface Row {
      deliveryId: string;
      source: string;
      outcome: string;
      reason?: string;
      verdict: string;
      httpStatus: number;
    }

    async function inspectorRows(query: string): Promise<Row[]> {
      const response = await inspectorFetch(t.stack.inspectorUrl, `api/deliveries?${query}`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { records: Row[] }).records;
    }

    describe('forgebridge reconcile through the local stack', () => {
      it('recovers what a wrong secret refused at the door: redelivered once each, shown "redelivered by reconciler"', async () => {
        const github = forges.github.hooks.get(STAND_IN_HOOKS.github.path);
        const gitlab = forges.gitlab.hooks.get(STAND_IN_HOOKS.gitlab.path);
        if (github === undefined || gitlab === undefined) throw new Error('the stand-ins have no hooks');
        const secrets = { github: github.secret, gitlab: gitlab.secret };
        github.secret = 'a-rotated-secret';
        gitlab.secret = 'a-rotated-secret';
        const lost: { id: string; source: string }[] = [];
        for (let n = 0; n < 2; n += 1) {
          const attempt = await forges.github.deliver(STAND_IN_HOOKS.github.path, {
            event: 'issues',
            payload: { action: 'opened', issue: { number: n }, repository: { id: 9, full_name: 'acme/web' } },
          });
          expect(attempt.status_code).toBe(401);
          lost.push({ id: attempt.guid, source: 'github' });
        }
        for (let n = 0; n < 3; n += 1) {
          const event = await forges.gitlab.deliver(STAND_IN_HOOKS.gitlab.path, {
            event: 'Issue Hook',
            payload: {
              object_kind: 'issue',
              object_attributes: { iid: n, action: 'open' },
              project: { id: 7 },
            },
          });
          expect(event.response_status).toBe('401');
          lost.push({ id: event.request_headers['Idempotency-Key'] as string, source: 'gitlab' });
        }
        github.secret = secrets.github;
        gitlab.secret = secrets.gitlab;
        // One that got through, on each forge: never redelivered.
        const fine = await forges.gitlab.deliver(STAND_IN_HOOKS.gitlab.path, {
          event: 'Issue Hook',
          payload: {
            object_kind: 'issue',
            object_attributes: { iid: 9, action: 'open' },
            project: { id: 7 },
          },
        });
        expect(fine.response_status).toBe('202');
        const ids = lost.map(({ id }) => id);
        expect(ids.flatMap((id) => t.recorded(id))).toEqual([]);

        const run = await runCli(['reconcile', '--json'], env);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(run.stdout)).toMatchObject({
          sources: 2,
          listed: 6,
          failed: 5,
          alreadyOurs: 0,
          redelivered: 5,
          errors: 0,
          bySource: {
            github: { failedAtForge: 2, redelivered: 2 },
            gitlab: { failedAtForge: 3, redelivered: 3 },
          },
        });
        await forges.github.settled();
        expect([...forges.github.redeliveries, ...forges.gitlab.resends].sort()).toEqual([...ids].sort());

        // Each comes back through the ingest, verified, and is published once.
        await t.waitFor(() => ids.every((id) => t.recorded(id).length > 0), { timeoutMs: 20_000 });
        t.holds(() => {
          for (const id of ids) expect(t.recorded(id), id).toHaveLength(1);
        });
        const redelivered = await inspectorRows('status=redelivered&limit=100');
        expect(
          redelivered.map((row) => [row.source, row.deliveryId, row.reason, row.verdict]).sort(),
        ).toEqual(
          lost.map(({ id, source }) => [source, id, 'redelivered by reconciler', 'forge_api']).sort(),
        );
        const published = await inspectorRows('status=published&limit=100');
        for (const { id, source } of lost) {
          expect(published.find((row) => row.deliveryId === id)).toMatchObject({
            source,
            verdict: 'verified',
            httpStatus: 202,
          });
        }
        const listed = await runCli(['deliveries', '--status', 'redelivered', '--json'], env);
        expect(listed.code).toBe(0);
        expect(
          (JSON.parse(listed.stdout) as { deliveryId: string; reason: string }[])
            .map((record) => [record.deliveryId, record.reason])
            .sort(),
        ).toEqual(ids.map((id) => [id, 'redelivered by reconciler']).sort());

        // The forges now list a later successful attempt of each: the next run asks for nothing.
        const again = await runCli(['reconcile', '--json'], env);
        expect(JSON.parse(again.stdout)).toMatchObject({ listed: 11, failed: 0, redelivered: 0, errors: 0 });
        expect(forges.github.responses.flatMap(gitHubResponseErrors)).toEqual([]);
        expect(forges.gitlab.responses.flatMap(gitLabResponseErrors)).toEqual([]);
      });
    });
  });
}
