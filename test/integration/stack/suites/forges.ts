// End to end through the real local stack with one webhook source per forge (issue 10): a delivery from each of
// GitHub, Gitea, Forgejo, GitLab and Bitbucket, signed the way that forge signs and posted to its source
// (`/webhooks/<forge>`), reaches the shared rules — written once, in the catalogue's names — exactly once, with
// `detail.forge` and `detail.source` naming where it came from. Malformed deliveries get only 4xx on every
// source, and an unknown source 404. What the subscribers received is read from their log lines, as in
// the routing suite.
import { createHmac, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeliveryLog } from '../../../../lib/aws/index.js';
import { deliveryHeaders, resolvePreset } from '../../../../lib/webhooks/index.js';
import { localClientConfig } from '../../../../local-stack/dynamodb.js';
import type { LocalSource } from '../../../../local-stack/stack.js';
import { routedPerForge } from '../../../fixtures/forges/deliveries.js';
import { documentedHeaders } from '../../../fixtures/forges/headers.js';
import { digest, type TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function forgesSuite(stack: () => TestStack): void {
  describe('forges: one source per forge', () => {
    let t: TestStack;

    beforeAll(() => {
      t = stack();
    });

    const source = (name: string): LocalSource => t.source(name);

    interface Answer {
      status: number;
      body: unknown;
      text: string;
    }

    async function post(
      url: string,
      headers: Record<string, string>,
      body: string,
      method = 'POST',
    ): Promise<Answer> {
      const response = await fetch(url, { method, headers, ...(method === 'GET' ? {} : { body }) });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: response.status, body: parsed, text };
    }

    /** Every subscriber's `delivery received` line for one delivery id (the recorder excluded), with its fields. */
    function receivedLines(id: string) {
      const prefix = `forgebridge-${t.stack.stage}-`;
      return t.stack
        .functionLogs()
        .filter((record) => record.message === 'delivery received' && record.delivery === id)
        .map((record): Record<string, unknown> & { function: string } => ({
          ...record,
          function: record.function_name.replace(prefix, ''),
        }))
        .filter((record) => record.function !== 'recorder');
    }

    const FORGES = ['github', 'gitea', 'forgejo', 'gitlab', 'bitbucket'] as const;

    describe('local stack: one delivery per forge through its own source', () => {
      it('has the five forge deliveries of each kind in the fixtures', () => {
        const pulls = routedPerForge.filter((delivery) => delivery.name === 'pull_request');
        const pushes = routedPerForge.filter((delivery) => delivery.name === 'push');
        expect(pulls.map((delivery) => delivery.forge).sort()).toEqual([...FORGES].sort());
        expect(pushes.map((delivery) => delivery.forge).sort()).toEqual([...FORGES].sort());
      });

      it("routes each forge's pull request opened and push onto the shared rules, exactly once each", async () => {
        const sent: { id: string; forge: string; name: string; payload: unknown }[] = [];
        for (const fixture of routedPerForge) {
          const target = source(fixture.forge);
          const id = randomUUID();
          const body = JSON.stringify(fixture.payload);
          // Pushes with the headers as each forge's documentation spells them, pull requests with the library's.
          const headers =
            fixture.name === 'push'
              ? documentedHeaders(fixture.forge, target.secret, body, fixture.nativeName, id)
              : deliveryHeaders(target.secret, body, { forge: fixture.forge, name: fixture.nativeName, id });
          const answer = await post(target.url, headers, body);
          expect([fixture.label, answer.status, answer.body]).toEqual([fixture.label, 202, { delivery: id }]);
          sent.push({ id, forge: fixture.forge, name: fixture.name, payload: fixture.payload });
        }
        await t.waitFor(
          () =>
            sent.every(
              (delivery) =>
                // A push: its rule and the catch-all; a pull request: the catch-all and the example ordered
                // subscriber with its twin on the bus, and for GitHub the example commenter, which waits its turn.
                Object.keys(t.receivedBy(delivery.id)).length >=
                  (delivery.name === 'push' ? 2 : delivery.forge === 'github' ? 4 : 3) &&
                t.recorded(delivery.id).length >= 1,
            ),
          { timeoutMs: 60_000 },
        );
        for (const delivery of sent) {
          const label = `${delivery.forge} ${delivery.name}`;
          t.holds(() => {
            if (delivery.name === 'push') {
              // `detail-type: [push]` and the catch-all.
              expect([label, t.receivedBy(delivery.id)]).toEqual([label, { onPush: 1, onEverything: 1 }]);
            } else {
              // The catch-all sees the catalogue's detail-type; the example ordered subscriber (from the stream) and
              // its twin on the bus get every forge's pull request.
              // GitHub's opened pull request is also the example commenter's (GitHub-shaped sources only).
              expect([label, t.receivedBy(delivery.id)]).toEqual([
                label,
                {
                  onEverything: 1,
                  onPullRequestOrdered: 1,
                  onPullRequestOnBus: 1,
                  ...(delivery.forge === 'github' ? { onPullRequestOpened: 1 } : {}),
                },
              ]);
            }
            expect([label, t.recorded(delivery.id).length]).toEqual([label, 1]);
          });
          const lines = receivedLines(delivery.id);
          for (const line of lines) {
            expect({ label, ...line }).toMatchObject({
              label,
              event: delivery.name,
              detailType: delivery.name === 'push' ? 'push' : 'pull_request.opened',
              forge: delivery.forge,
              source: delivery.forge,
              claimCheck: false,
            });
            if (delivery.name === 'push') expect(line.action).toBeUndefined();
            else expect(line.action).toBe('opened');
          }
          const recorded = t.recorded(delivery.id);
          expect(recorded).toHaveLength(1);
          expect(recorded[0]?.sha256).toBe(digest(delivery.payload));
        }
      });

      it('keeps the same delivery id from two sources apart: both published, each once', async () => {
        const id = randomUUID();
        const push = routedPerForge.find(
          (delivery) => delivery.forge === 'gitea' && delivery.name === 'push',
        );
        const other = routedPerForge.find(
          (delivery) => delivery.forge === 'forgejo' && delivery.name === 'push',
        );
        if (push === undefined || other === undefined)
          throw new Error('fixtures without gitea and forgejo pushes');
        for (const fixture of [push, other]) {
          const target = source(fixture.forge);
          const body = JSON.stringify(fixture.payload);
          const headers = deliveryHeaders(target.secret, body, { forge: fixture.forge, name: 'push', id });
          expect((await post(target.url, headers, body)).body).toEqual({ delivery: id });
        }
        // A redelivery to one of them is that source's duplicate.
        const target = source('gitea');
        const body = JSON.stringify(push.payload);
        const again = await post(
          target.url,
          deliveryHeaders(target.secret, body, { forge: 'gitea', name: 'push', id }),
          body,
        );
        expect([again.status, again.body]).toEqual([200, { duplicate: true }]);
        await t.waitFor(() => receivedLines(id).length >= 4);
        t.holds(() =>
          expect(
            receivedLines(id)
              .map((line) => `${line.function}:${line.source}`)
              .sort(),
          ).toEqual(['onEverything:forgejo', 'onEverything:gitea', 'onPush:forgejo', 'onPush:gitea']),
        );
      });
    });

    describe('local stack: malformed deliveries on every source', () => {
      it('answers only 4xx, never publishes, and never echoes a secret', async () => {
        const ids: string[] = [];
        /** The digests of the payloads below: each source's own, marked, so that no accepted delivery has one. */
        const marks = new Set<string>();
        const refused: { case: string; status: number; code: unknown }[] = [];
        for (const target of t.stack.sources) {
          const preset = resolvePreset(target.forge);
          const fixture = routedPerForge.find(
            (delivery) => delivery.forge === target.forge && delivery.name === 'push',
          );
          const payload = {
            ...((fixture?.payload as Record<string, unknown> | undefined) ?? { ref: 'refs/heads/main' }),
            marker: randomUUID(),
          };
          marks.add(digest(payload));
          const nativeName = fixture?.nativeName ?? 'push';
          const body = JSON.stringify(payload);
          const signed = (id: string, text = body, secret = target.secret) =>
            deliveryHeaders(secret, text, { forge: target.forge, name: nativeName, id });
          const without = (headers: Record<string, string>, names: readonly string[]) =>
            Object.fromEntries(
              Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())),
            );
          const cases: [
            string,
            (id: string) => { headers: Record<string, string>; body: string; method?: string },
          ][] = [
            ['no event header', (id) => ({ headers: without(signed(id), preset.eventHeaders), body })],
            ['no delivery header', (id) => ({ headers: without(signed(id), preset.deliveryHeaders), body })],
            [
              'no signature or token',
              (id) => ({
                headers: without(
                  signed(id),
                  preset.signatures.map((s) => s.header),
                ),
                body,
              }),
            ],
            ['wrong secret', (id) => ({ headers: signed(id, body, 'not-the-secret'), body })],
            ['bad json', (id) => ({ headers: signed(id, '{"ref":'), body: '{"ref":' })],
            ['a json array', (id) => ({ headers: signed(id, '[1,2]'), body: '[1,2]' })],
            ['an empty body', (id) => ({ headers: signed(id, ' '), body: '' })],
            ['text/plain', (id) => ({ headers: { ...signed(id), 'content-type': 'text/plain' }, body })],
            [
              'form-encoded',
              (id) => ({
                headers: { ...signed(id), 'content-type': 'application/x-www-form-urlencoded' },
                body,
              }),
            ],
            ['no content type', (id) => ({ headers: without(signed(id), ['content-type']), body })],
            ['a delivery id of 300 characters', () => ({ headers: signed('d'.repeat(300)), body })],
            ['GET', (id) => ({ headers: signed(id), body, method: 'GET' })],
            ['PUT', (id) => ({ headers: signed(id), body, method: 'PUT' })],
            ['DELETE', (id) => ({ headers: signed(id), body, method: 'DELETE' })],
          ];
          if (target.forge !== 'gitlab') {
            // GitLab's token says nothing about the body (docs/forges.md): a changed body still verifies there.
            cases.push([
              'body changed after signing',
              (id) => ({ headers: signed(id), body: body.replace('}', ',"x":1}') }),
            ]);
          }
          if (target.forge !== 'generic') {
            // The headers of the generic preset (another forge's names) on this forge's source.
            cases.push([
              "another forge's headers",
              (id) => ({
                headers: deliveryHeaders(target.secret, body, { forge: 'generic', name: 'push', id }),
                body,
              }),
            ]);
          }
          for (const [label, build] of cases) {
            const id = randomUUID();
            ids.push(id);
            const request = build(id);
            const answer = await post(target.url, request.headers, request.body, request.method);
            const name = `${target.name} ${label}`;
            const code = (answer.body as { error?: { code?: unknown } } | undefined)?.error?.code;
            refused.push({ case: name, status: answer.status, code });
            expect([name, answer.status >= 400 && answer.status < 500]).toEqual([name, true]);
            expect(answer.text).not.toContain(target.secret);
            if (request.method === undefined) expect([name, typeof code]).toEqual([name, 'string']);
          }
        }
        // 8 sources (default and one per preset, standard and svix included) with 14 cases each, plus the two
        // cases every source but gitlab / generic gets.
        expect(refused.length).toBe(8 * 14 + 7 + 7);
        // None of them reached a subscriber, then or later: not by its id, nor (the id of 300 characters, the
        // missing delivery header) by its payload, which no accepted delivery of the stack has.
        t.holds(() => {
          for (const id of ids) expect(t.receivedBy(id), id).toEqual({});
          expect(t.recorded().filter((entry) => marks.has(entry.sha256))).toEqual([]);
        });
      });

      it('answers an unknown source 404 unknown_source, and a deeper path 404', async () => {
        const gitlab = source('gitlab');
        const fixture = routedPerForge.find(
          (delivery) => delivery.forge === 'gitlab' && delivery.name === 'push',
        );
        const body = JSON.stringify(fixture?.payload ?? {});
        const headers = deliveryHeaders(gitlab.secret, body, {
          forge: 'gitlab',
          name: 'Push Hook',
          id: randomUUID(),
        });
        const unknown = await post(`${t.stack.webhookUrl}/gitlab-other`, headers, body);
        expect([unknown.status, unknown.body]).toEqual([
          404,
          { error: { code: 'unknown_source', message: 'unknown webhook source "gitlab-other"' } },
        ]);
        const deeper = await post(`${t.stack.webhookUrl}/gitlab/extra`, headers, body);
        expect(deeper.status).toBe(404);
        // The same delivery on its own source goes through: nothing was kept for it.
        const good = await post(gitlab.url, headers, body);
        expect(good.status).toBe(202);
      });
    });

    describe('local stack: two GitHub Apps on one URL, one event', () => {
      it("publishes both hooks' deliveries of one GUID, answers each redelivery as a duplicate, and logs both", async () => {
        const github = source('github');
        const guid = randomUUID();
        const payload = (installation: number) => ({
          action: 'opened',
          issue: { number: 41, title: 'Two apps, one event' },
          repository: { id: 9, name: 'web', full_name: 'acme/web', owner: { login: 'acme' } },
          sender: { login: 'octocat' },
          installation: { id: installation },
        });
        const send = (hook: string, installation: number) => {
          const body = JSON.stringify(payload(installation));
          return post(
            github.url,
            {
              'content-type': 'application/json',
              'x-github-event': 'issues',
              'x-github-delivery': guid,
              'x-github-hook-id': hook,
              'x-hub-signature-256': `sha256=${createHmac('sha256', github.secret).update(body).digest('hex')}`,
            },
            body,
          );
        };
        const a = await send('1101', 501);
        expect(a.status).toBe(202);
        const b = await send('2202', 502);
        expect(b.status).toBe(202);
        expect(b.body).not.toMatchObject({ duplicate: true });
        const again = await send('1101', 501);
        expect(again).toMatchObject({ status: 200, body: { duplicate: true } });

        // Each App's subscribers hear of the issue: the recorder resolved both payloads, intact.
        await t.waitFor(() => t.recorded(guid).length >= 2 && (t.receivedBy(guid).onIssuesOpened ?? 0) >= 2);
        t.holds(() => {
          expect(
            t
              .recorded(guid)
              .map((record) => record.sha256)
              .sort(),
          ).toEqual([digest(payload(501)), digest(payload(502))].sort());
          expect(t.receivedBy(guid).onIssuesOpened).toBe(2);
        });
        const hooks = receivedLines(guid).map((line) => line.hook);
        expect(hooks).toContain('1101');
        expect(hooks).toContain('2202');

        // The delivery log holds both hooks' records under the one GUID.
        const client = new DynamoDBClient(localClientConfig(t.stack.endpoints.dynamodb));
        try {
          const log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
          const details = await log.get(guid, { source: 'github' });
          expect(details?.hooks?.sort()).toEqual(['1101', '2202']);
          expect(details?.records.map((record) => `${record.hook}:${record.outcome}`).sort()).toEqual([
            '1101:duplicate',
            '1101:published',
            '2202:published',
          ]);
        } finally {
          client.destroy();
        }
      });
    });
  });
}
