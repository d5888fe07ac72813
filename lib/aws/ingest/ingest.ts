import { readDelivery } from '../../webhooks/index.js';
import { AwsDefaults, AwsErrorCodes, BeginResult } from '../constants.js';
import type { Delivery, HeaderMap, IngestRequest, IngestResponse, LoggerLike } from '../types.js';

/**
 * The dedupe operations the ingest needs ({@link DedupeStore} fits).
 *
 * @example
 * ```ts
 * const dedupe: DedupeLike = new DedupeStore({ client, tableName: 'dedupe' });
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
export interface DedupeLike {
  begin(id: string): Promise<BeginResult>;
  complete(id: string): Promise<void>;
  release(id: string): Promise<void>;
}

/**
 * The publish operation the ingest needs ({@link EventPublisher} fits).
 *
 * @example
 * ```ts
 * const publisher: PublisherLike = new EventPublisher({ eventBridge, eventBusName: 'forge' });
 * ```
 * @see https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
 */
export interface PublisherLike {
  publish(delivery: Delivery): Promise<unknown>;
}

/**
 * Collaborators of {@link handleDelivery}; the Lambda handler builds them once, at module scope.
 *
 * @example
 * ```ts
 * const deps: IngestDependencies = { getSecrets: () => secrets.getSecrets(), dedupe, publisher, logger };
 * ```
 * @see https://docs.aws.amazon.com/lambda/latest/dg/best-practices.html
 */
export interface IngestDependencies {
  /** Current webhook secrets ({@link SecretsProvider.getSecrets}). */
  getSecrets: () => Promise<readonly string[]>;
  dedupe: DedupeLike;
  publisher: PublisherLike;
  /** Where outcomes are logged (no secret, no payload is ever passed). */
  logger?: LoggerLike | undefined;
}

/**
 * How deliveries are read; the same knobs as `readDelivery` of `lib/webhooks`.
 *
 * @example
 * ```ts
 * const config: IngestConfig = { headers: { event: 'x-github-event', delivery: 'x-github-delivery' } };
 * ```
 * @see https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
 */
export interface IngestConfig {
  /** Header names. Defaults: `x-forge-event`, `x-forge-delivery`, `x-hub-signature-256`, `x-hub-signature`. */
  headers?: { event?: string; delivery?: string; signature256?: string; signature?: string } | undefined;
  /** Accept a sha1 signature when it is the only one. Default `true`. */
  allowSha1?: boolean | undefined;
  /** Largest body accepted, in bytes. Default 25 MiB (Lambda itself stops at about 6 MB). */
  maxBodyBytes?: number | undefined;
}

/** Delivery ids become DynamoDB keys, S3 keys and log fields: visible ASCII only (forges send UUIDs). */
const DELIVERY_ID = new RegExp(`^[\\x21-\\x7e]{1,${AwsDefaults.maxDeliveryIdLength}}$`);

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

function respond(statusCode: number, body: unknown): IngestResponse {
  return { statusCode, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}

/** Same body shape as the `lib/webhooks` middleware: `{"error":{"code","message"}}`. */
function failure(statusCode: number, code: string, message: string): IngestResponse {
  return respond(statusCode, { error: { code, message } });
}

type ReadOptions = Parameters<typeof readDelivery>[1];

/** readDelivery checks its options once per object: keep one per config and secret list. */
const optionsCache = new WeakMap<IngestConfig, { key: string; options: ReadOptions }>();

function readOptions(config: IngestConfig, secrets: readonly string[]): ReadOptions {
  const key = secrets.join('\n');
  const cached = optionsCache.get(config);
  if (cached !== undefined && cached.key === key) return cached.options;
  const options: ReadOptions = { secret: [...secrets] };
  if (config.headers !== undefined) options.headers = config.headers;
  if (config.allowSha1 !== undefined) options.allowSha1 = config.allowSha1;
  if (config.maxBodyBytes !== undefined) options.maxBodyBytes = config.maxBodyBytes;
  optionsCache.set(config, { key, options });
  return options;
}

/** Every 5xx answer says only this: details stay in the logs. */
function unavailable(): IngestResponse {
  return failure(503, AwsErrorCodes.serviceUnavailable, 'delivery not accepted, retry later');
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    if ('code' in error && typeof error.code === 'string') return error.code;
    if ('name' in error && typeof error.name === 'string') return error.name;
  }
  return 'unknown';
}

