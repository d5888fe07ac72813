// Every forge from the CLI, as a new user meets it: the local stack writes its state file (every source with its
// forge, URL and own secret) and `forgebridge send` — run in this process, pointed at that file and nothing else —
// posts for each forge a pull request opened and a push, once with `--forge` alone (the local source of that
// forge, said on the first line) and once with `--source`, in the forge's own names and shapes: each is answered
// 202, routed by the ingest to its catalogue name (the recorder subscriber sees that `detail-type` on the bus),
// and the inspector's rows show the forge, the source and the catalogue event. `replay` re-sends one of each
// forge through its source; a wrong `--secret` is still a 401 with its diagnosis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Forge, Forges } from '../../../../lib/webhooks/index.js';
import type { LocalSource } from '../../../../local-stack/stack.js';
import { writeStateFile } from '../../../../local-stack/state-file.js';
import type { Run } from '../../../helpers/cli.js';
import { runMain } from '../../../helpers/cli-in-process.js';
import { inspectorFetch } from '../../../helpers/inspector.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function cliForgesSuite(stack: () => TestStack): void {
  describe('cli-forges: forgebridge send to every forge', () => {
    let t: TestStack;

    interface JsonSend {
      request: { url: string; delivery: string; forge: string; source?: string; nativeEvent: string };
      response: { status: number; ok: boolean; body: unknown };
    }

    /** A row of the inspector's list (`GET /api/deliveries`). */
    interface Row {
      deliveryId: string;
      source?: string;
      forge?: string;
      event?: string;
      action?: string;
      httpStatus: number;
      verdict: string;
    }

    const EVENTS = ['pull_request.opened', 'push'] as const;

    let dir: string;
    let env: Record<string, string>;
    /** Every delivery sent, with what it must be published as and where it must come in. */
    const sent: { id: string; event: string; forge: Forge; source: string }[] = [];

    beforeAll(async () => {
      t = stack();
      dir = mkdtempSync(join(tmpdir(), 'forgebridge-cli-forges-'));
      const file = join(dir, 'local-stack.json');
      // What `npm start` writes, in a file of this test's own (a running `npm start` may own the repository's).
      writeStateFile(t.stack, file);
      env = { FORGEBRIDGE_STATE_FILE: file };
    }, 180_000);

    afterAll(async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    // In this process (`main(argv)`, its output captured): about 30 commands, which would each start a Node process
    // beside the stack. The cli suite runs the built CLI as a process against the same stack.
    const run = (args: string[]): Promise<Run> => runMain(args, env);

    /** The local stack's source of `forge`. */
    function sourceOf(forge: Forge): LocalSource {
      const source = t.stack.sources.find((candidate) => candidate.forge === forge);
      if (source === undefined) throw new Error(`the local stack has no ${forge} source`);
      return source;
    }

    describe('forgebridge send against the local stack, for every forge', () => {
      it.each(Forges)(
        '%s: a pull request opened and a push, with --forge alone and with --source: 202 each',
        async (forge) => {
          const source = sourceOf(forge);
          for (const event of EVENTS) {
            // --forge alone: the first line names the source it picked.
            const picked = await run(['send', event, '--forge', forge]);
            expect(picked.stderr).toBe('');
            expect(picked.code).toBe(0);
            const [first, second] = picked.stdout.split('\n');
            const why = source.name === 'default' ? '' : ` (the local stack's source for --forge ${forge})`;
            expect(first).toMatch(
              new RegExp(
                `^POST ${source.url}  ${event.replace('.', '\\.')}  ${forge}, source ${source.name}${why.replace(/[()]/g, '\\$&')}, delivery [0-9a-f-]{36}, `,
              ),
            );
            expect(second).toMatch(/^202 Accepted/);
            sent.push({
              id: /delivery ([0-9a-f-]{36})/.exec(first ?? '')?.[1] as string,
              event,
              forge,
              source: source.name,
            });

            // --source: the source's forge and its own secret, without --forge.
            const named = await run(['send', event, '--source', source.name, '--json']);
            expect(named.stderr).toBe('');
            expect(named.code).toBe(0);
            const answer = JSON.parse(named.stdout) as JsonSend;
            expect(answer.request).toMatchObject({ url: source.url, forge, source: source.name });
            expect(answer.response).toMatchObject({ status: 202, ok: true });
            sent.push({ id: answer.request.delivery, event, forge, source: source.name });
          }
        },
      );

      it('each is published once under its catalogue name, and the inspector shows its forge, source and event', async () => {
        expect(sent).toHaveLength(Forges.length * EVENTS.length * 2);
        await t.waitFor(() => sent.every(({ id }) => t.recorded(id).length > 0), { timeoutMs: 60_000 });
        t.holds(() => {
          for (const { id, event } of sent) {
            expect(
              t.recorded(id).map((entry) => entry.detailType),
              id,
            ).toEqual([event]);
          }
        });
        const response = await inspectorFetch(t.stack.inspectorUrl, 'api/deliveries?limit=100');
        expect(response.status).toBe(200);
        const rows = ((await response.json()) as { records: Row[] }).records;
        for (const { id, event, forge, source } of sent) {
          const [name, action] = event.split('.');
          expect(rows.find((row) => row.deliveryId === id)).toMatchObject({
            source,
            forge,
            event: name,
            ...(action === undefined ? {} : { action }),
            httpStatus: 202,
            verdict: 'verified',
          });
        }
      });

      it("replay re-sends a delivery of each forge through its source, signed with the source's secret", async () => {
        const replayed: { id: string; event: string }[] = [];
        for (const forge of Forges) {
          const original = sent.find(
            (entry) => entry.forge === forge && entry.event === 'pull_request.opened',
          );
          if (original === undefined) throw new Error(`nothing sent for ${forge}`);
          const result = await run([
            'replay',
            original.id,
            '--source',
            original.source,
            '--fresh-id',
            '--json',
          ]);
          expect(result.stderr).toBe('');
          expect(result.code).toBe(0);
          const answer = JSON.parse(result.stdout) as JsonSend & { request: { replayOf: string } };
          expect(answer.request).toMatchObject({ url: sourceOf(forge).url, forge, replayOf: original.id });
          expect(answer.response.status).toBe(202);
          replayed.push({ id: answer.request.delivery, event: original.event });
        }
        await t.waitFor(() => replayed.every(({ id }) => t.recorded(id).length > 0), { timeoutMs: 60_000 });
        t.holds(() => {
          for (const { id, event } of replayed) {
            expect(t.recorded(id).map((entry) => entry.detailType)).toEqual([event]);
          }
        });
      });

      it('a wrong --secret is still a 401, with its diagnosis in the log', async () => {
        const wrong = 'not-the-gitlab-source-secret';
        const result = await run([
          'send',
          'pull_request.opened',
          '--forge',
          'gitlab',
          '--secret',
          wrong,
          '--json',
        ]);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(1);
        const answer = JSON.parse(result.stdout) as JsonSend;
        expect(answer.request.url).toBe(sourceOf('gitlab').url);
        expect(answer.response).toMatchObject({
          status: 401,
          ok: false,
          body: { error: { code: 'invalid_signature' } },
        });
        expect(result.stdout).not.toContain(wrong);
        const shown = await run(['show', answer.request.delivery, '--source', 'gitlab', '--json']);
        expect(shown.code).toBe(0);
        const [record] = (
          JSON.parse(shown.stdout) as { records: (Row & { diagnosis?: { code: string }[] })[] }
        ).records;
        expect(record).toMatchObject({ verdict: 'bad_signature', httpStatus: 401, forge: 'gitlab' });
        expect(record?.diagnosis?.map((reason) => reason.code)).toContain('wrong_token');
        expect(t.recorded(answer.request.delivery)).toEqual([]);
      });
    });
  });
}
