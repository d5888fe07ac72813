/**
 * A delivery too large for the ingest (the forge recorded 413: Lambda's 6 MB request limit) fails again on every
 * redelivery. The reconciler fetches its payload over the forge's authenticated API instead and publishes it
 * itself: through the claim check (the publisher's), exactly once (the ingest's dedupe record, same key), with
 * `detail.verified: "forge-api"` in place of a signature check, and a `recovered` row in the delivery log.
 */
import { type Forge, routeForgeEvent } from '../../webhooks/index.js';
import type { DeliveryLog } from '../delivery-log/delivery-log.js';
import { createDedupedPublish, type DedupeOptions } from '../ingest/index.js';
import type { PublisherLike } from '../publish/index.js';
import type { Delivery, LoggerLike } from '../types.js';
import type { RecoverDelivery } from './reconcile.js';

/** Options of {@link createRecovery}. */
export interface RecoveryOptions {
  /** The ingest's publisher (with its claim-check bucket): a recovered delivery goes out as the same entry. */
  publisher: PublisherLike;
  /** The ingest's dedupe table. */
  dedupe: Pick<DedupeOptions, 'client' | 'tableName' | 'ttlSeconds'>;
  deliveryLog?: Pick<DeliveryLog, 'record'> | undefined;
  logger?: LoggerLike | undefined;
}

/** Builds the reconciler's recovery of deliveries too large for the ingest. */
export function createRecovery(options: RecoveryOptions): RecoverDelivery {
  const { publisher, deliveryLog, logger } = options;
  const results = new WeakMap<Delivery, unknown>();
  const publish = createDedupedPublish({
    ...options.dedupe,
    publish: async (delivery) => {
      const result = await publisher.publish(delivery);
      results.set(delivery, result);
      return result;
    },
  });
  return async (source, attempt) => {
    const { payload } = await source.api.fetchPayload(attempt);
    const route = routeForgeEvent(source.forge as Forge, attempt.event, payload);
    const rawBody = Buffer.from(JSON.stringify(payload), 'utf8');
    const delivery: Delivery = {
      id: attempt.deliveryId,
      name: route.name,
      payload,
      rawBody,
      forge: source.forge,
      action: route.action,
      source: source.name,
      nativeEvent: attempt.event,
      verified: 'forge-api',
    };
    // The same identity the ingest gives it: GitHub's GUID names the event, the hook tells its deliveries apart.
    if (source.hook !== undefined) delivery.hook = source.hook;
    if (route.nativeAction !== undefined) delivery.nativeAction = route.nativeAction;
    const outcome = await publish(delivery);
    if (outcome.status === 'duplicate') return 'duplicate';
    const published = results.get(delivery) as { eventId?: unknown; payloadRef?: unknown } | undefined;
    logger?.info('delivery recovered from the forge api', {
      delivery: delivery.id,
      source: source.name,
      bytes: rawBody.byteLength,
    });
    await deliveryLog?.record({
      deliveryId: delivery.id,
      source: source.name,
      hook: source.hook,
      forge: source.forge,
      event: delivery.name,
      action: delivery.action,
      nativeEvent: attempt.event,
      bodyBytes: rawBody.byteLength,
      verdict: 'forge_api',
      httpStatus: 202,
      outcome: 'recovered',
      reason: 'recovered from forge API',
      ...(typeof published?.eventId === 'string' ? { eventId: published.eventId } : {}),
      ...(published?.payloadRef === undefined ? {} : { payloadRef: published.payloadRef as never }),
    });
    return 'published';
  };
}
