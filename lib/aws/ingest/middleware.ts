import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  type DeliveryHeaderNames,
  type DeliveryOptions,
  diagnoseSignature,
  ErrorCodes,
  type Forge,
  readDelivery,
  resolvePreset,
  routeForgeEvent,
  type SignatureDiagnosis,
} from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import { DEFAULT_SOURCE } from '../delivery-key.js';
import { AwsBridgeError, IngestError, SecretsError } from '../errors.js';
import { errorCode, isSourceName } from '../rules.js';
import type { HeaderMap, IngestResponse, LoggerLike, PayloadRef } from '../types.js';
import { type ApiGatewayEvent, fromApiGatewayEvent } from './api-gateway.js';

/** The webhook secret(s): fixed, or a function giving the current list (rotation, SSM). */
export type WebhookSecret = string | readonly string[] | (() => Promise<readonly string[]>);

/** Options of {@link forgeWebhook}: the knobs of `readDelivery` from lib/webhooks. */
export interface ForgeWebhookOptions {
  /** Secret(s) the forge signs with; a function is called per delivery (cache inside it). Required. */
  secret: WebhookSecret | undefined;
  /** The forge's preset: header names, signature scheme, event mapping (docs/forges.md). Default `'generic'`. */
  forge?: Forge | undefined;
  /** Header names, over the preset's. Defaults (generic): `x-forge-event`, `x-forge-delivery`, `x-hub-signature-256`, `x-hub-signature`. */
  headers?: DeliveryHeaderNames | undefined;
  /** Accept a sha1 signature when it is the only one. Default `true`. */
  allowSha1?: boolean | undefined;
  /** Largest body accepted, in bytes. Default 25 MiB (Lambda itself stops at about 6 MB). */
  maxBodyBytes?: number | undefined;
  /** Standard Webhooks: seconds the timestamp may be off from now (401 beyond). Default 300. */
  toleranceSeconds?: number | undefined;
  /** GitLab: verify only the signing token's signature, or only the shared token. Default: either. */
  verifyWith?: 'signature' | 'token' | undefined;
}

/** What {@link forgeWebhook} puts at `event.webhook`: the verified delivery's id, names and source. */
export interface ForgeWebhook {
  /** The delivery id header (`X-Forge-Delivery`). */
  readonly id: string;
  /** The catalogue event name (`pull_request`), forge-neutral (`forge_app_authorization`). */
  readonly name: string;
  /** The catalogue action (`opened`), mapped from the forge's own; `undefined` when there is none. */
  readonly action?: string | undefined;
  /** The forge preset the delivery was read with. */
  readonly forge?: Forge | undefined;
  /** The event header's value as the forge sent it (`Merge Request Hook`). */
  readonly nativeName?: string | undefined;
  /** The forge's own action (`open`). */
  readonly nativeAction?: string | undefined;
  /** The source it came in through, set by {@link forgeWebhookSources}. */
  readonly source?: string | undefined;
  /** Which secret of the source's list verified it, by position (0 = the first); never the secret. */
  readonly secretIndex?: number | undefined;
}

/** One source of {@link forgeWebhookSources}: its name, forge preset and secret. */
export interface ForgeWebhookSource {
  /** The path segment of `/webhooks/{source}`; `default` is the source of `/webhooks`. */
  name: string;
  /** Secret(s) of this source; a function is called per delivery (cache inside it). Required. */
  secret: WebhookSecret | undefined;
  /** The forge's preset. Default `'generic'`. */
  forge?: Forge | undefined;
  /** Header names, over the preset's. */
  headers?: DeliveryHeaderNames | undefined;
  /** Standard Webhooks: this source's timestamp tolerance in seconds. Default 300. */
  toleranceSeconds?: number | undefined;
  /** GitLab: require the signing token's signature, or the shared token. Default: either. */
  verifyWith?: 'signature' | 'token' | undefined;
}

