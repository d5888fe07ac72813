/**
 * Where `forgebridge send`, `replay` and `dev` post by default: the local stack `npm start` runs, found through
 * the state file it writes (every webhook source with its forge, URL and secret), else its defaults; or the URL
 * and secret given with "--url" / "--secret" or FORGEBRIDGE_WEBHOOK_URL / _SECRET.
 */
import { DEFAULT_SOURCE, isSourceName, SOURCE_NAME_RULE } from '../aws/core/index.js';
import { type Forge, Forges, forgeSecret, resolvePreset } from '../webhooks/index.js';
import { CliError } from './errors.js';
import { type FoundStackState, type LocalSource, readStackState, stateFile } from './state-file.js';

/** The webhook URL `npm start` prints when its preferred port 3000 is free. */
export const DEFAULT_WEBHOOK_URL = 'http://127.0.0.1:3000/webhooks';

/**
 * The development secret `npm start` uses unless FORGEBRIDGE_WEBHOOK_SECRET is set (local-stack/stack.ts's
 * DEVELOPMENT_WEBHOOK_SECRET; a unit test keeps the two equal without loading the whole stack here).
 */
export const DEVELOPMENT_WEBHOOK_SECRET = 'forgebridge-development-secret';

/** Where to send, with which secret, as which forge. */
export interface Target {
  readonly url: string;
  readonly secret: string;
  /** Whether it is the local stack (no "--url" nor FORGEBRIDGE_WEBHOOK_URL). */
  readonly local: boolean;
  /** The forge: "--forge", else the local source's, else `generic`. */
  readonly forge: Forge;
  /** The local source posted to, or the "--source" appended to the URL. */
  readonly source?: string;
  /** Whether the local source was picked for "--forge" (no "--source" given). */
  readonly pickedByForge?: boolean;
}

/** What the user gave. */
export interface TargetOptions {
  url?: string | undefined;
  secret?: string | undefined;
  /** A webhook source of the ingest: the local stack's source of that name, or `{url}/{source}`. */
  source?: string | undefined;
  forge?: Forge | undefined;
}

/**
 * The target to send to. With "--url" / FORGEBRIDGE_WEBHOOK_URL: that URL (plus `/{source}`, except `default`),
 * signed with "--secret" / FORGEBRIDGE_WEBHOOK_SECRET. Otherwise the local stack: the source named by
 * "--source", else the local source of "--forge", else `default`; signed with "--secret", else that source's own
 * secret (the state file's; without one, the stack's convention over FORGEBRIDGE_WEBHOOK_SECRET or the
 * development secret); as "--forge", else that source's forge.
 *
 * @throws CliError when the URL is not http(s), the source name is invalid or unknown to the local stack, the
 * local stack has no source of the forge, or a secret is missing.
 */
export function resolveTarget(options: TargetOptions, env: NodeJS.ProcessEnv = process.env): Target {
  if (options.source !== undefined && !isSourceName(options.source)) {
    throw new CliError(`"--source" must be ${SOURCE_NAME_RULE}`);
  }
  const given = nonEmpty(options.url) ?? nonEmpty(env.FORGEBRIDGE_WEBHOOK_URL);
  if (given === undefined) return localTarget(options, env);
  checkUrl(given, options.url === undefined ? 'FORGEBRIDGE_WEBHOOK_URL' : '--url');
  const url =
    options.source === undefined || options.source === DEFAULT_SOURCE
      ? given
      : `${given.replace(/\/+$/, '')}/${options.source}`;
  const secret = nonEmpty(options.secret) ?? nonEmpty(env.FORGEBRIDGE_WEBHOOK_SECRET)?.split(',')[0];
  if (secret === undefined || secret.length === 0) {
    throw new CliError('missing secret: pass "--secret" (or set FORGEBRIDGE_WEBHOOK_SECRET) with "--url"');
  }
  return {
    url,
    secret,
    local: false,
    forge: options.forge ?? 'generic',
    ...(options.source === undefined ? {} : { source: options.source }),
  };
}

function localTarget(options: TargetOptions, env: NodeJS.ProcessEnv): Target {
  const sources = localSources(readStackState(stateFile(env)), env);
  let source: LocalSource | undefined;
  if (options.source !== undefined) {
    source = sources.find((candidate) => candidate.name === options.source);
    if (source === undefined) {
      throw new CliError(`the local stack has no source "${options.source}" (${listSources(sources)})`);
    }
  } else if (options.forge !== undefined && !resolvePreset(options.forge).neutral) {
    source = sources.find((candidate) => candidate.forge === options.forge);
    if (source === undefined) {
      throw new CliError(
        `the local stack has no ${options.forge} source: pass "--source <name>" (${listSources(sources)})`,
      );
    }
  } else {
    source = sources.find((candidate) => candidate.name === DEFAULT_SOURCE) ?? sources[0];
    if (source === undefined) throw new CliError('the local stack lists no source: restart "npm start"');
  }
  const secret = nonEmpty(options.secret) ?? source.secret.split(',')[0] ?? '';
  if (secret.length === 0) {
    throw new CliError(`the local source "${source.name}" has no secret: pass "--secret"`);
  }
  return {
    url: source.url,
    secret,
    local: true,
    forge: options.forge ?? source.forge,
    source: source.name,
    ...(options.source === undefined && source.name !== DEFAULT_SOURCE ? { pickedByForge: true } : {}),
  };
}

/**
 * The source a target posts to, for the CLI's first line: `source gitlab`, and for a local source picked by
 * "--forge", `source gitlab (the local stack's source for --forge gitlab)`; empty without a source.
 */
export function sourceLabel(target: Target): string {
  if (target.source === undefined) return '';
  const why = target.pickedByForge ? ` (the local stack's source for --forge ${target.forge})` : '';
  return `source ${target.source}${why}`;
}

/** `its sources: default (generic), github (github), …`. */
function listSources(sources: readonly LocalSource[]): string {
  return `its sources: ${sources.map((source) => `${source.name} (${source.forge})`).join(', ')}`;
}

/** The stack's convention: `{secret}-{forge}`, in the form the forge's preset takes (`forgeSecret`). */
function localSecret(secret: string, forge: Forge): string {
  return forgeSecret(forge, `${secret}-${forge}`);
}

/**
 * The local stack's sources: the state file's list, else the stack's own layout over its webhook URL and
 * secret (else the defaults): `default` (generic) at the URL with the secret, and one source per other forge,
 * named after it, at `{url}/{forge}` with `{secret}-{forge}`.
 */
export function localSources(state: FoundStackState, env: NodeJS.ProcessEnv = process.env): LocalSource[] {
  if (state.sources !== undefined && state.sources.length > 0) return [...state.sources];
  const url = (nonEmpty(state.webhookUrl) ?? DEFAULT_WEBHOOK_URL).replace(/\/+$/, '');
  const secret =
    nonEmpty(env.FORGEBRIDGE_WEBHOOK_SECRET)?.split(',')[0] ??
    nonEmpty(state.secret)?.split(',')[0] ??
    DEVELOPMENT_WEBHOOK_SECRET;
  return Forges.map((forge) =>
    resolvePreset(forge).neutral
      ? { name: DEFAULT_SOURCE, forge, url, secret }
      : { name: forge, forge, url: `${url}/${forge}`, secret: localSecret(secret, forge) },
  );
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

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}
