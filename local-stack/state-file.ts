// The state file of a running local stack (`npm start` writes it, `.tmp/local-stack.json` unless
// FORGEBRIDGE_STATE_FILE names another): what the `forgebridge` CLI needs to talk to it (every webhook source
// with its forge, URL and secret; the delivery log's endpoint and table), and the sources as the ready banner
// prints them.
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LocalSource, LocalStack } from './stack.js';

/** The state file's content. */
export interface LocalStackState {
  /** The `default` source's URL (generic preset). */
  webhookUrl: string;
  /** The `default` source's secret(s). */
  secret: string;
  /** Every webhook source: name, forge, URL and the secret(s) it verifies with. */
  sources: LocalSource[];
  /** `lambda`: serverless-offline's Lambda API, where `forgebridge reconcile` invokes the reconcile function. */
  endpoints: { dynamodb: string; lambda?: string };
  names: { deliveriesTable: string; dedupeTable: string };
}

/** The parts of a running stack the state file is made of. */
export interface StateOf {
  readonly webhookUrl: string;
  readonly secret: string;
  readonly sources: readonly LocalSource[];
  readonly endpoints: Pick<LocalStack['endpoints'], 'dynamodb'> &
    Partial<Pick<LocalStack['endpoints'], 'lambda'>>;
  readonly names: Pick<LocalStack['names'], 'deliveriesTable' | 'dedupeTable'>;
}

/** What the state file holds for `stack`. */
export function localStackState(stack: StateOf): LocalStackState {
  return {
    webhookUrl: stack.webhookUrl,
    secret: stack.secret,
    sources: stack.sources.map(({ name, forge, url, secret }) => ({ name, forge, url, secret })),
    endpoints: {
      dynamodb: stack.endpoints.dynamodb,
      ...(stack.endpoints.lambda === undefined ? {} : { lambda: stack.endpoints.lambda }),
    },
    names: { deliveriesTable: stack.names.deliveriesTable, dedupeTable: stack.names.dedupeTable },
  };
}

/**
 * Writes {@link localStackState} of `stack` to `file` (its folder created), readable by its owner only: also
 * when the file was there before with a wider mode (it holds every source's secret).
 */
export function writeStateFile(stack: StateOf, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  // Written beside it with mode 0600 (exactly: the umask may take bits on create), then renamed over it: a
  // plain write would keep an existing file's own mode. (lib/cli/files.ts's writePrivateFile, which the
  // architecture rule keeps out of reach here.)
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(localStackState(stack), null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * The sources as the ready banner lists them, one line each: name, forge, URL and secret, in columns.
 *
 * @example
 * ```text
 *   default    generic    http://127.0.0.1:3000/webhooks          forgebridge-development-secret
 *   gitlab     gitlab     http://127.0.0.1:3000/webhooks/gitlab   forgebridge-development-secret-gitlab
 * ```
 */
export function sourceLines(sources: readonly LocalSource[], indent = '  '): string[] {
  const width = (pick: (source: LocalSource) => string) =>
    Math.max(...sources.map((source) => pick(source).length));
  const name = width((source) => source.name);
  const forge = width((source) => source.forge);
  const url = width((source) => source.url);
  return sources.map(
    (source) =>
      `${indent}${source.name.padEnd(name)}  ${source.forge.padEnd(forge)}  ${source.url.padEnd(url)}  ${source.secret}`,
  );
}
