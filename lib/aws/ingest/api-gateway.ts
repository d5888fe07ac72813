import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import type { HeaderMap, IngestRequest } from '../types.js';

/** A REST API (payload 1.0) or HTTP API / Function URL (payload 2.0) proxy event. */
export type ApiGatewayEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;

/** Whether an event uses payload format 2.0 (HTTP API, Lambda Function URL). */
export function isPayloadV2(event: ApiGatewayEvent): event is APIGatewayProxyEventV2 {
  return (event as { version?: unknown }).version === '2.0';
}

function lowerCaseHeaders(
  source: Record<string, string | undefined> | null | undefined,
  target: HeaderMap,
): void {
  for (const [name, value] of Object.entries(source ?? {})) {
    if (value !== undefined) target[name.toLowerCase()] = value;
  }
}

/**
 * Reads an API Gateway REST (1.0) or HTTP API / Function URL (2.0) event: lowercased headers (1.0's
 * `multiValueHeaders` keep every value), the body as passed (base64 or not; missing becomes `''`) and the method.
 */
export function fromApiGatewayEvent(event: ApiGatewayEvent): IngestRequest {
  if (typeof event !== 'object' || event === null)
    throw new TypeError('"event" must be an api gateway event');
  const headers: HeaderMap = {};
  let method: string | undefined;
  if (isPayloadV2(event)) {
    lowerCaseHeaders(event.headers, headers);
    method = event.requestContext?.http?.method;
  } else {
    lowerCaseHeaders(event.headers, headers);
    for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
      if (values !== undefined && values.length > 1) headers[name.toLowerCase()] = [...values];
    }
    method = event.httpMethod;
  }
  const request: IngestRequest = {
    headers,
    body: event.body ?? '',
    isBase64Encoded: event.isBase64Encoded === true,
  };
  if (typeof method === 'string' && method !== '') request.method = method;
  return request;
}
