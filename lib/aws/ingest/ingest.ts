import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { ErrorCodes } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import {
  DedupeInProgressError,
  DedupePublishError,
  IngestError,
  NotKeptError,
  QueueError,
} from '../errors.js';
import type { PublisherLike } from '../publish/index.js';
import { DeliveryQueue } from '../queue/index.js';
import { DELIVERY_ID_RULE, errorCode, isDeliveryId } from '../rules.js';
import type { Delivery, IngestResponse, LoggerLike, PayloadRef } from '../types.js';
import { createDedupedPublish } from './dedupe.js';
import type { ForgeWebhookEvent } from './middleware.js';

/** Options of {@link createIngest}. */
export interface IngestOptions {
  /** Puts a delivery on the bus. */
  publisher: PublisherLike;
  /** The dedupe table: DynamoDB client, table name, record TTL and fallback lock length. */
  dedupe: {
    client: DynamoDBClient;
    tableName: string;
    ttlSeconds?: number | undefined;
    /** A record lifetime per source name, over `ttlSeconds` (`FORGEBRIDGE_WEBHOOK_SOURCES` `dedupeTtlSeconds`). */
    ttlSecondsBySource?: Readonly<Record<string, number>> | undefined;
    lockSeconds?: number | undefined;
  };
  /**
   * Where a delivery the bus did not take is kept for the retrier. Default: a {@link DeliveryQueue} on the
   * dedupe table with the same client (bodies over 300 KB then need one given with a claim-check `bucket`).
   */
  queue?: Pick<DeliveryQueue, 'enqueue'> | undefined;
  /** Where outcomes are logged (delivery id, event name, error codes; never a secret or the payload). */
  logger?: LoggerLike | undefined;
}

/** The ingest's Middy handler: the `event` comes out of `forgeWebhook` and the JSON body parser. */
export type IngestHandler = (
  event: ForgeWebhookEvent<unknown>,
  context?: Partial<Pick<Context, 'getRemainingTimeInMillis'>>,
) => Promise<IngestResponse>;