/** Options of {@link forgeWebhookSources}. */
export interface ForgeWebhookSourcesOptions {
  /** The sources, each with a unique name. */
  sources: readonly ForgeWebhookSource[];
  /** Accept a sha1 signature when it is the only one (every source). Default `true`. */
  allowSha1?: boolean | undefined;
  /** Largest body accepted, in bytes (every source). Default 25 MiB. */
  maxBodyBytes?: number | undefined;
}

/** What the ingest did with a delivery it answered 2xx, as it leaves it at `event.ingestOutcome` for the log. */
export interface IngestOutcome {
  status: 'published' | 'queued' | 'duplicate';
  /** The EventBridge event id, when published now. */
  eventId?: string | undefined;
  /** The claim-check object, when the body went to S3. */
  payloadRef?: PayloadRef | undefined;
}

/**
 * What a refused request said of itself, read from its headers (unverified), and for a failed signature the
 * diagnosis; {@link refusalOf} computes it on demand, so a refusal costs nothing more unless someone asks.
 */
export interface RefusalFacts {
  forge: Forge;
  /** The delivery id header, when present. */
  deliveryId?: string | undefined;
  /** The catalogue event name the headers (and body, when it is JSON) claim. */
  event?: string | undefined;
  action?: string | undefined;
  nativeEvent?: string | undefined;
  nativeAction?: string | undefined;
  /** `diagnoseSignature`'s finding for a signature refused or missing. */
  diagnosis?: SignatureDiagnosis | undefined;
}

const refusals = new WeakMap<object, () => RefusalFacts>();

/** The facts of a request `forgeWebhook` refused, computed now; `undefined` for any other error. */
export function refusalOf(error: unknown): RefusalFacts | undefined {
  const facts = typeof error === 'object' && error !== null ? refusals.get(error) : undefined;
  return facts?.();
}

/** Bodies up to this size are parsed to name a refused delivery's action; a larger one keeps only its event. */
const MAX_PARSED_REFUSAL_BYTES = 1024 * 1024;

function firstHeader(headers: HeaderMap, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first !== '') return first;
  }
  return undefined;
}

function describeRefusal(
  code: string,
  request: { headers: HeaderMap; body: Buffer },
  options: Omit<DeliveryOptions, 'secret'>,
  secrets: string | readonly string[],
): RefusalFacts {
  const preset = resolvePreset(options.forge);
  const headerNames = options.headers ?? {};
  const eventHeaders = headerNames.event ? [headerNames.event.toLowerCase()] : preset.eventHeaders;
  const deliveryHeaders = headerNames.delivery
    ? [headerNames.delivery.toLowerCase()]
    : preset.deliveryHeaders;
  const facts: RefusalFacts = {
    forge: preset.forge,
    deliveryId: firstHeader(request.headers, deliveryHeaders),
  };
  const nativeName = firstHeader(request.headers, eventHeaders);
  if (nativeName !== undefined) {
    let payload: unknown;
    if (request.body.byteLength <= MAX_PARSED_REFUSAL_BYTES) {
      try {
        payload = JSON.parse(request.body.toString('utf8'));
      } catch {
        payload = undefined;
      }
    }
    const route = routeForgeEvent(preset.forge, nativeName, payload);
    facts.event = route.name;
    facts.action = route.action;
    facts.nativeEvent = nativeName;
    facts.nativeAction = route.nativeAction;
  }
  // The diagnosis knows the preset's signature headers only: with renamed ones it would misread the request.
  const customSignatureHeaders =
    headerNames.signature256 !== undefined ||
    headerNames.signature !== undefined ||
    headerNames.token !== undefined;
  const signatureCodes: readonly string[] = [
    ErrorCodes.invalidSignature,
    ErrorCodes.missingHeader,
    ErrorCodes.invalidHeader,
    ErrorCodes.staleTimestamp,
    ErrorCodes.futureTimestamp,
  ];
  if (signatureCodes.includes(code) && !customSignatureHeaders) {
    try {
      const diagnosis = diagnoseSignature({
        body: request.body,
        headers: request.headers,
        secrets: typeof secrets === 'string' ? secrets : [...secrets],
        forge: preset.forge,
        allowSha1: options.allowSha1 ?? true,
        ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
        ...(options.verifyWith === undefined ? {} : { verifyWith: options.verifyWith }),
      });
      // A missing event or delivery header with a good signature is no signature matter.
      if (diagnosis.verdict !== 'verified') facts.diagnosis = diagnosis;
    } catch {
      // No diagnosis is better than a failed log record.
    }
  }
  return facts;
}

