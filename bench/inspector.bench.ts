// The local stack's inspector page (local-stack/inspector) in Debian's chromium: its weight, gzip of every response
// the page loads (the live stream excluded; target ≤ 150 KB in all), and for each of a few deliveries the time from
// the ingest's 202 to its row in the open page, pushed by the server-sent events (target ≤ 1 s).
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { sampleDelivery, signDelivery } from '../local-stack/sample-deliveries.js';
import { startLocalStack } from '../local-stack/stack.js';

const CHROMIUM = '/usr/bin/chromium';
const DELIVERIES = Number(process.env.BENCH_INSPECTOR_DELIVERIES ?? 8);
const WEIGHT_TARGET_KB = 150;
const LATENCY_TARGET_MS = 1_000;

export default async function inspectorBench(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    console.log(`skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
    return;
  }
  const stack = await startLocalStack({ output: 'file' });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    const loads: Promise<{ url: string; raw: number; gzip: number }>[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/api/events')) return;
      loads.push(
        response.body().then((body) => ({
          url: new URL(response.url()).pathname,
          raw: body.length,
          gzip: gzipSync(body, { level: 9 }).length,
        })),
      );
    });
    await page.goto(stack.inspectorUrl);
    await page.locator('#live.on').waitFor({ timeout: 20_000 });
    await page.waitForLoadState('networkidle');
    const files = await Promise.all(loads);
    const raw = files.reduce((sum, file) => sum + file.raw, 0);
    const gzip = files.reduce((sum, file) => sum + file.gzip, 0);
    console.log('| page weight | raw | gzip |');
    console.log('| --- | ---: | ---: |');
    for (const file of files) console.log(`| ${file.url} | ${file.raw} B | ${file.gzip} B |`);
    console.log(
      `| all (${files.length} responses) | ${(raw / 1024).toFixed(1)} KB | ${(gzip / 1024).toFixed(1)} KB (target ≤ ${WEIGHT_TARGET_KB} KB: ${gzip / 1024 <= WEIGHT_TARGET_KB ? 'met' : 'MISSED'}) |`,
    );

    const { name, payload } = sampleDelivery('issues.opened');
    const latencies: number[] = [];
    for (let index = 0; index < DELIVERIES; index += 1) {
      const delivery = signDelivery(stack.secret, name, payload);
      const response = await fetch(stack.webhookUrl, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      await response.arrayBuffer();
      if (response.status !== 202) throw new Error(`the ingest answered ${response.status}`);
      const accepted = performance.now();
      await page.locator(`tr[data-delivery-id="${delivery.id}"]`).waitFor({ timeout: 10_000 });
      latencies.push(performance.now() - accepted);
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)] as number;
    const max = latencies.at(-1) as number;
    console.log(`\n| 202 to row in the page (${DELIVERIES} deliveries) | median | max |`);
    console.log('| --- | ---: | ---: |');
    console.log(
      `| server-sent events, log polled every 300 ms | ${median.toFixed(0)} ms | ${max.toFixed(0)} ms (target ≤ ${LATENCY_TARGET_MS} ms: ${max <= LATENCY_TARGET_MS ? 'met' : 'MISSED'}) |`,
    );
  } finally {
    await browser.close();
    await stack.stop();
  }
}
