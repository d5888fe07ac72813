/**
 * The configuration a `Webhooks` instance shares with its middleware, behind a module-private symbol so it
 * (and the secret in it) never shows up as a public property. Internal.
 */
import type { ResolvedDeliveryOptions } from './delivery-options.js';
import type { Logger, ReceivedEvent, WebhookEventError } from './types.js';

/** Key of a `Webhooks` instance's internal configuration. Internal. */
export const kWebhooksConfig: unique symbol = Symbol('forgebridge.webhooks.config');

/** A `Webhooks` instance's internal configuration. Internal. */
export interface WebhooksConfig {
  readonly delivery: ResolvedDeliveryOptions;
  readonly path: string;
  readonly timeout: number;
  readonly log: Logger;
  readonly receive: (event: ReceivedEvent) => Promise<void>;
  /** Passes an error to the `error` handlers (the middleware's refusals). */
  readonly emitError: (error: WebhookEventError) => void;
}

/** Something that carries a `WebhooksConfig` (a `Webhooks` instance). Internal. */
export interface HasWebhooksConfig {
  readonly [kWebhooksConfig]: WebhooksConfig;
}
