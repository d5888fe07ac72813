import type { MiddlewareObj } from '@middy/core';
import { ErrorCodes } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import type { DeliveryLog } from '../delivery-log/delivery-log.js';
import type { DeliveryLogEntry, DeliveryOutcome, DeliveryVerdict } from '../delivery-log/schema.js';
import type { ForgebridgeMetrics } from '../metrics.js';
import type { HeaderMap, IngestResponse, LoggerLike } from '../types.js';
import type { ApiGatewayEvent } from './api-gateway.js';
import type { ForgeWebhookEvent } from './middleware.js';
import { refusalOf } from './refusal.js';
import { requestSourceOf } from './webhook-sources.js';

/** Options of {@link deliveryLog}. */
export interface DeliveryLogMiddlewareOptions {
  /** Where each answered request is recorded: a {@link DeliveryLog} on the delivery log table. */
  log?: Pick<DeliveryLog, 'record'> | undefined;
  /** Where each answered request is counted (`Deliveries`, `IngestDuration`, `BodyBytes`), before it is recorded. */
  metrics?: Pick<ForgebridgeMetrics, 'delivery'> | undefined;
  /** Where a failure of the middleware itself is logged (never the request). */
  logger?: Pick<LoggerLike, 'warn'> | undefined;
}

/** The request as it came in, kept by `before` (references only: nothing is copied until the answer). */
interface Arrival {
  receivedAt: number;
  headers: unknown;
  body: unknown;
  isBase64Encoded: boolean;
  source: string | undefined;
}

/** Error codes that are their own verdict: the request was refused at that check. */
const CODE_VERDICTS: Readonly<Record<string, DeliveryVerdict>> = {
  [ErrorCodes.invalidSignature]: 'bad_signature',
  [ErrorCodes.missingHeader]: 'missing_header',
  [ErrorCodes.missingSignature]: 'missing_signature',
  [ErrorCodes.invalidJson]: 'invalid_json',
  [ErrorCodes.unsupportedMediaType]: 'unsupported_media_type',
  [ErrorCodes.payloadTooLarge]: 'payload_too_large',
  [AwsErrorCodes.invalidDeliveryId]: 'invalid_delivery_id',
  [AwsErrorCodes.unknownSource]: 'unknown_source',
  [ErrorCodes.staleTimestamp]: 'stale_timestamp',
  [ErrorCodes.futureTimestamp]: 'future_timestamp',
  [ErrorCodes.invalidHeader]: 'invalid_header',
};

function outcomeOf(status: number): DeliveryOutcome {
  if (status === 409) return 'in_progress';
  if (status >= 500) return 'failed';
  return 'rejected';
}

function headerMapOf(headers: unknown): HeaderMap | undefined {
  return typeof headers === 'object' && headers !== null ? (headers as HeaderMap) : undefined;
}

function bodyOf(arrival: Arrival, event: Partial<ForgeWebhookEvent<unknown>>): Buffer {
  if (Buffer.isBuffer(event.rawBody)) return event.rawBody;
  if (typeof arrival.body !== 'string') return Buffer.alloc(0);
  return Buffer.from(arrival.body, arrival.isBase64Encoded ? 'base64' : 'utf8');
}

