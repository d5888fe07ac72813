/**
 * The ingest's error answer: {@link webhookErrors} renders every error of the chain as
 * `{"error":{"code","message"}}` JSON with its status, and logs it.
 */
import type { MiddlewareObj } from '@middy/core';
import { ErrorCodes } from '../../webhooks/index.js';
import { AwsErrorCodes } from '../constants.js';
import { IngestError } from '../errors.js';
import { errorCode } from '../rules.js';
import type { IngestResponse, LoggerLike } from '../types.js';
import type { ForgeWebhookEvent } from './middleware.js';

/** Options of {@link webhookErrors}. */
export interface WebhookErrorsOptions {
  /** Where refused and failed deliveries are logged (status, code, delivery id; never a secret or the body). */
  logger?: LoggerLike | undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

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
