import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import type { HeaderMap, IngestRequest } from '../types.js';

/** A REST API (payload 1.0) or HTTP API / Function URL (payload 2.0) proxy event. */
export type ApiGatewayEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;

/** Whether an event uses payload format 2.0 (HTTP API, Lambda Function URL). */
export function isPayloadV2(event: ApiGatewayEvent): event is APIGatewayProxyEventV2 {
  return (event as { version?: unknown }).version === '2.0';
}

/**
 * Sets a header as an own property: a header named `__proto__` (a client can send one) must be a header, never
 * the map's prototype.
 */
function setHeader(target: HeaderMap, name: string, value: string | string[]): void {
  Object.defineProperty(target, name.toLowerCase(), {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lowerCaseHeaders(source: unknown, target: HeaderMap): void {
  if (!isRecord(source)) return;
  for (const [name, value] of Object.entries(source)) {
    if (typeof value === 'string') setHeader(target, name, value);
  }
}

/**
 * Reads an API Gateway REST (1.0) or HTTP API / Function URL (2.0) event: lowercased headers (1.0's
 * `multiValueHeaders` keep every value; a value that is not a string is dropped), the body as passed (base64 or
 * not; missing becomes `''`) and the method.
 *
 * @throws TypeError when `event` is not an object or its `body` is neither a string nor missing.
 */
export function fromApiGatewayEvent(event: ApiGatewayEvent): IngestRequest {
  if (typeof event !== 'object' || event === null)
    throw new TypeError('"event" must be an api gateway event');
  const body: unknown = event.body ?? '';
  if (typeof body !== 'string') throw new TypeError('"event.body" must be a string');
  const headers: HeaderMap = {};
  let method: unknown;
  lowerCaseHeaders(event.headers, headers);
  if (isPayloadV2(event)) {
    method = (event.requestContext as { http?: { method?: unknown } } | undefined)?.http?.method;
  } else {
    const multi: unknown = event.multiValueHeaders;
    if (isRecord(multi)) {
      for (const [name, values] of Object.entries(multi)) {
        if (!Array.isArray(values)) continue;
        const strings = values.filter((value): value is string => typeof value === 'string');
        if (strings.length > 1) setHeader(headers, name, strings);
      }
    }
    method = event.httpMethod;
  }
  const request: IngestRequest = { headers, body, isBase64Encoded: event.isBase64Encoded === true };
  if (typeof method === 'string' && method !== '') request.method = method;
  return request;
}