function codeAndMessage(response: IngestResponse | undefined): { code?: string; message?: string } {
  try {
    const parsed = JSON.parse(typeof response?.body === 'string' ? response.body : '') as {
      error?: { code?: unknown; message?: unknown };
    };
    const { code, message } = parsed.error ?? {};
    return {
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof message === 'string' ? { message } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * Middy middleware that records every request the ingest answers in the delivery log, with one
 * {@link DeliveryLog.record} (one PutItem) once the answer is known, and counts it in the metrics (EMF lines,
 * source, verdict and outcome as the log has them): the delivery's names, size, the signature
 * verdict with the answered (safe) reason, the HTTP status, the outcome (`published`, `queued`, `duplicate`,
 * `in_progress`, `failed`, `rejected`), the event id and claim check, the masked headers and the body (when
 * the log stores payloads). A refused signature is diagnosed here, on that path only. It never changes the
 * answer: a failed write is logged and the answer stands. Use it before `forgeWebhook` / `forgeWebhookSources`
 * (so it sees the request as it came in) and before `webhookErrors` (so it sees the error's answer).
 *
 * @example
 * ```ts
 * export const handler = middy(createIngest(options))
 *   .use(deliveryLog({ log: new DeliveryLog({ client, tableName }) }))
 *   .use(forgeWebhookSources({ sources }))
 *   .use(httpJsonBodyParser())
 *   .use(webhookErrors({ logger }));
 * ```
 */
export function deliveryLog(
  options: DeliveryLogMiddlewareOptions,
): MiddlewareObj<ForgeWebhookEvent<unknown>> {
  const { log, metrics, logger } = options ?? {};
  if (log !== undefined && typeof log.record !== 'function')
    throw new TypeError('"log" must have a "record" function');
  if (metrics !== undefined && typeof metrics.delivery !== 'function')
    throw new TypeError('"metrics" must have a "delivery" function');
  if (log === undefined && metrics === undefined) throw new TypeError('"log" or "metrics" is required');
  const arrivals = new WeakMap<object, Arrival>();

  const record = async (
    request: { event: unknown; response: unknown; error?: unknown },
    failed: boolean,
  ): Promise<void> => {
    try {
      const arrival = arrivals.get(request as object);
      if (arrival === undefined) return;
      const event = (request.event ?? {}) as Partial<ForgeWebhookEvent<unknown>>;
      const response = request.response as IngestResponse | undefined;
      // No answer at all (no webhookErrors after it): Lambda answers an unhandled error as a 5xx.
      const httpStatus = typeof response?.statusCode === 'number' ? response.statusCode : failed ? 500 : 200;
      const body = bodyOf(arrival, event);
      const webhook = event.webhook;
      const entry: DeliveryLogEntry = {
        receivedAt: arrival.receivedAt,
        bodyBytes: body.byteLength,
        headers: headerMapOf(arrival.headers),
        body,
        source: webhook?.source ?? arrival.source,
        verdict: webhook === undefined ? 'not_checked' : 'verified',
        httpStatus,
        outcome: outcomeOf(httpStatus),
      };
      if (webhook !== undefined) {
        Object.assign(entry, {
          deliveryId: webhook.id,
          hook: webhook.hook,
          event: webhook.name,
          action: webhook.action,
          forge: webhook.forge,
          nativeEvent: webhook.nativeName,
          nativeAction: webhook.nativeAction,
          secretIndex: webhook.secretIndex,
        });
      }
      if (!failed) {
        const outcome = event.ingestOutcome;
        if (outcome !== undefined) {
          entry.outcome = outcome.status;
          entry.eventId = outcome.eventId;
          entry.payloadRef = outcome.payloadRef;
        } else if (httpStatus >= 400) {
          entry.outcome = outcomeOf(httpStatus);
        } else {
          entry.outcome = 'published';
        }
      } else {
        const { code, message } = codeAndMessage(response);
        entry.errorCode = code;
        // The answered message: webhookErrors' words, never a secret (a 5xx says only "retry later").
        entry.reason = message;
        const verdict = code === undefined ? undefined : CODE_VERDICTS[code];
        if (verdict !== undefined) entry.verdict = verdict;
        const refusal = refusalOf(request.error);
        if (refusal !== undefined) {
          entry.forge = refusal.forge;
          entry.deliveryId = refusal.deliveryId;
          entry.event = refusal.event;
          entry.action = refusal.action;
          entry.nativeEvent = refusal.nativeEvent;
          entry.nativeAction = refusal.nativeAction;
          if (refusal.diagnosis !== undefined) {
            entry.diagnosis = refusal.diagnosis.reasons.map(({ code: reason, message: words }) => ({
              code: reason,
              message: words,
            }));
            // The first reason is the main one: the plain words the list and the CLI show.
            entry.reason = refusal.diagnosis.reasons[0]?.message ?? entry.reason;
          }
        }
      }
      metrics?.delivery({
        source: entry.source,
        verdict: entry.verdict,
        outcome: entry.outcome,
        bodyBytes: body.byteLength,
        durationMs: Date.now() - arrival.receivedAt,
      });
      await log?.record(entry);
    } catch (error) {
      try {
        logger?.warn('delivery log middleware failed', {
          code: error instanceof Error ? error.name : 'unknown',
        });
      } catch {
        // A throwing logger must not change the answer either.
      }
    }
  };

  return {
    before: (request) => {
      const event = request.event as unknown as ApiGatewayEvent | undefined;
      const raw = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
      arrivals.set(request, {
        receivedAt: Date.now(),
        headers: raw.headers,
        body: raw.body,
        isBase64Encoded: raw.isBase64Encoded === true,
        source: requestSourceOf(event),
      });
    },
    after: async (request) => {
      await record(request, false);
    },
    onError: async (request) => {
      await record(request, true);
    },
  };
}
