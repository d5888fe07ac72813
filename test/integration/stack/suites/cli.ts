// The `forgebridge` CLI run as a process (the pinned node and bin/forgebridge.js) against the whole local stack,
// the way a new user meets it: the inspector page open in Debian's chromium (playwright-core), then
// `forgebridge send issues.opened`; the row appears in the page without a reload with its rules, and
// `deliveries`, `show` and `replay` read the stack's delivery log (DynamoDB Local): the delivery newest first,
// verified and published, its subscribers, masked headers, the duplicate answer of a replay and a fresh id's
// 202, a wrong secret's 401 with its verdict and diagnosis, and an unknown id as one line with exit 2.
// The stack runs on free ports, so the CLI is pointed at it with FORGEBRIDGE_WEBHOOK_URL / _SECRET /
// FORGEBRIDGE_DYNAMODB_ENDPOINT / FORGEBRIDGE_DELIVERIES_TABLE (and, in one test, the equivalent options)
// instead of the `.tmp/local-stack.json` that `npm start` writes, which a running `npm start` may own.
import { createHmac, randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_MS, launchChromium } from '../../../helpers/browser.js';
import { cleanCliEnv, type Run, runCli } from '../../../helpers/cli.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function cliSuite(stack: () => TestStack): void {
  describe('cli: the CLI against the stack', () => {
    let t: TestStack;

    /** A record as `deliveries --json` and `show --json` print it. */
    interface JsonRecord {
      deliveryId?: string;
      receivedAt: number;
      event?: string;
      action?: string;
      verdict: string;
      outcome: string;
      httpStatus: number;
      reason?: string;
      diagnosis?: { code: string; message: string }[];
      eventId?: string;
      headers?: Record<string, string>;
      body?: string;
      subscribers?: Record<string, { outcome: string; durationMs: number }>;
    }

    interface JsonDetails {
      deliveryId: string;
      source: string;
      subscribers: Record<string, { outcome: string; durationMs: number }>;
      records: JsonRecord[];
    }

    interface JsonSend {
      request: { delivery: string; url: string; replayOf?: string };
      response: { status: number; ok: boolean; body: unknown };
    }

    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      [t, browser] = await Promise.all([stack(), launchChromium()]);
      page = await browser.newPage();
    }, 150_000);

    afterAll(async () => {
      await browser?.close();
    });

    /**
     * The CLI's environment: no colours, none of the machine's forgebridge or AWS settings; with `stack` the
     * started stack's webhook URL, secret, DynamoDB endpoint and deliveries table.
     */
    function cliEnv(stack: boolean): NodeJS.ProcessEnv {
      const env = cleanCliEnv();
      if (!stack) return env;
      return {
        ...env,
        FORGEBRIDGE_WEBHOOK_URL: t.stack.webhookUrl,
        FORGEBRIDGE_WEBHOOK_SECRET: t.stack.secret,
        FORGEBRIDGE_DYNAMODB_ENDPOINT: t.stack.endpoints.dynamodb,
        FORGEBRIDGE_DELIVERIES_TABLE: t.stack.names.deliveriesTable,
      };
    }

    /** Runs `forgebridge <args>`; `stack: false` leaves the stack's variables out (options must name it). */
    function run(args: string[], options: { stack?: boolean } = {}): Promise<Run> {
      return runCli(args, cliEnv(options.stack ?? true));
    }

    /** Runs a `--json` command that must succeed and parses its output. */
    async function runJson<T>(args: string[], options: { stack?: boolean } = {}): Promise<T> {
      const result = await run([...args, '--json'], options);
      expect(result.stderr, result.stderr).toBe('');
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout) as T;
    }

    /** Polls `deliveries --json` until `check` holds for one of its answers; returns that answer. */
    async function listed(
      check: (records: JsonRecord[]) => boolean,
      timeoutMs = 20_000,
    ): Promise<JsonRecord[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const records = await runJson<JsonRecord[]>(['deliveries']);
        if (check(records)) return records;
        if (Date.now() > deadline) {
          throw new Error(`deliveries not as expected: ${JSON.stringify(records)}\n${t.stack.logTail(30)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }

    /** The stack's subscriber names in the log (`forgebridge-<stage>-<key>`). */
    const subscriber = (key: string) => `forgebridge-${t.stack.stage}-${key}`;

    const row = (deliveryId: string, outcome?: string) =>
      page.locator(
        `tr[data-delivery-id="${deliveryId}"]${outcome === undefined ? '' : `[data-outcome="${outcome}"]`}`,
      );

    /** The id of the first delivery, sent by the first test and read by the others. */
    let sentId: string;

    describe('forgebridge CLI against the local stack', () => {
      it('send issues.opened: 202, the row live in the open inspector with its rules, listed newest first with its subscribers', async () => {
        await page.goto(t.stack.inspectorUrl);
        await page.locator('#live.on').waitFor({ timeout: 10_000 });
        // A reload would drop this: the row must arrive through the live stream.
        await page.evaluate(() => {
          (globalThis as unknown as { marker: number }).marker = 7;
        });

        const started = Date.now();
        const sent = await run(['send', 'issues.opened']);
        const exited = Date.now();
        expect(sent.stderr).toBe('');
        expect(sent.code).toBe(0);
        const [request, status] = sent.stdout.split('\n');
        expect(request).toMatch(
          new RegExp(
            `^POST ${t.stack.webhookUrl.replaceAll('.', '\\.')} {2}issues\\.opened {2}generic, delivery `,
          ),
        );
        expect(status).toMatch(/^202 Accepted {2}\d+ ms$/);
        const id = /delivery ([0-9a-f-]{36}),/.exec(request ?? '')?.[1];
        expect(id).toBeDefined();
        sentId = id as string;

        await row(sentId).waitFor({ timeout: LIVE_MS });
        const pageMs = Date.now() - started;
        // The CLI exits once it has the 202: the row follows within the inspector test's bound.
        expect(Date.now() - exited).toBeLessThan(2_000);
        expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(7);
        await expect.poll(() => row(sentId).locator('td.status').textContent()).toBe('202 published');
        expect(await row(sentId).locator('td.verdict').textContent()).toBe('verified');
        expect(await row(sentId).locator('td.rules .chip').allTextContents()).toEqual([
          'onIssuesOpened',
          'onIssues',
          'onIssuesPrefix',
          'onEverything',
        ]);

        const first = await runJson<JsonRecord[]>(['deliveries']);
        expect(first[0]).toMatchObject({
          deliveryId: sentId,
          event: 'issues',
          action: 'opened',
          verdict: 'verified',
          httpStatus: 202,
          outcome: 'published',
        });
        expect(first[0]?.eventId).toEqual(expect.any(String));

        // The reporting subscribers add their outcome once they ran.
        const expected = [subscriber('onIssuesOpened'), subscriber('recorder')];
        const withSubscribers = await listed((records) =>
          expected.every(
            (name) => records.find((r) => r.deliveryId === sentId)?.subscribers?.[name] !== undefined,
          ),
        );
        const subscribersMs = Date.now() - started;
        const record = withSubscribers.find((r) => r.deliveryId === sentId);
        for (const name of expected) {
          expect(record?.subscribers?.[name], name).toMatchObject({
            outcome: 'ok',
            durationMs: expect.any(Number),
          });
        }
        await row(sentId, 'published')
          .locator('td.subscribers .chip', { hasText: 'onIssuesOpened' })
          .waitFor({ timeout: 10_000 });
        expect(
          await row(sentId, 'published')
            .locator('td.subscribers .chip', { hasText: 'onIssuesOpened' })
            .textContent(),
        ).toBe('onIssuesOpened ✓');
        // Measured, not a target of this file (the bench and the inspector suite hold those).
        console.info(
          `cli send (process ${exited - started} ms) -> inspector row ${pageMs} ms, -> subscribers in "deliveries" ${subscribersMs} ms`,
        );

        // The human table: the delivery's line with its status, verdict, outcome and subscribers.
        const table = await run(['deliveries', '--event', 'issues.opened']);
        expect(table.code).toBe(0);
        const lines = table.stdout.trimEnd().split('\n');
        expect(lines[0]).toMatch(/^TIME +EVENT +DELIVERY +SOURCE +HTTP +VERDICT +OUTCOME +SUBSCRIBERS$/);
        expect(lines[1]).toMatch(
          new RegExp(`issues\\.opened +${sentId} +default +202 +verified +published +\\d+ ok$`),
        );
        expect(lines.at(-1)).toBe('1 delivery, newest first');
      });

      it('show <id>: the record with masked headers, the payload, the subscribers, and no secret', async () => {
        const details = await runJson<JsonDetails>(['show', sentId]);
        expect(details.deliveryId).toBe(sentId);
        expect(details.source).toBe('default');
        expect(details.records).toHaveLength(1);
        const [record] = details.records;
        expect(record).toMatchObject({
          deliveryId: sentId,
          event: 'issues',
          action: 'opened',
          verdict: 'verified',
          httpStatus: 202,
          outcome: 'published',
        });
        expect(record?.headers).toMatchObject({
          'x-forge-event': 'issues',
          'x-forge-delivery': sentId,
          'x-hub-signature-256': 'sha256=[masked]',
        });
        const body = record?.body as string;
        expect(JSON.parse(body)).toMatchObject({ action: 'opened' });
        expect(details.subscribers[subscriber('onIssuesOpened')]).toMatchObject({ outcome: 'ok' });

        const signature = createHmac('sha256', t.stack.secret).update(body).digest('hex');
        const text = await run(['show', sentId, '--body']);
        expect(text.code).toBe(0);
        expect(text.stdout).toMatch(new RegExp(`^delivery {2}${sentId}\nevent {5}issues\\.opened\n`));
        expect(text.stdout).toContain('x-hub-signature-256: sha256=[masked]');
        expect(text.stdout).toContain(`${subscriber('onIssuesOpened')}  ok`);
        expect(text.stdout).toContain('"action": "opened"');
        for (const output of [JSON.stringify(details), text.stdout]) {
          expect(output).not.toContain(t.stack.secret);
          expect(output).not.toContain(signature);
          expect(output).not.toContain(signature.slice(0, 16));
        }
      });

      it('replay <id> answers 200 duplicate; --fresh-id is a new delivery answered 202', async () => {
        const replay = await run(['replay', sentId]);
        expect(replay.stderr).toBe('');
        expect(replay.code).toBe(0);
        const [request, status, ...answer] = replay.stdout.trimEnd().split('\n');
        expect(request).toContain(`issues.opened  generic, source default, delivery ${sentId}, `);
        expect(status).toMatch(/^200 OK {2}\d+ ms$/);
        expect(JSON.parse(answer.join('\n'))).toMatchObject({ duplicate: true });
        await row(sentId, 'duplicate').waitFor({ timeout: LIVE_MS });
        expect(await row(sentId, 'duplicate').locator('td.status').textContent()).toBe('200 duplicate');

        const details = await runJson<JsonDetails>(['show', sentId]);
        expect(details.records.map((record) => [record.outcome, record.httpStatus])).toEqual([
          ['duplicate', 200],
          ['published', 202],
        ]);
        expect(details.records[0]?.eventId).toBeUndefined();

        const fresh = await runJson<JsonSend>(['replay', sentId, '--fresh-id']);
        expect(fresh.request.replayOf).toBe(sentId);
        expect(fresh.request.delivery).not.toBe(sentId);
        expect(fresh.response).toMatchObject({ status: 202, ok: true });
        const records = await listed((list) => list[0]?.deliveryId === fresh.request.delivery);
        expect(records[0]).toMatchObject({ verdict: 'verified', outcome: 'published', httpStatus: 202 });
        // Newest first: the fresh delivery, then the duplicate, then the first request.
        const order = records.map((record) => [record.deliveryId, record.outcome]);
        expect(order.slice(0, 3)).toEqual([
          [fresh.request.delivery, 'published'],
          [sentId, 'duplicate'],
          [sentId, 'published'],
        ]);
        const times = records.map((record) => record.receivedAt);
        expect([...times].sort((a, b) => b - a)).toEqual(times);
      });

      it('send with a wrong secret: exit 1 and a 401; show gives bad_signature with its diagnosis (options, not variables)', async () => {
        const wrong = `wrong-${randomUUID()}`;
        const sent = await run(
          ['send', 'issues.opened', '--url', t.stack.webhookUrl, '--secret', wrong, '--json'],
          {
            stack: false,
          },
        );
        expect(sent.stderr).toBe('');
        expect(sent.code).toBe(1);
        const answer = JSON.parse(sent.stdout) as JsonSend;
        expect(answer.response).toMatchObject({ status: 401, ok: false });
        expect(sent.stdout).not.toContain(wrong);
        const id = answer.request.delivery;

        const logOptions = [
          '--endpoint',
          t.stack.endpoints.dynamodb,
          '--table',
          t.stack.names.deliveriesTable,
        ];
        const details = await runJson<JsonDetails>(['show', id, ...logOptions], { stack: false });
        const [record] = details.records;
        expect(record).toMatchObject({
          deliveryId: id,
          verdict: 'bad_signature',
          httpStatus: 401,
          outcome: 'rejected',
        });
        expect(record?.diagnosis?.map((reason) => reason.code)).toContain('wrong_secret');
        expect(record?.headers?.['x-hub-signature-256']).toBe('sha256=[masked]');
        expect(details.subscribers).toEqual({});

        const text = await run(['show', id, ...logOptions], { stack: false });
        expect(text.code).toBe(0);
        expect(text.stdout).toMatch(/ 401 {2}bad_signature {2}rejected /);
        expect(text.stdout).toContain(`    reason ${record?.reason}`);
        expect(text.stdout).toContain('subscribers (0)');
        for (const output of [sent.stdout, JSON.stringify(details), text.stdout]) {
          expect(output).not.toContain(wrong);
          expect(output).not.toContain(t.stack.secret);
        }
        const rejected = await run(['deliveries', '--verdict', 'bad_signature', '--json']);
        expect((JSON.parse(rejected.stdout) as JsonRecord[]).map((entry) => entry.deliveryId)).toEqual([id]);
      });

      it('show and replay of an unknown id: one line and exit 2', async () => {
        for (const command of ['show', 'replay']) {
          const result = await run([command, 'unknown-id']);
          expect(result.code).toBe(2);
          expect(result.stdout).toBe('');
          const lines = result.stderr.split('\n').filter((line) => line.length > 0);
          expect(lines).toEqual(['forgebridge: no delivery "unknown-id" in the log of the local stack']);
        }
      });
    });
  });
}