function decodeBody(request: IngestRequest): Buffer {
  const body = request.body ?? '';
  return request.isBase64Encoded === true ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/**
 * Handles one webhook delivery: decode (base64 first), verify with `lib/webhooks` `readDelivery`, dedupe on
 * the delivery id, publish to EventBridge, then mark it done.
 *
 * Answers: the `readDelivery` statuses for bad input (400, 401, 404, 413, 415); 202 `{"delivery": id}` once
 * the delivery is on the bus; 200 `{"duplicate":true}` when it was already published; 409 while another
 * invocation holds it; 503 when secrets, DynamoDB or EventBridge fail — and then the dedupe lock is released
 * so the forge's redelivery goes through. Bodies are JSON and never contain a secret or an internal detail.
 *
 * @example
 * ```ts
 * export const handler = middy(async (event) =>
 *   handleDelivery(fromApiGatewayEvent(event), { getSecrets, dedupe, publisher, logger }, config));
 * ```
 * @see https://docs.github.com/en/webhooks/using-webhooks/best-practices-for-using-webhooks#respond-within-10-seconds
 */
export async function handleDelivery(
  request: IngestRequest,
  deps: IngestDependencies,
  config: IngestConfig = {},
): Promise<IngestResponse> {
  const logger = deps.logger;
  let secrets: readonly string[];
  try {
    secrets = await deps.getSecrets();
  } catch (error) {
    logger?.error('webhook secrets unavailable', { errorCode: errorCode(error) });
    return unavailable();
  }

  const deliveryRequest: Parameters<typeof readDelivery>[0] = {
    headers: request.headers as HeaderMap,
    body: decodeBody(request),
  };
  if (request.method !== undefined) deliveryRequest.method = request.method;
  let result: ReturnType<typeof readDelivery>;
  try {
    result = readDelivery(deliveryRequest, readOptions(config, secrets));
  } catch (error) {
    // A TypeError from the options: a misconfigured function, not bad input.
    logger?.error('ingest misconfigured', {
      errorCode: errorCode(error),
      message: (error as Error)?.message,
    });
    return unavailable();
  }
  if (!result.ok) {
    logger?.warn('delivery rejected', { status: result.status, code: result.code });
    return failure(result.status, result.code, result.message);
  }
  const { id, name } = result;
  if (!DELIVERY_ID.test(id)) {
    logger?.warn('delivery rejected', { status: 400, code: AwsErrorCodes.invalidDeliveryId });
    return failure(
      400,
      AwsErrorCodes.invalidDeliveryId,
      `"delivery" id must be 1 to ${AwsDefaults.maxDeliveryIdLength} visible ascii characters`,
    );
  }

  let claim: BeginResult;
  try {
    claim = await deps.dedupe.begin(id);
  } catch (error) {
    logger?.error('dedupe begin failed', { delivery: id, errorCode: errorCode(error) });
    return unavailable();
  }
  if (claim === BeginResult.Duplicate) {
    logger?.info('duplicate delivery', { delivery: id, event: name });
    return respond(200, { duplicate: true });
  }
  if (claim === BeginResult.InProgress) {
    logger?.info('delivery in progress', { delivery: id, event: name });
    return failure(409, AwsErrorCodes.inProgress, 'delivery is being processed, retry later');
  }

  try {
    await deps.publisher.publish({ id, name, payload: result.payload, rawBody: result.rawBody });
  } catch (error) {
    logger?.error('publish failed', { delivery: id, event: name, errorCode: errorCode(error) });
    try {
      await deps.dedupe.release(id);
    } catch (releaseError) {
      // The lock then only lasts until it expires (the Lambda timeout); redeliveries get 409 until then.
      logger?.error('dedupe release failed', { delivery: id, errorCode: errorCode(releaseError) });
    }
    return unavailable();
  }

  try {
    await deps.dedupe.complete(id);
  } catch (error) {
    // The delivery IS on the bus: answer 202. A redelivery after the lock expires may publish it again.
    logger?.error('dedupe complete failed', { delivery: id, errorCode: errorCode(error) });
  }
  logger?.info('delivery published', { delivery: id, event: name });
  return respond(202, { delivery: id });
}
