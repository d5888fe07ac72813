/**
 * Several webhook sources in one function: {@link forgeWebhookSources} picks a request's source from its path
 * and runs that source's {@link forgeWebhook}.
 */
import type { MiddlewareObj } from '@middy/core';
import type { DeliveryOptions } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import { IngestError } from '../errors.js';
import { DEFAULT_SOURCE, isSourceName, SOURCE_NAME_RULE } from '../rules.js';
import type { ApiGatewayEvent } from './api-gateway.js';
import { type ForgeWebhookEvent, type ForgeWebhookOptions, forgeWebhook } from './middleware.js';

/** One source of {@link forgeWebhookSources}: its name and its {@link forgeWebhook} options, secret included. */
export type ForgeWebhookSource = ForgeWebhookOptions & {
  /** The path segment of `/webhooks/{source}`; `default` is the source of `/webhooks`. */
  name: string;
};

/**
 * Options of {@link forgeWebhookSources}: the sources, each with a unique name, and the options every source takes
 * unless it sets its own (`allowSha1`, `maxBodyBytes`).
 */
export type ForgeWebhookSourcesOptions = Pick<DeliveryOptions, 'allowSha1' | 'maxBodyBytes'> & {
  sources: readonly ForgeWebhookSource[];
};

// A Function URL has no route: its path is read the way the HTTP API route reads it.
const SOURCE_PATH = /^\/webhooks\/([^/]+)\/?$/;

/**
 * Middy middleware serving several webhook sources from one function: it picks the source from the route's
 * `{source}` path parameter (`/webhooks/{source}`; a Function URL's path is read the same way; `/webhooks` is
 * `default`), answers an unknown one 404 `unknown_source` before any secret is read, and then runs that
 * source's {@link forgeWebhook}. `event.webhook.source` names the source.
 *
 * @throws TypeError on construction for an invalid, repeated or misconfigured source.
 */
export function forgeWebhookSources(
  options: ForgeWebhookSourcesOptions,
): MiddlewareObj<ForgeWebhookEvent<unknown>> {
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  if (!Array.isArray(options.sources) || options.sources.length === 0) {
    throw new TypeError('"sources" must be a non-empty array');
  }
  const { sources, ...shared } = options;
  const bySource = new Map<string, MiddlewareObj<ForgeWebhookEvent<unknown>>>();
  for (const [index, source] of sources.entries()) {
    if (!isSourceName(source?.name)) {
      throw new TypeError(`"sources[${index}].name" must be ${SOURCE_NAME_RULE}`);
    }
    if (bySource.has(source.name)) throw new TypeError(`"sources[${index}].name" is repeated`);
    // A source's own options over the shared ones, handed on as they are.
    const { name, ...webhook } = source;
    bySource.set(name, forgeWebhook({ ...shared, ...webhook }));
  }
  return {
    before: async (request) => {
      const name = sourceOf(request.event as unknown as ApiGatewayEvent);
      const middleware = name === undefined ? undefined : bySource.get(name);
      if (name === undefined || middleware === undefined) {
        const shown = isSourceName(name) ? ` "${name}"` : '';
        throw new IngestError(404, AwsErrorCodes.unknownSource, `unknown webhook source${shown}`);
      }
      await middleware.before?.(request);
      const event = request.event;
      event.webhook = { ...event.webhook, source: name };
    },
  };
}

/**
 * The webhook source a request's path names, as {@link forgeWebhookSources} reads it, when it is a valid source
 * name (configured or not); `undefined` otherwise.
 */
export function requestSourceOf(event: unknown): string | undefined {
  const name = sourceOf(event as ApiGatewayEvent);
  return isSourceName(name) ? name : undefined;
}

/** The source named by the request's path: `undefined` when the path names something that is not a source. */
function sourceOf(event: ApiGatewayEvent): string | undefined {
  if (typeof event !== 'object' || event === null) return DEFAULT_SOURCE;
  const parameters: unknown = event.pathParameters;
  if (typeof parameters === 'object' && parameters !== null && Object.hasOwn(parameters, 'source')) {
    const value: unknown = (parameters as Record<string, unknown>).source;
    return typeof value === 'string' ? value : undefined;
  }
  const path: unknown = 'rawPath' in event ? event.rawPath : (event as { path?: unknown }).path;
  if (typeof path !== 'string') return DEFAULT_SOURCE;
  const match = SOURCE_PATH.exec(path);
  if (match === null) return DEFAULT_SOURCE;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return undefined;
  }
}
