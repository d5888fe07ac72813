import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { fromApiGatewayEvent, isPayloadV2 } from '../../../../lib/aws/ingest/api-gateway.js';

function v2(overrides: Partial<APIGatewayProxyEventV2> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks',
    rawPath: '/webhooks',
    rawQueryString: '',
    headers: { 'Content-Type': 'application/json', 'x-forge-event': 'push' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'example.com',
      domainPrefix: 'example',
      http: {
        method: 'POST',
        path: '/webhooks',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'forge',
      },
      requestId: 'r',
      routeKey: 'POST /webhooks',
      stage: '$default',
      time: '21/Nov/2026:12:00:00 +0000',
      timeEpoch: 0,
    },
    body: '{"ref":"main"}',
    isBase64Encoded: false,
    ...overrides,
  };
}

function v1(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    resource: '/webhooks',
    path: '/webhooks',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forge-Event': 'push' },
    multiValueHeaders: { 'Content-Type': ['application/json'], 'X-Forge-Event': ['push'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {} as APIGatewayProxyEvent['requestContext'],
    body: '{"ref":"main"}',
    isBase64Encoded: false,
    ...overrides,
  };
}

describe('isPayloadV2()', () => {
  it('tells payload 2.0 from 1.0', () => {
    expect(isPayloadV2(v2())).toBe(true);
    expect(isPayloadV2(v1())).toBe(false);
  });
});

describe('fromApiGatewayEvent()', () => {
  it('adapts an HTTP API / Function URL (2.0) event with lowercased headers', () => {
    expect(fromApiGatewayEvent(v2())).toEqual({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forge-event': 'push' },
      body: '{"ref":"main"}',
      isBase64Encoded: false,
    });
  });

  it('adapts a REST API (1.0) event, keeping repeated header values', () => {
    const request = fromApiGatewayEvent(
      v1({
        multiValueHeaders: {
          'X-Hub-Signature-256': ['sha256=a', 'sha256=b'],
          'Content-Type': ['application/json'],
        },
      }),
    );
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-forge-event']).toBe('push');
    expect(request.headers['x-hub-signature-256']).toEqual(['sha256=a', 'sha256=b']);
  });

  it('passes a base64 body through with its flag', () => {
    const request = fromApiGatewayEvent(v2({ body: 'e30=', isBase64Encoded: true }));
    expect(request).toMatchObject({ body: 'e30=', isBase64Encoded: true });
  });

  it('turns a missing body into an empty string', () => {
    expect(fromApiGatewayEvent(v1({ body: null })).body).toBe('');
    const { body: _omit, ...withoutBody } = v2();
    expect(fromApiGatewayEvent(withoutBody as APIGatewayProxyEventV2).body).toBe('');
  });

  it('rejects a non-object event with a TypeError', () => {
    expect(() => fromApiGatewayEvent(null as unknown as APIGatewayProxyEventV2)).toThrow(
      new TypeError('"event" must be an api gateway event'),
    );
  });
});
