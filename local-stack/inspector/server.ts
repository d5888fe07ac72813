// The local stack's inspector: lib/inspector's server with what only the local stack can do: replay a logged
// delivery to its own ingest (the stored body and headers, the signature headers signed again with the source's
// secret) and send signed catalogue samples (./sample-deliveries). Secrets never leave this process. A replay is of
// one hook's record (the server hands in the hook the page picked when an id came from two). With serverless-offline's
// Lambda API, the page also replays a selection to one subscriber alone (lib/inspector/bulk-replay.ts): each
// delivery's EventBridge event handed to its function `forgebridge-<stage>-<key>`.
import { randomUUID } from 'node:crypto';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { DEFAULT_SOURCE } from '../../lib/aws/core/index.js';
import type { DeliveryDetails, DeliveryLog } from '../../lib/aws/internal.js';
import {
  type ActionAnswer,
  HttpError,
  type Inspector,
  type InspectorActions,
  type InspectorRule,
  serveInspector,
} from '../../lib/inspector/index.js';
import type { Forge } from '../../lib/webhooks/index.js';
import { replayHeaders } from '../../lib/webhooks/index.js';
import { exampleDeliveries, forgeSample, signForgeDelivery } from '../sample-deliveries.js';

export type { Inspector } from '../../lib/inspector/index.js';

/** A webhook source the inspector posts replays and samples to (the local stack's `sources`). */
export interface InspectorSource {
  readonly name: string;
  readonly forge: Forge;
  readonly url: string;
  /** Signs samples and replays; never leaves this process. */
  readonly secret: string;
}

/** Options of {@link startInspector}. */
export interface InspectorOptions {
  log: DeliveryLog;
  sources: readonly InspectorSource[];
  /** The subscriber rules records are matched against. Default: serverless.yml's. */
  rules?: readonly InspectorRule[] | undefined;
  /** Port on 127.0.0.1. Default a free one. */
  port?: number | undefined;
  /** How often the log is read for the live view while a page is connected, in ms. Default 300. */
  pollMs?: number | undefined;
  /**
   * serverless-offline's Lambda API (`http://127.0.0.1:<port>`), or a client of it: with it, the page replays to
   * one subscriber. Without it, the page shows the CLI command instead.
   */
  lambda?: string | Pick<LambdaClient, 'send'> | undefined;
  /** The stage whose functions are invoked (`forgebridge-<stage>-<key>`). Default `local`. */
  stage?: string | undefined;
  /** The EventBridge source of the events handed to a subscriber. Default FORGEBRIDGE_SOURCE, else `forge.webhooks`. */
  eventSource?: string | undefined;
}

/** Posts a delivery to the ingest and hands back its answer. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array | string,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
  } catch {
    throw new HttpError(502, 'ingest_unreachable', `the ingest at ${url} did not answer`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** Every catalogue name with a sample payload (`issues.opened`, `push`), sorted. */
function catalogueNames(): string[] {
  const names = exampleDeliveries().map((example) =>
    example.action === undefined ? example.name : `${example.name}.${example.action}`,
  );
  return [...new Set(names)].sort();
}

/** Replays to the local ingest and signed samples, with the local stack's sources. */
export function localActions(list: readonly InspectorSource[]): InspectorActions {
  const sources = new Map(list.map((source) => [source.name, source]));
  let catalogue: string[] | undefined;
  const sourceOf = (name: unknown): InspectorSource => {
    const source = sources.get(typeof name === 'string' && name !== '' ? name : DEFAULT_SOURCE);
    if (source === undefined) throw new HttpError(400, 'unknown_source', `unknown "source" ${String(name)}`);
    return source;
  };
  return {
    label: 'local stack',
    canReplay: (details: DeliveryDetails) => details.records.some((record) => record.body !== undefined),
    async replay(details, freshId): Promise<ActionAnswer> {
      const source = sourceOf(details.source);
      const original = details.records.find((record) => record.body !== undefined);
      if (original?.body === undefined) {
        throw new HttpError(409, 'payload_not_stored', 'the log holds no payload of this delivery');
      }
      // The log keeps the exact body and headers but never a signature value: the masked signature headers are
      // signed again with the source's secret, as the forge would for a redelivery; the signature covers the
      // body only, so a fresh delivery id needs nothing else changed.
      const id = freshId ? randomUUID() : details.deliveryId;
      const headers = replayHeaders(original.headers ?? {}, original.body, {
        secret: source.secret,
        forge: source.forge,
        id,
        signMissing: false,
      });
      const answer = await post(source.url, headers, original.body);
      // The stored headers carry the hook's id (X-GitHub-Hook-ID): the ingest dedupes it as that hook's delivery.
      const hook = original.hook === undefined ? {} : { hook: original.hook };
      return { deliveryId: id, source: source.name, ...hook, ...answer };
    },
    samples: {
      list() {
        catalogue ??= catalogueNames();
        return { events: catalogue, sources: [...sources.keys()] };
      },
      async send(body) {
        const source = sourceOf(body.source);
        if (typeof body.event !== 'string' || body.event === '') {
          throw new HttpError(400, 'invalid_request', '"event" is required');
        }
        let found: ReturnType<typeof forgeSample>;
        try {
          found = forgeSample(source.forge, body.event);
        } catch {
          throw new HttpError(
            400,
            'unknown_event',
            `no ${source.forge} sample for "${body.event.slice(0, 100)}"`,
          );
        }
        const delivery = signForgeDelivery(source.secret, source.forge, found.nativeName, found.payload);
        const answer = await post(source.url, delivery.headers, delivery.body);
        return { deliveryId: delivery.id, source: source.name, ...answer };
      },
    },
  };
}

/**
 * Starts the local stack's inspector on 127.0.0.1 and resolves once it listens.
 *
 * @example
 * ```ts
 * const inspector = await startInspector({ log, sources: stack.sources });
 * console.log(inspector.url);
 * ```
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  // An endpoint gets a client of its own, destroyed with the inspector; a client handed in stays the caller's.
  const owned = typeof options.lambda === 'string' ? localLambdaClient(options.lambda) : undefined;
  const lambda = owned ?? (typeof options.lambda === 'string' ? undefined : options.lambda);
  const actions: InspectorActions = {
    ...localActions(options.sources),
    ...(lambda === undefined
      ? {}
      : {
          bulkReplay: {
            lambda,
            stage: options.stage ?? 'local',
            eventSource: options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || 'forge.webhooks'),
          },
        }),
  };
  let inspector: Inspector;
  try {
    inspector = await serveInspector({
      log: options.log,
      actions,
      rules: options.rules,
      port: options.port,
      pollMs: options.pollMs,
    });
  } catch (error) {
    owned?.destroy();
    throw error;
  }
  return {
    url: inspector.url,
    async stop() {
      try {
        await inspector.stop();
      } finally {
        owned?.destroy();
      }
    },
  };
}

/** A client of serverless-offline's Lambda API: one attempt, and room for a function's whole timeout. */
function localLambdaClient(endpoint: string): LambdaClient {
  return new LambdaClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 130_000 },
  });
}
