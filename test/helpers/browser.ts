// Debian's chromium, headless, driven by playwright-core.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

/** Launches /usr/bin/chromium headless, without a sandbox, a GPU or any background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
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
}

/**
 * Where a test saves its screenshot `name` (`inspector.png`): under .tmp/ (look at it after a run), or over the
 * docs' copy with `FORGEBRIDGE_SCREENSHOTS=docs`, so that a test run leaves the repository's files as they were.
 */
export function screenshotPath(name: string): string {
  const folder = process.env.FORGEBRIDGE_SCREENSHOTS === 'docs' ? 'docs' : '.tmp';
  const path = fileURLToPath(new URL(`../../${folder}/${name}`, import.meta.url));
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/**
 * How long a page waits for a live row or a count the stack pushes to it. On a loaded 2-core machine a delivery's
 * trip to the page has taken up to about 5 s: this bound proves the page updates without a reload, not how fast the
 * machine is.
 */
export const LIVE_MS = 15_000;
