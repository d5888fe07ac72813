/**
 * Where `forgebridge send` posts by default: the local stack `npm start` runs, found the way `npm run send`
 * finds it (FORGEBRIDGE_WEBHOOK_URL / _SECRET, then the state file `npm start` writes, then its defaults).
 */
import { readFileSync } from 'node:fs';
import { CliError } from './errors.js';

/** The webhook URL `npm start` prints when its preferred port 3000 is free. */
export const DEFAULT_WEBHOOK_URL = 'http://127.0.0.1:3000/webhooks';

/**
 * The development secret `npm start` uses unless FORGEBRIDGE_WEBHOOK_SECRET is set (local-stack/stack.ts's
 * DEVELOPMENT_WEBHOOK_SECRET; a unit test keeps the two equal without loading the whole stack here).
 */
export const DEVELOPMENT_WEBHOOK_SECRET = 'forgebridge-development-secret';

/** The file `npm start` writes with the running stack's webhook URL and secret. */
export const STATE_FILE = new URL('../../.tmp/local-stack.json', import.meta.url);

/** Where to send and with which secret. */
export interface Target {
  readonly url: string;
  readonly secret: string;
  /** Whether the URL is the local stack's (not given with "--url" or FORGEBRIDGE_WEBHOOK_URL). */
  readonly local: boolean;
}

/** What the user gave. */
export interface TargetOptions {
  url?: string | undefined;
  secret?: string | undefined;
  /** A webhook source of the ingest: posts to `/webhooks/{source}` of the local stack. */
  source?: string | undefined;
}

const SOURCE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/**
 * The URL and secret to send with: "--url" / "--secret", else FORGEBRIDGE_WEBHOOK_URL / _SECRET, else the
 * running local stack's, else its defaults. The development secret is used only with the local stack's URL:
 * with another URL a secret must be given.
 *
 * @throws CliError when the URL is not http(s), the source name is invalid, or a secret is missing.
 */
export function resolveTarget(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Target {
  const given = nonEmpty(options.url) ?? nonEmpty(env.FORGEBRIDGE_WEBHOOK_URL);
  const state = given === undefined ? readState() : {};
  let url = given ?? nonEmpty(state.webhookUrl) ?? DEFAULT_WEBHOOK_URL;
  checkUrl(url, options.url === undefined ? 'FORGEBRIDGE_WEBHOOK_URL' : '--url');
  if (options.source !== undefined) {
    if (!SOURCE_NAME.test(options.source)) {
      throw new CliError(
        '"--source" must be lowercase letters, digits and inner hyphens (at most 64 characters)',
      );
    }
    if (options.source !== 'default') url = `${url.replace(/\/+$/, '')}/${options.source}`;
  }
  const secret =
    nonEmpty(options.secret) ??
    nonEmpty(env.FORGEBRIDGE_WEBHOOK_SECRET)?.split(',')[0] ??
    (given === undefined ? (nonEmpty(state.secret)?.split(',')[0] ?? DEVELOPMENT_WEBHOOK_SECRET) : undefined);
  if (secret === undefined || secret.length === 0) {
    throw new CliError('missing secret: pass "--secret" (or set FORGEBRIDGE_WEBHOOK_SECRET) with "--url"');
  }
  return { url, secret, local: given === undefined };
}

/** Checks that `url` is an http(s) URL. */
export function checkUrl(url: string, option: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`"${option}" must be an http or https URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`"${option}" must be an http or https URL`);
  }
}

function readState(): { webhookUrl?: string; secret?: string } {
  try {
    const state = JSON.parse(readFileSync(STATE_FILE, 'utf8')) as unknown;
    return state !== null && typeof state === 'object'
      ? (state as { webhookUrl?: string; secret?: string })
      : {};
  } catch {
    // No local stack running (or a half-written file): the defaults apply.
    return {};
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}