function respond(statusCode: number, body: unknown): IngestResponse {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The event id and claim check of an {@link EventPublisher} result; nothing of any other publisher's. */
function publishedFacts(result: unknown): { eventId?: string; payloadRef?: PayloadRef } {
  if (typeof result !== 'object' || result === null) return {};
  const { eventId, payloadRef } = result as { eventId?: unknown; payloadRef?: unknown };
  return {
    ...(typeof eventId === 'string' ? { eventId } : {}),
    ...(typeof payloadRef === 'object' && payloadRef !== null
      ? { payloadRef: payloadRef as PayloadRef }
      : {}),
  };
}

/**
 * Builds the ingest's handler: it publishes a verified delivery once per delivery id (Powertools Idempotency,
 * recorded only after the bus accepted it) and answers 202 `{"delivery": id}`. When the bus does not take it
 * within the publish budget, it is kept in the queue for the retrier and answered 202
 * `{"delivery": id, "queued": true}`. A redelivery is answered 200 `{"duplicate":true}` without publishing; 409
 * while another invocation holds it; 503 only when neither the bus nor the queue took it (the lock released).
 * A delivery on the bus (or queued) whose done record failed is still answered 202. Refusals are thrown as
 * {@link IngestError} for `webhookErrors`.
 */
export function createIngest(options: IngestOptions): IngestHandler {
  const { publisher, logger } = options;
  if (typeof publisher?.publish !== 'function')
    throw new TypeError('"publisher" must have a "publish" function');
  const queue =
    options.queue ??
    new DeliveryQueue({
      client: options.dedupe?.client,
      tableName: options.dedupe?.tableName,
      ttlSeconds: options.dedupe?.ttlSeconds,
    });
  if (typeof queue.enqueue !== 'function') throw new TypeError('"queue" must have an "enqueue" function');
  // What the publisher said of each delivery it published (event id, claim check), for `event.ingestOutcome`.
  const published = new WeakMap<Delivery, unknown>();
  const publishOrQueue = async (delivery: Delivery): Promise<unknown> => {
    try {
      const result = await publisher.publish(delivery);
      published.set(delivery, result);
      return result;
    } catch (publishError) {
      try {
        await queue.enqueue(delivery, publishError);
      } catch (queueError) {
        throw new NotKeptError(publishError, queueError);
      }
      logger?.warn('publish failed, delivery queued', {
        delivery: delivery.id,
        event: delivery.name,
        errorCode: errorCode(publishError),
      });
      return { queued: true };
    }
  };
  const dedupedPublish = createDedupedPublish({ ...options.dedupe, publish: publishOrQueue });

  return async (event, context) => {
    const { webhook } = event;
    const { id, name } = webhook;
    if (!isDeliveryId(id)) {
      throw new IngestError(
        400,
        AwsErrorCodes.invalidDeliveryId,
        `"delivery" id must be ${DELIVERY_ID_RULE}`,
      );
    }
    const payload = event.body;
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw new IngestError(400, ErrorCodes.invalidJson, 'body must be a JSON object');
    }
    const fields = {
      delivery: id,
      event: name,
      ...(webhook.source === undefined ? {} : { source: webhook.source }),
      ...(webhook.hook === undefined ? {} : { hook: webhook.hook }),
    };
    const delivery: Delivery = { id, name, payload, rawBody: event.rawBody };
    if (webhook.forge !== undefined) {
      // The mapped action routes (`detail-type`), not `payload.action`: a GitLab payload has none at the top.
      delivery.forge = webhook.forge;
      delivery.action = webhook.action;
      if (webhook.nativeName !== undefined) delivery.nativeEvent = webhook.nativeName;
      if (webhook.nativeAction !== undefined) delivery.nativeAction = webhook.nativeAction;
    }
    // Part of the dedupe key (dedupeKeyOf): two sources' delivery ids never collide, nor two hooks' deliveries of one
    // event (GitHub's GUID is the event's).
    if (webhook.source !== undefined) delivery.source = webhook.source;
    if (webhook.hook !== undefined) delivery.hook = webhook.hook;
    let outcome: Awaited<ReturnType<typeof dedupedPublish>>;
    try {
      outcome = await dedupedPublish(delivery, context);
    } catch (error) {
      if (error instanceof DedupeInProgressError) {
        throw new IngestError(409, AwsErrorCodes.inProgress, 'delivery is being processed, retry later', {
          cause: error,
        });
      }
      if (error instanceof DedupePublishError) {
        const notKept = error.cause instanceof NotKeptError ? error.cause : undefined;
        logger?.error('publish failed', {
          ...fields,
          errorCode: errorCode(notKept?.publishError ?? error.cause),
        });
        if (notKept !== undefined) {
          logger?.error('queue write failed', {
            ...fields,
            errorCode: errorCode(
              notKept.cause instanceof QueueError ? (notKept.cause.cause ?? notKept.cause) : notKept.cause,
            ),
          });
        }
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
    event.ingestOutcome = { status: outcome.status, ...publishedFacts(published.get(delivery)) };
    if (outcome.status === 'duplicate') {
      logger?.info('duplicate delivery', fields);
      return respond(200, { duplicate: true });
    }
    if (outcome.recordError !== undefined) {
      // The delivery IS on the bus (or queued): answer 202. A redelivery after the lock expires may publish it
      // again (a second queue write finds the record and stops there).
      logger?.error('dedupe complete failed', { ...fields, errorCode: errorCode(outcome.recordError) });
    }
    if (outcome.status === 'queued') {
      logger?.info('delivery queued', fields);
      return respond(202, { delivery: id, queued: true });
    }
    logger?.info('delivery published', fields);
    return respond(202, { delivery: id });
  };
}
