// What the state file of a running local stack holds (`npm start` writes it, `.tmp/local-stack.json` unless
// FORGEBRIDGE_STATE_FILE names another), and the sources as the ready banner prints them. Its schema, reader and
// writer are the CLI's (lib/cli/state-file.ts), which reads it to talk to the stack.
import { type LocalStackState, writeStackState } from '../lib/cli/state-file.js';
import type { LocalSource, LocalStack } from './stack.js';

/** The parts of a running stack the state file is made of. */
export interface StateOf {
  readonly webhookUrl: string;
  readonly secret: string;
  readonly sources: readonly LocalSource[];
  readonly endpoints: Pick<LocalStack['endpoints'], 'dynamodb'> &
    Partial<Pick<LocalStack['endpoints'], 'lambda' | 'sqs' | 'eventBridge' | 'kinesis'>>;
  readonly names: Pick<LocalStack['names'], 'deliveriesTable' | 'dedupeTable'> &
    Partial<Pick<LocalStack['names'], 'tokenTable' | 'subscriberDlq' | 'bus' | 'orderedFailureQueue'>>;
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
      ...(stack.endpoints.sqs === undefined ? {} : { sqs: stack.endpoints.sqs }),
      ...(stack.endpoints.eventBridge === undefined ? {} : { eventBridge: stack.endpoints.eventBridge }),
      ...(stack.endpoints.kinesis === undefined ? {} : { kinesis: stack.endpoints.kinesis }),
    },
    names: {
      deliveriesTable: stack.names.deliveriesTable,
      dedupeTable: stack.names.dedupeTable,
      ...(stack.names.tokenTable === undefined ? {} : { tokenTable: stack.names.tokenTable }),
      ...(stack.names.subscriberDlq === undefined ? {} : { subscriberDlq: stack.names.subscriberDlq }),
      ...(stack.names.bus === undefined ? {} : { bus: stack.names.bus }),
      ...(stack.names.orderedFailureQueue === undefined
        ? {}
        : { orderedFailureQueue: stack.names.orderedFailureQueue }),
    },
  };
}

/** Writes {@link localStackState} of `stack` to `file`, readable by its owner only (it holds every source's secret). */
export function writeStateFile(stack: StateOf, file: string): void {
  writeStackState(localStackState(stack), file);
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
