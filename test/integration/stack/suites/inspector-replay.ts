// The inspector's "Replay to <subscriber>" against the whole local stack, in Debian's chromium: 12 deliveries over
// issues.opened and push go through the real ingest and bus; onEverything fails the last 4 (the example app's
// failure switch, a test aid of the local stack only) while every other subscriber takes them. With the switch off
// again, the page's selection (since a second taken before the first delivery, so no other suite's deliveries
// count) previews exactly 4, "Replay to onEverything" sends them to it alone through serverless-offline's Lambda
// API with its progress shown to the end, a second preview finds 0, and the delivery log shows onEverything `ok` for
// each. The screenshot goes to .tmp/inspector-replay.png (docs/inspector-replay.png with FORGEBRIDGE_SCREENSHOTS=docs).
import { writeFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryLog } from '../../../../lib/aws/delivery-log/index.js';
import { sampleDelivery } from '../../../../local-stack/sample-deliveries.js';
import { launchChromium, screenshotPath } from '../../../helpers/browser.js';
import { inspectorFetch } from '../../../helpers/inspector.js';
import type { TestStack } from '../../../helpers/stack.js';

const EVENTS = ['issues.opened', 'push'] as const;
const TOTAL = 12;
const FAILING = 4;

/** Runs in the shared local stack (../local-stack.test.ts). */
export function inspectorReplaySuite(stack: () => TestStack): void {
  describe('inspector: replay to a subscriber', () => {
    let t: TestStack;
    let browser: Browser;
    let page: Page;
    let client: DynamoDBClient;

    beforeAll(async () => {
      [t, browser] = await Promise.all([stack(), launchChromium()]);
      // The page's time fields are local time: UTC here, as the test writes them.
      page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
      client = new DynamoDBClient(t.stack.dynamodb.clientConfig);
    });

    afterAll(async () => {
      await browser?.close();
      client?.destroy();
    });

    /** Posts delivery n (issues.opened for even n, push for odd); resolves with its id. */
    const post = async (n: number): Promise<string> => {
      const { name, payload } = sampleDelivery(EVENTS[n % EVENTS.length] as string);
      const posted = await t.post(name, payload);
      expect(posted.status, JSON.stringify(posted.body)).toBe(202);
      return posted.id;
    };
    const others = (n: number) =>
      n % 2 === 0 ? ['onIssuesOpened', 'onIssues', 'onIssuesPrefix'] : ['onPush'];

    it(`${TOTAL} deliveries, onEverything failing ${FAILING}: previewed, replayed to it alone from the page, then 0`, async () => {
      // A whole second the page's field holds exactly, after every other suite's deliveries.
      const since = Math.ceil(Date.now() / 1000) * 1000 + 1000;
      await new Promise((resolve) => setTimeout(resolve, since - Date.now()));
      const okIds: string[] = [];
      for (let n = 0; n < TOTAL - FAILING; n++) okIds.push(await post(n));
      await t.waitFor(() => okIds.every((id) => (t.receivedBy(id).onEverything ?? 0) >= 1), {
        timeoutMs: 60_000,
      });
      const failedIds: string[] = [];
      const preview = async (outcome = 'error') => {
        const response = await inspectorFetch(t.stack.inspectorUrl, '/api/bulk-replay/preview', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            since: new Date(since).toISOString(),
            subscriber: 'onEverything',
            outcome,
          }),
        });
        return (await response.json()) as { count: number };
      };
      writeFileSync(t.stack.exampleFailFile, JSON.stringify({ fail: ['onEverything'] }));
      try {
        for (let n = TOTAL - FAILING; n < TOTAL; n++) failedIds.push(await post(n));
        // The recorder saw each (the bus delivered them, so onEverything was invoked too, and failed).
        await t.waitFor(() => failedIds.every((id) => t.recorded(id).length >= 1), { timeoutMs: 60_000 });
        // Its reports land after its invocations: wait until all 4 are in the log.
        const deadline = Date.now() + 60_000;
        while ((await preview()).count < FAILING && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        expect((await preview()).count).toBe(FAILING);
        // The local bus retries a failed invocation (serverless.yml's serverless-offline-aws-eventbridge settings):
        // the switch stays on until those retries failed too, or one would reach onEverything once it is off.
        await t.waitFor(() => failedIds.every((id) => t.attemptsUsedUp(id, 'onEverything')), {
          timeoutMs: 60_000,
        });
      } finally {
        // The fix is deployed: the switch off, and left off.
        writeFileSync(t.stack.exampleFailFile, JSON.stringify({ fail: [] }));
      }
      for (const id of failedIds) expect(t.receivedBy(id).onEverything ?? 0).toBe(0);
      await t.waitFor(() =>
        failedIds.every((id, index) =>
          others(TOTAL - FAILING + index).every((key) => (t.receivedBy(id)[key] ?? 0) >= 1),
        ),
      );
      const before = new Map(failedIds.map((id) => [id, { ...t.receivedBy(id) }]));
      expect((await preview()).count).toBe(FAILING);
      expect((await preview('any')).count).toBe(TOTAL);

      // The page: the selection, its preview (nothing sent), the button.
      await page.goto(t.stack.inspectorUrl);
      await page.locator('#live.on').waitFor({ timeout: 10_000 });
      await page.locator('#bulk summary').click();
      await page.locator('#bulk-since').fill(new Date(since).toISOString().slice(0, 19));
      const subscriber = `forgebridge-${t.stack.stage}-onEverything`;
      await page.locator(`#bulk-subscriber option[value="${subscriber}"]`).waitFor({ state: 'attached' });
      await page.locator('#bulk-subscriber').selectOption(subscriber);
      await page.locator('#bulk-outcome').selectOption('error');
      expect(await page.locator('#bulk-start').isDisabled()).toBe(true);
      await page.locator('#bulk-preview').click();
      await expect.poll(() => page.locator('#bulk-count').textContent()).toBe(String(FAILING));
      expect(await page.locator('#bulk-what').textContent()).toBe('deliveries onEverything reported error');
      const sampled = await page
        .locator('#bulk-sample tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-delivery-id')));
      expect(sampled.sort()).toEqual([...failedIds].sort());
      for (const id of failedIds) expect(t.receivedBy(id).onEverything ?? 0).toBe(0);
      const start = page.locator('#bulk-start');
      expect(await start.textContent()).toBe('Replay to onEverything');
      expect(await start.isEnabled()).toBe(true);

      // Sent, with its progress to the end.
      await start.click();
      await page.locator('#bulk-progress[data-state="done"]').waitFor({ timeout: 60_000 });
      expect(await page.locator('#bulk-progress').textContent()).toMatch(
        new RegExp(`^replayed: ${FAILING} of ${FAILING} to onEverything in \\d+\\.\\d s$`),
      );
      expect(await page.locator('#bulk-bar').evaluate((bar) => [bar.value, bar.max])).toEqual([
        FAILING,
        FAILING,
      ]);
      expect(await page.locator('#bulk-failures li').count()).toBe(0);
      expect(await start.isDisabled()).toBe(true);
      expect(await start.textContent()).toBe('Replay to onEverything');
      await page.screenshot({ path: screenshotPath('inspector-replay.png') });

      // Preview again: nothing left.
      await page.locator('#bulk-preview').click();
      await expect.poll(() => page.locator('#bulk-count').textContent()).toBe('0');
      expect(await page.locator('#bulk-stale').isHidden()).toBe(true);
      expect(await start.isDisabled()).toBe(true);

      // onEverything once each, `ok` in the log; every other subscriber as before: not run again.
      await t.waitFor(() => failedIds.every((id) => (t.receivedBy(id).onEverything ?? 0) >= 1));
      const log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
      for (const id of failedIds) {
        const details = await log.get(id);
        expect(details?.subscribers[subscriber]?.outcome, id).toBe('ok');
        expect({ ...t.receivedBy(id), onEverything: undefined }).toEqual({
          ...before.get(id),
          onEverything: undefined,
        });
      }
      t.holds(() => {
        for (const id of failedIds) expect(t.receivedBy(id).onEverything, id).toBe(1);
      });
      expect(await page.content()).not.toContain(t.stack.secret);
    }, 240_000);
  });
}
