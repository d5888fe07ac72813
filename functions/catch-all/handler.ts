/**
 * A generic subscriber: it rebuilds `{ id, name, payload }` from the EventBridge event (resolving an S3 claim
 * check), dispatches it through lib/webhooks' event handler on `*`, and logs what it received. serverless.yml
 * subscribes it under several rule forms (every `issues` action, `push`, everything) — copy it as the start
 * of a subscriber of your own. Wiring only: SDK clients at module scope.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { type DeliveryDetail, resolveDelivery } from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';
import { deliveryReceipt, payloadDigest, recordReceipt } from '../shared/receipts.js';

const logger = new Logger({ serviceName: 'forgebridge-subscriber' });
const s3 = new S3Client({
  requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
});

const events = createEventHandler();
events.on('*', ({ id, name, payload }) => {
  const action = (payload as { action?: unknown } | null)?.action;
  logger.info('delivery received', {
    delivery: id,
    event: name,
    ...(typeof action === 'string' ? { action } : {}),
    ...payloadDigest(payload),
  });
});

async function run(event: EventBridgeEvent<string, DeliveryDetail>, context: Context): Promise<void> {
  const delivery = await resolveDelivery(event, { s3 });
  await events.receive(delivery as Parameters<typeof events.receive>[0]);
  recordReceipt(deliveryReceipt(context.functionName, event, delivery));
}

/**
 * The Lambda entry point.
 *
 * @example
 * ```yaml
 * onPush:
 *   handler: functions/catch-all/handler.handler
 *   events: [{ eventBridge: { eventBus: !GetAtt Bus.Name, pattern: { detail-type: [push] } } }]
 * ```
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
 */
export const handler = middy(run).use(injectLambdaContext(logger));
