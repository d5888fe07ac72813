// Debian's chromium, headless, driven by playwright-core.
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