type WithBody<TEvent, TBody> = TEvent extends unknown ? Omit<TEvent, 'body'> & { body: TBody } : never;

/**
 * An API Gateway (1.0 or 2.0) or Function URL event after `forgeWebhook` and `@middy/http-json-body-parser`:
 * `body` is the parsed payload, `rawBody` the exact bytes that were verified.
 */
export type ForgeWebhookEvent<TBody = Record<string, unknown>> = WithBody<
  APIGatewayProxyEvent | APIGatewayProxyEventV2,
  TBody
> & {
  rawBody: Buffer;
  webhook: ForgeWebhook;
  /** Set by `createIngest` on a delivery it answered 2xx: what it did, for the delivery log. */
  ingestOutcome?: IngestOutcome | undefined;
};

/** Options of {@link webhookErrors}. */
export interface WebhookErrorsOptions {
  /** Where refused and failed deliveries are logged (status, code, delivery id; never a secret or the body). */
  logger?: LoggerLike | undefined;
}

const OPTION_KEYS = new Set([
  'secret',
  'forge',
  'headers',
  'allowSha1',
  'maxBodyBytes',
  'toleranceSeconds',
  'verifyWith',
]);
const PROBE = { method: 'GET', headers: {}, body: '' };
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/**
 * Middy middleware that verifies a forge webhook before anything parses it: method, content type, the event,
 * delivery and signature headers, body size, and the HMAC over the exact raw bytes (base64 decoded first),
 * with `readDelivery` from lib/webhooks. It then sets `event.rawBody` (a `Buffer`) and `event.webhook`
 * (`{ id, name }`) and lowercases `event.headers`, so `@middy/http-json-body-parser` can follow it. A refused
 * delivery throws an {@link IngestError} (400, 401, 404, 413, 415) for {@link webhookErrors} to answer.
 *
 * @throws TypeError on construction for a missing secret or an unknown or invalid option.
 * @example
 * ```ts
 * export const handler = middy()
 *   .use(forgeWebhook({ secret: process.env.WEBHOOK_SECRET }))
 *   .use(httpJsonBodyParser())
 *   .use(webhookErrors())
 *   .handler(async (event) => ({ statusCode: 202, body: event.webhook.id }));
 * ```
 */
