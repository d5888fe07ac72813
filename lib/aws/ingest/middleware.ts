import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import { type DeliveryOptions, type Forge, readDelivery } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import { AwsBridgeError, IngestError, SecretsError } from '../errors.js';
import type { PayloadRef } from '../types.js';
import { type ApiGatewayEvent, fromApiGatewayEvent } from './api-gateway.js';
import { keepParsedBody } from './json-body.js';
import { describeRefusal, keepRefusal } from './refusal.js';

/** The webhook secret(s): fixed, or a function giving the current list (rotation, SSM). */
export type WebhookSecret = string | readonly string[] | (() => Promise<readonly string[]>);

/**
 * Options of {@link forgeWebhook}: `readDelivery`'s options from lib/webhooks, passed on as they are, with a secret
 * that may also be a function giving the current list (called per delivery: cache inside it). The secret is
 * required; the others default as `readDelivery`'s do (the `generic` preset, sha1 accepted, 25 MiB, 300 s).
 */
export type ForgeWebhookOptions = Omit<DeliveryOptions, 'secret'> & { secret: WebhookSecret | undefined };

/** What {@link forgeWebhook} puts at `event.webhook`: the verified delivery's id, names and source. */
export interface ForgeWebhook {
  /** The delivery id header (`X-Forge-Delivery`). */
  readonly id: string;
  /** The hook that sent it, where the forge names one (`X-GitHub-Hook-ID`). */
  readonly hook?: string | undefined;
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

/** What the ingest did with a delivery it answered 2xx, as it leaves it at `event.ingestOutcome` for the log. */
export interface IngestOutcome {
  status: 'published' | 'queued' | 'duplicate';
  /** The EventBridge event id, when published now. */
  eventId?: string | undefined;
  /** The claim-check object, when the body went to S3. */
  payloadRef?: PayloadRef | undefined;
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

const PROBE = { method: 'GET', headers: {}, body: '' };

/**
 * Middy middleware that verifies a forge webhook before anything parses it: method, content type, the event,
 * delivery and signature headers, body size, and the HMAC over the exact raw bytes (base64 decoded first),
 * with `readDelivery` from lib/webhooks. It then sets `event.rawBody` (a `Buffer`) and `event.webhook`
 * (`{ id, name }`) and lowercases `event.headers`, so `@middy/http-json-body-parser` can follow it. A refused
 * delivery throws an {@link IngestError} (400, 401, 404, 413, 415) for {@link webhookErrors} to answer.
 *
 * @throws TypeError on construction for a missing secret or an unknown or invalid option (`readDelivery`'s check).
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
  // The rest goes to readDelivery as it is: it refuses an unknown option or a bad value (the probe below).
  const { secret, ...base } = options;
  if (secret === undefined) throw new TypeError('"secret" is required');

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
      // Text as it came (the check makes the bytes from it and parses it as it is), bytes when base64.
      const body = http.isBase64Encoded === true ? Buffer.from(http.body, 'base64') : http.body;
      const delivery: Parameters<typeof readDelivery>[0] = { headers: http.headers, body };
      if (http.method !== undefined) delivery.method = http.method;
      const result = readDelivery(delivery, optionsFor(secrets));
      if (!result.ok) {
        const error = new IngestError(result.status, result.code, result.message);
        const { code } = result;
        keepRefusal(error, () => {
          const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
          return describeRefusal(code, { headers: http.headers, body: bytes }, base, secrets);
        });
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
      // The same text as the bytes read (no base64): the JSON body parser can take the parse as it is.
      if (http.isBase64Encoded !== true && typeof event.body === 'string') {
        keepParsedBody(event, event.body, result.payload);
      }
      event.webhook = {
        id: result.id,
        ...(result.hook === undefined ? {} : { hook: result.hook }),
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
