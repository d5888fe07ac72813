// The recording subscriber of the local stage (local-stack/recorder.yml; never packaged for another stage).
// Subscribed to everything on the bus, it logs, besides the `delivery received` line every subscriber writes,
// one `delivery recorded` line with the size and SHA-256 of `JSON.stringify(payload)` of the payload it
// resolved. The end-to-end tests read both from osls offline's log and compare the digest with the sender's.
// It reports into the delivery log like any subscriber (withDeliveryReport), and fails on purpose on a payload
// whose top-level `forgebridge_recorder_fail` is true, so the tests can see a failed subscriber in the log.
import { createHash } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import {
  createSubscriber,
  type DeliveryDetail,
  DeliveryLog,
  readDeliveryLogConfig,
  withDeliveryReport,
} from '../lib/aws/internal.js';
import { createEventHandler } from '../lib/webhooks/index.js';

const logger = new Logger({ serviceName: 'forgebridge-recorder' });
const receive = createSubscriber({ events: createEventHandler(), logger, s3: new S3Client({}) });

async function run(event: EventBridgeEvent<string, DeliveryDetail>): Promise<void> {
  const { id, payload, replay } = await receive(event);
  // A replay to the bus of a delivery it had taken: skipped (createSubscriber logged `replay skipped`).
  if (replay?.alreadyOk === true) return;
  const text = JSON.stringify(payload) ?? 'undefined';
  logger.info('delivery recorded', {
    delivery: id,
    bytes: Buffer.byteLength(text),
    sha256: createHash('sha256').update(text).digest('hex'),
  });
  if ((payload as { forgebridge_recorder_fail?: unknown }).forgebridge_recorder_fail === true) {
    throw new Error('recorder failed on purpose (forgebridge_recorder_fail)');
  }
}

const recorder = middy(run).use(injectLambdaContext(logger));
const logConfig = readDeliveryLogConfig();

export const handler =
  logConfig === undefined
    ? recorder
    : withDeliveryReport(recorder, {
        name: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'recorder',
        deliveryLog: new DeliveryLog({
          client: new DynamoDBClient({}),
          tableName: logConfig.tableName,
          ttlSeconds: logConfig.ttlSeconds,
        }),
        logger,
      });