export function forgeWebhook(options: ForgeWebhookOptions): MiddlewareObj<ForgeWebhookEvent<unknown>> {
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
  }
  const { secret } = options;
  if (secret === undefined) throw new TypeError('"secret" is required');
  const base: Omit<DeliveryOptions, 'secret'> = {};
  if (options.forge !== undefined) base.forge = options.forge;
  if (options.headers !== undefined) base.headers = options.headers;
  if (options.allowSha1 !== undefined) base.allowSha1 = options.allowSha1;
  if (options.maxBodyBytes !== undefined) base.maxBodyBytes = options.maxBodyBytes;
  if (options.toleranceSeconds !== undefined) base.toleranceSeconds = options.toleranceSeconds;
  if (options.verifyWith !== undefined) base.verifyWith = options.verifyWith;

  // readDelivery checks its options once per object: keep one object per secret list.
  let cached: { key: string; options: DeliveryOptions } | undefined;
  const optionsFor = (secrets: string | readonly string[]): DeliveryOptions => {
    const key = typeof secrets === 'string' ? secrets : secrets.join('\n');
    if (cached?.key !== key) cached = { key, options: { ...base, secret: secrets } };
    return cached.options;
  };
  // Fail fast: readDelivery checks the options before it looks at the request.
  readDelivery(PROBE, typeof secret === 'function' ? { ...base, secret: 'probe' } : optionsFor(secret));

  return {
    before: async (request) => {
      const event = request.event as unknown as ApiGatewayEvent & Partial<ForgeWebhookEvent<unknown>>;
      if (event.body !== undefined && event.body !== null && typeof event.body !== 'string') {
        // A parser ran first: the exact bytes the forge signed are gone.
        throw new TypeError('"event.body" is already parsed: use forgeWebhook before the body parser');
      }
      const secrets = typeof secret === 'function' ? await loadSecrets(secret) : secret;
      const http = fromApiGatewayEvent(event);
      const body = Buffer.from(http.body, http.isBase64Encoded === true ? 'base64' : 'utf8');
      const delivery: Parameters<typeof readDelivery>[0] = { headers: http.headers, body };
      if (http.method !== undefined) delivery.method = http.method;
      const result = readDelivery(delivery, optionsFor(secrets));
      if (!result.ok) {
        const error = new IngestError(result.status, result.code, result.message);
        const { code } = result;
        refusals.set(error, () => describeRefusal(code, { headers: http.headers, body }, base, secrets));
        throw error;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(event.headers ?? {})) {
        // An own property whatever the name: a header called `__proto__` must not become the map's prototype.
        if (typeof value === 'string') {
          Object.defineProperty(headers, name.toLowerCase(), {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
      }
      event.headers = headers;
      event.rawBody = result.rawBody;
      event.webhook = {
        id: result.id,
        name: result.name,
        action: result.action,
        forge: result.forge,
        nativeName: result.nativeName,
        nativeAction: result.nativeAction,
        secretIndex: result.secretIndex,
      };
    },
  };
}

// A Function URL has no route: its path is read the way the HTTP API route reads it.
const SOURCE_PATH = /^\/webhooks\/([^/]+)\/?$/;

/**
 * Middy middleware serving several webhook sources from one function: it picks the source from the route's
 * `{source}` path parameter (`/webhooks/{source}`; a Function URL's path is read the same way; `/webhooks` is
 * `default`), answers an unknown one 404 `unknown_source` before any secret is read, and then runs that
 * source's {@link forgeWebhook}. `event.webhook.source` names the source.
 *
 * @throws TypeError on construction for an invalid, repeated or misconfigured source.
 */
export function forgeWebhookSources(
  options: ForgeWebhookSourcesOptions,
): MiddlewareObj<ForgeWebhookEvent<unknown>> {
  if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
  if (!Array.isArray(options.sources) || options.sources.length === 0) {
    throw new TypeError('"sources" must be a non-empty array');
  }
  const bySource = new Map<string, MiddlewareObj<ForgeWebhookEvent<unknown>>>();
  for (const [index, source] of options.sources.entries()) {
    if (!isSourceName(source?.name)) {
      throw new TypeError(
        `"sources[${index}].name" must be 1 to 64 lowercase letters, digits or inner hyphens`,
      );
    }
    if (bySource.has(source.name)) throw new TypeError(`"sources[${index}].name" is repeated`);
    const webhookOptions: ForgeWebhookOptions = { secret: source.secret };
    if (source.forge !== undefined) webhookOptions.forge = source.forge;
    if (source.headers !== undefined) webhookOptions.headers = source.headers;
    if (source.toleranceSeconds !== undefined) webhookOptions.toleranceSeconds = source.toleranceSeconds;
    if (source.verifyWith !== undefined) webhookOptions.verifyWith = source.verifyWith;
    if (options.allowSha1 !== undefined) webhookOptions.allowSha1 = options.allowSha1;
    if (options.maxBodyBytes !== undefined) webhookOptions.maxBodyBytes = options.maxBodyBytes;
    bySource.set(source.name, forgeWebhook(webhookOptions));
  }
  return {
    before: async (request) => {
      const name = sourceOf(request.event as unknown as ApiGatewayEvent);
      const middleware = name === undefined ? undefined : bySource.get(name);
      if (name === undefined || middleware === undefined) {
        const shown = isSourceName(name) ? ` "${name}"` : '';
        throw new IngestError(404, AwsErrorCodes.unknownSource, `unknown webhook source${shown}`);
      }
      await middleware.before?.(request);
      const event = request.event;
      event.webhook = { ...event.webhook, source: name };
    },
  };
}

/**
 * The webhook source a request's path names, as {@link forgeWebhookSources} reads it, when it is a valid source
 * name (configured or not); `undefined` otherwise.
 */
export function requestSourceOf(event: unknown): string | undefined {
  const name = sourceOf(event as ApiGatewayEvent);
  return isSourceName(name) ? name : undefined;
}

/** The source named by the request's path: `undefined` when the path names something that is not a source. */
function sourceOf(event: ApiGatewayEvent): string | undefined {
  if (typeof event !== 'object' || event === null) return DEFAULT_SOURCE;
  const parameters: unknown = event.pathParameters;
  if (typeof parameters === 'object' && parameters !== null && Object.hasOwn(parameters, 'source')) {
    const value: unknown = (parameters as Record<string, unknown>).source;
    return typeof value === 'string' ? value : undefined;
  }
  const path: unknown = 'rawPath' in event ? event.rawPath : (event as { path?: unknown }).path;
  if (typeof path !== 'string') return DEFAULT_SOURCE;
  const match = SOURCE_PATH.exec(path);
  if (match === null) return DEFAULT_SOURCE;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return undefined;
  }
}

async function loadSecrets(load: () => Promise<readonly string[]>): Promise<readonly string[]> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof AwsBridgeError) throw error;
    throw new SecretsError(AwsErrorCodes.secretsUnavailable, 'webhook secrets could not be loaded', {
      cause: error,
    });
  }
}

