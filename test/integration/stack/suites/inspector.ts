// The inspector in a real browser: Debian's chromium driven by playwright-core against the whole local stack. A
// signed delivery posted to the ingest appears in the open page without a reload, with its rules; its detail shows
// the headers with the signature masked and the payload; Replay answers 200 duplicate and the duplicate's row
// appears; a bad signature shows its diagnosis; Send sample posts a catalogue event. The page never holds the
// secret or a signature value. The screenshot of the finished page goes to .tmp/inspector.png (docs/inspector.png, which the README shows,
// with FORGEBRIDGE_SCREENSHOTS=docs).
import { createHmac } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleDelivery } from '../../../../local-stack/sample-deliveries.js';
import { LIVE_MS, launchChromium, screenshotPath } from '../../../helpers/browser.js';
import type { TestStack } from '../../../helpers/stack.js';

/** Runs in the shared local stack (../local-stack.test.ts). */
export function inspectorSuite(stack: () => TestStack): void {
  describe('inspector: the inspector page', () => {
    let t: TestStack;

    const SCREENSHOT = screenshotPath('inspector.png');

    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      [t, browser] = await Promise.all([stack(), launchChromium()]);
      page = await browser.newPage({ viewport: { width: 1400, height: 820 } });
    });

    afterAll(async () => {
      await browser?.close();
    });

    const row = (deliveryId: string, outcome?: string) =>
      page.locator(
        `tr[data-delivery-id="${deliveryId}"]${outcome === undefined ? '' : `[data-outcome="${outcome}"]`}`,
      );

    describe('inspector page', () => {
      it('shows a delivery live, opens it, replays it and shows the duplicate', async () => {
        const url = t.stack.inspectorUrl;
        expect(new URL(url).hostname).toBe('127.0.0.1');
        const requests: string[] = [];
        page.on('request', (request) => requests.push(request.url()));
        expect(new URL(url).searchParams.get('token')).toMatch(/^[\w-]{43}$/);
        await page.goto(url);
        // The printed URL's token is traded for a cookie: the page is at the origin's root, without it.
        expect(page.url()).toBe(new URL('/', url).href);
        await page.locator('#live.on').waitFor({ timeout: 10_000 });
        // A reload would drop this: the row must arrive through the live stream.
        await page.evaluate(() => {
          (globalThis as unknown as { marker: number }).marker = 42;
        });

        const { payload } = sampleDelivery('issues.opened');
        const posted = await t.post('issues', payload);
        expect(posted.status).toBe(202);
        const accepted = Date.now();
        await row(posted.id).waitFor({ timeout: LIVE_MS });
        const latencyMs = Date.now() - accepted;
        expect(latencyMs).toBeLessThan(2_000);
        expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);

        const cells = row(posted.id);
        await expect.poll(() => cells.locator('td.status').textContent()).toBe('202 published');
        expect(await cells.locator('td.event').textContent()).toBe('issues.opened');
        expect(await cells.locator('td.verdict').textContent()).toBe('verified');
        expect(await cells.locator('td.rules .chip').allTextContents()).toEqual([
          'onIssuesOpened',
          'onIssues',
          'onIssuesPrefix',
          'onEverything',
        ]);

        await cells.click();
        await page.locator('#replay').waitFor();
        const headers = Object.fromEntries(
          await page
            .locator('table.headers tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent]),
            ),
        );
        expect(headers['x-hub-signature-256']).toBe('sha256=[masked]');
        expect(headers['x-forge-delivery']).toBe(posted.id);
        expect(await page.locator('.json summary').first().textContent()).toMatch(/^\{\d+\}$/);
        expect(await page.locator('.json .key').allTextContents()).toContain('"action"');

        await page.locator('#replay').click();
        await expect
          .poll(() => page.locator('#replay-result').textContent(), { timeout: 10_000 })
          .toBe('200 duplicate');
        await row(posted.id, 'duplicate').waitFor({ timeout: LIVE_MS });
        expect(await row(posted.id, 'duplicate').locator('td.status').textContent()).toBe('200 duplicate');
        expect(await row(posted.id).count()).toBe(2);

        // A bad signature: its row, and the diagnosis in its detail.
        const forged = await t.post('issues', payload, { secret: 'not-the-secret' });
        expect(forged.status).toBe(401);
        await row(forged.id).waitFor({ timeout: LIVE_MS });
        expect(await row(forged.id).locator('td.verdict').textContent()).toBe('bad_signature');
        await row(forged.id).click();
        await page.locator('#diagnosis').waitFor();
        expect((await page.locator('#diagnosis').textContent())?.length).toBeGreaterThan(10);

        // Send sample: a push from the catalogue, one more published push row than before (other suites of the
        // shared stack may have sent pushes of their own).
        const pushes = page.locator('tr[data-outcome="published"] td.event', { hasText: /^push$/ });
        const pushesBefore = await pushes.count();
        await page.locator('#sample-event').selectOption('push');
        await page.locator('#sample button').click();
        await expect
          .poll(() => page.locator('#sample-result').textContent(), { timeout: 10_000 })
          .toBe('202 accepted');
        await expect.poll(() => pushes.count(), { timeout: LIVE_MS }).toBe(pushesBefore + 1);

        // The subscribers that report (withDeliveryReport) show on the delivery's row once they ran.
        const reached = row(posted.id, 'published').locator('td.subscribers .chip', {
          hasText: 'onIssuesOpened',
        });
        await reached.waitFor({ timeout: 20_000 });
        expect(await reached.textContent()).toBe('onIssuesOpened ✓');

        // Back to the replayed delivery for the picture.
        await row(posted.id, 'published').click();
        await page.locator('#replay').waitFor();
        await page.screenshot({ path: SCREENSHOT });

        const html = await page.content();
        expect(html).not.toContain(t.stack.secret);
        expect(html).not.toContain(
          createHmac('sha256', t.stack.secret).update(JSON.stringify(payload)).digest('hex'),
        );
        expect(
          requests.every(
            (request) => request.startsWith(new URL('/', url).href) || request.startsWith('data:'),
          ),
        ).toBe(true);
      });
    });
  });
}
