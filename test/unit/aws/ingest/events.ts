// API Gateway events for the ingest's unit tests, with bodies signed by our own `sign()`.
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { sign } from '../../../../lib/webhooks/index.js';

export const SECRET = 'unit-test-secret';

export const payload = { action: 'opened', issue: { number: 1 }, repository: { full_name: 'octo/hello' } };

export interface EventOptions {
  body?: string;
  id?: string | undefined;
  event?: string;
  secret?: string;
  signature?: string;
  base64?: boolean;
  method?: string;
  headers?: Record<string, string>;
}

function parts(options: EventOptions) {
  const body = options.body ?? JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-forge-event': options.event ?? 'issues',
    'x-hub-signature-256': options.signature ?? sign(options.secret ?? SECRET, body),
  };
  if (options.id !== undefined || !('id' in options))
    headers['x-forge-delivery'] = options.id ?? 'delivery-1';
  Object.assign(headers, options.headers);
  const sent = options.base64 === true ? Buffer.from(body, 'utf8').toString('base64') : body;
  return { body: sent, headers, isBase64Encoded: options.base64 === true };
}

/** An HTTP API / Function URL (payload 2.0) event. */
export function v2Event(options: EventOptions = {}): APIGatewayProxyEventV2 {
  const { body, headers, isBase64Encoded } = parts(options);
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers,
    requestContext: {
      http: { method: options.method ?? 'POST', path: '/webhooks' },
    } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded,
  };
}

/** A REST API (payload 1.0) event; header names as a client might send them (mixed case). */
export function v1Event(options: EventOptions = {}): APIGatewayProxyEvent {
  const { body, headers, isBase64Encoded } = parts(options);
  const mixed: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    mixed[name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())] =
      value;
  }
  return {
    resource: '/webhooks',
    path: '/webhooks',
    httpMethod: options.method ?? 'POST',
    headers: mixed,
    multiValueHeaders: Object.fromEntries(Object.entries(mixed).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
    body,
    isBase64Encoded,
  };
}

/** A Lambda context with `remainingMs` left. */
export function lambdaContext(remainingMs = 10_000): Context {
  return {
    functionName: 'forgebridge-test-ingest',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:forgebridge-test-ingest',
    memoryLimitInMB: '512',
    awsRequestId: 'request-1',
    logGroupName: '/aws/lambda/forgebridge-test-ingest',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
  } as unknown as Context;
}

/** A logger that keeps every line, to assert on what was (and was not) logged. */
export function recordingLogger() {
  const lines: { level: string; message: string; fields: unknown[] }[] = [];
  const at =
    (level: string) =>
    (message: string, ...fields: unknown[]) => {
      lines.push({ level, message, fields });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

export interface Answer {
  statusCode: number;
  headers?: Record<string, string>;
  body: string;
}

/** Invokes a Middy handler with any event (the chain's own types require the fields it adds). */
export function invoke(
  handler: (event: never, context: Context) => Promise<unknown>,
  event: unknown,
  context: Context = lambdaContext(),
): Promise<Answer> {
  return handler(event as never, context) as Promise<Answer>;
}
