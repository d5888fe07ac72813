/**
 * A generic subscriber: it rebuilds `{ id, name, payload }` from the EventBridge event (resolving an S3 claim
 * check), logs one `delivery received` line and dispatches it through lib/webhooks' event handler.
 * serverless.yml subscribes it under several rule forms (every `issues` action, `push`, everything) — copy it
 * as the start of a subscriber of your own. Wiring only: SDK clients at module scope.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { createSubscriber, type DeliveryDetail, sdkTimeouts } from '../../lib/aws/index.js';
import { createEventHandler } from '../../lib/webhooks/index.js';

const logger = new Logger({ serviceName: 'forgebridge-subscriber' });
const s3 = new S3Client(sdkTimeouts());

// A subscriber of your own registers its handlers here: `events.on('push', ({ payload }) => …)`.
const events = createEventHandler();
const receive = createSubscriber({ events, logger, s3 });

async function run(event: EventBridgeEvent<string, DeliveryDetail>): Promise<void> {
  await receive(event);
}

/** The Lambda entry point. */
export const handler = middy(run).use(injectLambdaContext(logger));
