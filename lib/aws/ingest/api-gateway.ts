import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import type { HeaderMap, IngestRequest } from '../types.js';

/**
 * A REST API (payload 1.0) or HTTP API / Function URL (payload 2.0) proxy event.
 *
 * @example
 * ```ts
 * const request = fromApiGatewayEvent(event as ApiGatewayEvent);
 * ```
 * @see https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 */
export type ApiGatewayEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;

/**
 * Whether an event uses payload format 2.0 (HTTP API, Lambda Function URL).
 *
 * @example
 * ```ts
 * isPayloadV2(event) ? event.requestContext.http.method : event.httpMethod;
 * ```
 * @see https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html#http-api-develop-integrations-lambda.proxy-format
 */
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
 * Turns an API Gateway REST (1.0) or HTTP API / Function URL (2.0) event into the ingest's request:
 * lowercased headers (1.0's `multiValueHeaders` keep every value), the body as passed (base64 or not) and
 * the method. A missing body becomes an empty string.
 *
 * @example
 * ```ts
 * const response = await handleDelivery(fromApiGatewayEvent(event), deps, config);
 * ```
 * @see https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-input-format
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
