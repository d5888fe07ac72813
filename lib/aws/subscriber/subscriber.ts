import type { S3Client } from '@aws-sdk/client-s3';
import type { EventBridgeEvent } from 'aws-lambda';
import type { DeliveryDetail, LoggerLike } from '../types.js';
import { type ResolvedDelivery, resolveDelivery } from './resolve-delivery.js';

/** Options of {@link createSubscriber}. */
export interface SubscriberOptions {
  /** Where the resolved delivery is dispatched: `createEventHandler()` of lib/webhooks fits. */
  events: { receive(delivery: ResolvedDelivery): Promise<void> };
  /** Writes the `delivery received` line: a Powertools `Logger` fits. */
  logger: Pick<LoggerLike, 'info'>;
  /** Reads claim-checked payloads; needed only for events with `detail.payloadRef`. */
  s3?: S3Client | undefined;
  /**
   * The subscriber's name in the delivery log: how it finds itself among those that had taken a replayed
   * delivery. Default: its function's name (`AWS_LAMBDA_FUNCTION_NAME`), what the delivery report names it by.
   */
  name?: string | undefined;
  /**
   * What a delivery put on the whole bus again (`forgebridge replay --since` without `--subscriber`) does here:
   * `skip-ok` (default) skips it when this subscriber had reported it `ok` (one `replay skipped` line, no handler
   * runs), `run` runs the handlers on every replay.
   */
  replays?: ReplayMode | undefined;
}

/** {@link SubscriberOptions.replays}. */
export const ReplayModes = ['skip-ok', 'run'] as const;
export type ReplayMode = (typeof ReplayModes)[number];

/**
 * Builds the body of a subscriber Lambda: it resolves the delivery from the EventBridge event (through the S3
 * claim check when there is one), dispatches it through `events`, logs one `delivery received` line
 * (`delivery`, `event`, `action` when present, `detailType`, `claimCheck`, `forge` and `source` when present;
 * never the payload) and returns it.
 * The line is written once the handlers succeeded: a failed invocation that EventBridge retries logs one line
 * for the retry that got through, not one per attempt. A delivery replayed to the whole bus that this subscriber
 * (`name`) had reported `ok` is skipped unless `replays` is `run`: it logs `replay skipped` instead.
 *
 * @example
 * ```ts
 * const events = createEventHandler();
 * events.on('issues.opened', ({ payload }) => { ... });
 * const receive = createSubscriber({ events, logger, s3: new S3Client({}) });
 * export const handler = middy(async (event) => { await receive(event); }).use(injectLambdaContext(logger));
 * ```
 */
export function createSubscriber(
  options: SubscriberOptions,
): (
  event: Pick<EventBridgeEvent<string, DeliveryDetail>, 'detail' | 'detail-type'>,
) => Promise<ResolvedDelivery> {
  const { events, logger, s3 } = options;
  const name = options.name ?? process.env.AWS_LAMBDA_FUNCTION_NAME;
  const replays = options.replays ?? 'skip-ok';
  if (typeof events?.receive !== 'function') throw new TypeError('"events" must have a "receive" function');
  if (typeof logger?.info !== 'function') throw new TypeError('"logger" must have an "info" function');
  if (!(ReplayModes as readonly string[]).includes(replays)) {
    throw new TypeError(`"replays" must be one of ${ReplayModes.map((mode) => `"${mode}"`).join(', ')}`);
  }
  return async (event) => {
    const delivery = await resolveDelivery(event, { s3, subscriber: name });
    if (delivery.replay?.alreadyOk === true && replays === 'skip-ok') {
      logger.info('replay skipped', {
        delivery: delivery.id,
        event: delivery.name,
        replay: delivery.replay.run,
        reason: 'this subscriber had reported it ok',
      });
      return delivery;
    }
    await events.receive(delivery);
    // resolveDelivery also takes the detail as JSON text (a relay's input transformer); it parsed by now.
    const detail: Partial<DeliveryDetail> =
      typeof event.detail === 'string' ? JSON.parse(event.detail) : event.detail;
    const { action, payloadRef } = detail;
    logger.info('delivery received', {
      delivery: delivery.id,
      event: delivery.name,
      ...(typeof action === 'string' ? { action } : {}),
      detailType: event['detail-type'],
      claimCheck: payloadRef !== undefined,
      ...(delivery.forge === undefined ? {} : { forge: delivery.forge }),
      ...(delivery.source === undefined ? {} : { source: delivery.source }),
      ...(delivery.hook === undefined ? {} : { hook: delivery.hook }),
    });
    return delivery;
  };
}
