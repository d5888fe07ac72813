import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { ErrorCodes } from '../../webhooks/index.js';
import { AwsDefaults, AwsErrorCodes } from '../constants.js';
import { IngestError } from '../errors.js';
import type { Delivery, IngestResponse, LoggerLike } from '../types.js';
import { createDedupedPublish, DedupeInProgressError, DedupePublishError } from './dedupe.js';
import type { ForgeWebhookEvent } from './middleware.js';

/** The publish operation the ingest needs ({@link EventPublisher} fits). */
export interface PublisherLike {
  publish(delivery: Delivery): Promise<unknown>;
}

/** Options of {@link createIngest}. */
export interface IngestOptions {
  /** Puts a delivery on the bus. */
  publisher: PublisherLike;
  /** The dedupe table: DynamoDB client, table name, record TTL and fallback lock length. */
  dedupe: {
    client: DynamoDBClient;
    tableName: string;
    ttlSeconds?: number | undefined;
    lockSeconds?: number | undefined;
  };
  /** Where outcomes are logged (delivery id, event name, error codes; never a secret or the payload). */
  logger?: LoggerLike | undefined;
}

/** The ingest's Middy handler: the `event` comes out of `forgeWebhook` and the JSON body parser. */
export type IngestHandler = (
  event: ForgeWebhookEvent<unknown>,
  context?: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
) => Promise<IngestResponse>;

/** Delivery ids become DynamoDB keys, S3 keys and log fields: visible ASCII only (forges send UUIDs). */
const DELIVERY_ID = new RegExp(`^[\\x21-\\x7e]{1,${AwsDefaults.maxDeliveryIdLength}}$`);

function respond(statusCode: number, body: unknown): IngestResponse {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    if ('code' in error && typeof error.code === 'string') return error.code;
    if ('name' in error && typeof error.name === 'string') return error.name;
  }
  return 'unknown';
}

/**
 * Builds the ingest's handler: it publishes a verified delivery once per delivery id (Powertools Idempotency,
 * recorded only after the bus accepted it) and answers 202 `{"delivery": id}`; a redelivery 200
 * `{"duplicate":true}` without publishing; 409 while another invocation holds it; 503 when it could not be
 * published (the lock released). A delivery on the bus whose done record failed is still answered 202.
 * Refusals are thrown as {@link IngestError} for `webhookErrors`.
 */
export function createIngest(options: IngestOptions): IngestHandler {
  const { publisher, logger } = options;
  if (typeof publisher?.publish !== 'function')
    throw new TypeError('"publisher" must have a "publish" function');
  const dedupedPublish = createDedupedPublish({ ...options.dedupe, publish: (d) => publisher.publish(d) });

  return async (event, context) => {
    const { id, name } = event.webhook;
    if (!DELIVERY_ID.test(id)) {
      throw new IngestError(
        400,
        AwsErrorCodes.invalidDeliveryId,
        `"delivery" id must be 1 to ${AwsDefaults.maxDeliveryIdLength} visible ascii characters`,
      );
    }
    const payload = event.body;
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new IngestError(400, ErrorCodes.invalidJson, 'body must be a JSON object');
    }
    const fields = { delivery: id, event: name };
    let outcome: Awaited<ReturnType<typeof dedupedPublish>>;
    try {
      outcome = await dedupedPublish({ id, name, payload, rawBody: event.rawBody }, context);
    } catch (error) {
      if (error instanceof DedupeInProgressError) {
        throw new IngestError(409, AwsErrorCodes.inProgress, 'delivery is being processed, retry later', {
          cause: error,
        });
      }
      if (error instanceof DedupePublishError) {
        logger?.error('publish failed', { ...fields, errorCode: errorCode(error.cause) });
        // The lock then lasts until it expires (the Lambda's remaining time); redeliveries get 409 until then.
        if (error.releaseError !== undefined) {
          logger?.error('dedupe release failed', { ...fields, errorCode: errorCode(error.releaseError) });
        }
      } else {
        logger?.error('dedupe begin failed', { ...fields, errorCode: errorCode(error) });
      }
      throw new IngestError(503, AwsErrorCodes.serviceUnavailable, 'delivery not accepted, retry later', {
        cause: error,
      });
    }
    if (outcome.status === 'duplicate') {
      logger?.info('duplicate delivery', fields);
      return respond(200, { duplicate: true });
    }
    if (outcome.recordError !== undefined) {
      // The delivery IS on the bus: answer 202. A redelivery after the lock expires may publish it again.
      logger?.error('dedupe complete failed', { ...fields, errorCode: errorCode(outcome.recordError) });
    }
    logger?.info('delivery published', fields);
    return respond(202, { delivery: id });
  };
}