/**
 * Middy middleware that answers every error of the chain as `{"error":{"code","message"}}` JSON: an
 * {@link IngestError} with its status and code; `@middy/http-json-body-parser`'s 422 as 400 `invalid_json`
 * (and its 415 as `unsupported_media_type`); anything else as 503 `service_unavailable` with a generic message.
 * Use it last, so it runs first on error.
 */
export function webhookErrors(options: WebhookErrorsOptions = {}): MiddlewareObj<ForgeWebhookEvent<unknown>> {
  const logger = options.logger;
  return {
    onError: (request) => {
      const { status, code, message } = answerFor(request.error);
      const webhook = (request.event as Partial<ForgeWebhookEvent<unknown>> | undefined)?.webhook;
      const fields = {
        status,
        code,
        ...(webhook === undefined ? {} : { delivery: webhook.id, event: webhook.name }),
      };
      if (status >= 500) {
        const cause = (request.error as { cause?: unknown } | null | undefined)?.cause;
        logger?.error('delivery failed', {
          ...fields,
          errorCode: errorCode(request.error),
          ...(cause === undefined ? {} : { causeCode: errorCode(cause) }),
          // A TypeError is a misconfiguration: its message names the option, never a secret.
          ...(request.error instanceof TypeError ? { message: request.error.message } : {}),
        });
      } else if (status === 409) {
        logger?.info('delivery in progress', fields);
      } else {
        logger?.warn('delivery rejected', fields);
      }
      const response: IngestResponse = {
        statusCode: status,
        headers: { ...JSON_HEADERS },
        body: JSON.stringify({ error: { code, message } }),
      };
      request.response = response;
    },
  };
}

const UNAVAILABLE = {
  status: 503,
  code: AwsErrorCodes.serviceUnavailable,
  message: 'delivery not accepted, retry later',
} as const;

function answerFor(error: unknown): { status: number; code: string; message: string } {
  const statusCode = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return UNAVAILABLE;
  if (error instanceof IngestError) return { status: statusCode, code: error.code, message: error.message };
  switch (statusCode) {
    case 422:
      return { status: 400, code: ErrorCodes.invalidJson, message: 'body is not valid JSON' };
    case 415:
      return {
        status: 415,
        code: ErrorCodes.unsupportedMediaType,
        message: 'content type is not supported, use "application/json"',
      };
    case 413:
      return { status: 413, code: ErrorCodes.payloadTooLarge, message: 'body is too large' };
    case 404:
      return { status: 404, code: ErrorCodes.notFound, message: 'not found' };
    default:
      return { status: statusCode, code: AwsErrorCodes.badRequest, message: 'request refused' };
  }
}
