// forgeWebhook + @middy/http-json-body-parser + webhookErrors, through a real Middy chain, with API Gateway
// 1.0 and 2.0 events signed by our own `sign()`.
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { describe, expect, it } from 'vitest';
import {
  type ForgeWebhookEvent,
  type ForgeWebhookOptions,
  forgeWebhook,
  IngestError,
  webhookErrors,
} from '../../../../lib/aws/index.js';
import { sign } from '../../../../lib/webhooks/index.js';
import { invoke, payload, recordingLogger, SECRET, v1Event, v2Event } from './events.js';

function chain(options: Partial<ForgeWebhookOptions> = {}, run?: (event: ForgeWebhookEvent) => unknown) {
  const seen: ForgeWebhookEvent[] = [];
  const logger = recordingLogger();
  const handler = middy(async (event: ForgeWebhookEvent) => {
    seen.push(event);
    if (run !== undefined) return run(event);
    return { statusCode: 202, body: JSON.stringify({ delivery: event.webhook.id }) };
  })
    .use(forgeWebhook({ secret: SECRET, ...options }))
    .use(httpJsonBodyParser())
    .use(webhookErrors({ logger }));
  return { handler, seen, logger };
}

function errorOf(answer: { body: string }) {
  return JSON.parse(answer.body).error as { code: string; message: string };
}

describe('forgeWebhook()', () => {
  it('verifies a payload 2.0 delivery, then the parser gives the payload, the raw bytes and the webhook', async () => {
    const { handler, seen } = chain();
    const event = v2Event();
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(202);
    expect(seen[0]?.webhook).toEqual({
      id: 'delivery-1',
      name: 'issues',
      action: 'opened',
      forge: 'generic',
      nativeName: 'issues',
      nativeAction: 'opened',
      secretIndex: 0,
    });
    expect(seen[0]?.body).toEqual(payload);
    expect(seen[0]?.rawBody).toEqual(Buffer.from(JSON.stringify(payload)));
  });

  it('verifies a REST API (1.0) event with a base64 body over the decoded bytes, and lowercases its headers', async () => {
    const { handler, seen } = chain();
    const event = v1Event({ base64: true });
    expect(Object.keys(event.headers)).toContain('Content-Type');
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(202);
    expect(seen[0]?.body).toEqual(payload);
    expect(seen[0]?.rawBody.toString('utf8')).toBe(JSON.stringify(payload));
    expect(seen[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'x-forge-event': 'issues' });
  });

  it('keeps bytes that JSON would not round-trip (spacing, escapes) exactly as signed', async () => {
    const body = '{ "action" : "opened", "title": "caf\\u00e9 ☕"  }';
    const { handler, seen } = chain();
    const answer = await invoke(handler, v2Event({ body }));
    expect(answer.statusCode).toBe(202);
    expect(seen[0]?.rawBody.toString('utf8')).toBe(body);
    expect(seen[0]?.body).toEqual({ action: 'opened', title: 'café ☕' });
  });

  it('rejects a base64 body whose signature was made over the base64 text', async () => {
    const body = JSON.stringify(payload);
    const base64 = Buffer.from(body).toString('base64');
    const { handler, seen } = chain();
    const answer = await invoke(handler, {
      ...v2Event({ base64: true }),
      headers: v2Event({ body: base64 }).headers,
    });
    expect(answer.statusCode).toBe(401);
    expect(seen).toHaveLength(0);
  });

  it('answers 401 invalid_signature for a wrong secret, without the secret or the signature anywhere', async () => {
    const { handler, seen, logger } = chain();
    const event = v2Event({ secret: 'not-the-secret' });
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(401);
    expect(answer.headers).toEqual({ 'content-type': 'application/json' });
    expect(errorOf(answer)).toEqual({
      code: 'invalid_signature',
      message: 'signature does not match the body',
    });
    expect(seen).toHaveLength(0);
    const everything = JSON.stringify([answer, logger.lines]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(event.headers['x-hub-signature-256']);
    expect(logger.lines).toEqual([
      { level: 'warn', message: 'delivery rejected', fields: [{ status: 401, code: 'invalid_signature' }] },
    ]);
  });

  it('accepts any of several secrets (rotation), and a function giving them', async () => {
    const old = () => v2Event({ secret: 'old-secret' });
    expect((await invoke(chain({ secret: ['new-secret', 'old-secret'] }).handler, old())).statusCode).toBe(
      202,
    );
    let calls = 0;
    const fromStore = chain({
      secret: async () => {
        calls += 1;
        return ['new-secret', 'old-secret'];
      },
    });
    expect((await invoke(fromStore.handler, old())).statusCode).toBe(202);
    expect((await invoke(fromStore.handler, v2Event({ secret: 'other' }))).statusCode).toBe(401);
    expect(calls).toBe(2);
  });

  it('answers 400 missing_header without a delivery id, an event name or a signature', async () => {
    const { handler } = chain();
    const noId = await invoke(handler, v2Event({ id: undefined }));
    expect(noId.statusCode).toBe(400);
    expect(errorOf(noId)).toEqual({ code: 'missing_header', message: 'missing "x-forge-delivery" header' });
    const event = v2Event();
    delete event.headers['x-hub-signature-256'];
    expect(errorOf(await invoke(handler, event)).code).toBe('missing_header');
  });

  it('answers 415 for a non-JSON content type, 404 for another method and 413 over maxBodyBytes', async () => {
    const { handler } = chain({ maxBodyBytes: 16 });
    const form = await invoke(
      handler,
      v2Event({ headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    );
    expect(form.statusCode).toBe(415);
    expect(errorOf(form).code).toBe('unsupported_media_type');
    const get = await invoke(handler, v2Event({ method: 'GET' }));
    expect(get.statusCode).toBe(404);
    expect(errorOf(get).code).toBe('not_found');
    const large = await invoke(handler, v2Event());
    expect(large.statusCode).toBe(413);
    expect(errorOf(large)).toEqual({
      code: 'payload_too_large',
      message: 'body is larger than the limit of 16 bytes',
    });
  });

  it('reads the header names of a real forge, and refuses sha1 when allowSha1 is off', async () => {
    const body = JSON.stringify(payload);
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': 'gh-1',
      'x-hub-signature': sign(SECRET, body, { algorithm: 'sha1' }),
    };
    const github = chain({ headers: { event: 'x-github-event', delivery: 'x-github-delivery' } });
    const event = () => ({ ...v2Event(), headers: { ...headers } });
    expect((await invoke(github.handler, event())).statusCode).toBe(202);
    expect(github.seen[0]?.webhook).toMatchObject({ id: 'gh-1', name: 'issues', forge: 'generic' });
    const strict = chain({
      headers: { event: 'x-github-event', delivery: 'x-github-delivery' },
      allowSha1: false,
    });
    const refused = await invoke(strict.handler, event());
    expect(refused.statusCode).toBe(400);
    expect(errorOf(refused).message).toContain('sha1 signatures are disabled');
  });

  it('answers 400 invalid_json for a signed body that is not a JSON object, never 422 or 5xx', async () => {
    const { handler, seen } = chain();
    for (const body of ['{"action":', '[1,2]', 'null', '"text"']) {
      const answer = await invoke(handler, v2Event({ body }));
      expect(answer.statusCode).toBe(400);
      expect(errorOf(answer).code).toBe('invalid_json');
    }
    expect(seen).toHaveLength(0);
  });

  it('keeps a header named "__proto__" (any case) as a plain header, never as the header map\'s prototype', async () => {
    const { handler, seen } = chain();
    const event = v2Event();
    // An event built by code other than API Gateway: JSON.parse makes "__proto__" an own key holding an object.
    const hostile = JSON.parse('{"__PROTO__":"x","__proto__":{"x-forge-event":"push"}}') as Record<
      string,
      string
    >;
    event.headers = Object.assign(hostile, event.headers);
    expect(Object.hasOwn(event.headers, '__proto__')).toBe(true);
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(202);
    const seenHeaders = seen[0]?.headers as Record<string, unknown>;
    expect(Object.getPrototypeOf(seenHeaders)).toBe(Object.prototype);
    expect(Object.hasOwn(seenHeaders, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(seenHeaders, '__proto__')?.value).toBe('x');
    expect(seenHeaders['x-forge-event']).toBe('issues');
  });

  it('answers 400 invalid_json when the JSON parser refuses a "__proto__" key of a signed body', async () => {
    const { handler, seen } = chain();
    const answer = await invoke(handler, v2Event({ body: '{"inputs":{"__proto__":{"x":1}}}' }));
    expect(answer.statusCode).toBe(400);
    expect(errorOf(answer)).toEqual({ code: 'invalid_json', message: 'body is not valid JSON' });
    expect(seen).toHaveLength(0);
  });

  it('answers 503 with a generic message when the secrets cannot be loaded, logging only a code', async () => {
    const { handler, logger } = chain({
      secret: async () => {
        throw new Error(`ssm said no for ${SECRET}`);
      },
    });
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(503);
    expect(errorOf(answer)).toEqual({
      code: 'service_unavailable',
      message: 'delivery not accepted, retry later',
    });
    expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
    expect(logger.lines[0]).toMatchObject({
      level: 'error',
      message: 'delivery failed',
      fields: [{ status: 503, errorCode: 'secrets_unavailable', causeCode: 'Error' }],
    });
  });

  it('answers 503 when the secret function gives an empty list (a misconfiguration), naming the option in the log', async () => {
    const { handler, logger } = chain({ secret: async () => [] });
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(503);
    expect(logger.lines[0]?.fields[0]).toMatchObject({
      errorCode: 'TypeError',
      message: expect.stringContaining('"secret"'),
    });
  });

  it('answers 503 and names the mistake when a parser ran before it (the signed bytes are gone)', async () => {
    const logger = recordingLogger();
    const handler = middy(async () => ({ statusCode: 202, body: '' }))
      .use(httpJsonBodyParser())
      .use(forgeWebhook({ secret: SECRET }))
      .use(webhookErrors({ logger }));
    expect((await invoke(handler, v2Event())).statusCode).toBe(503);
    expect(logger.lines[0]?.fields[0]).toMatchObject({
      message: '"event.body" is already parsed: use forgeWebhook before the body parser',
    });
  });

  it('throws a TypeError on construction for a missing secret, an unknown option or a bad value', () => {
    expect(() => forgeWebhook({ secret: undefined })).toThrow(new TypeError('"secret" is required'));
    expect(() => forgeWebhook({ secret: 's', timeout: 1 } as never)).toThrow(
      new TypeError('unknown option "timeout"'),
    );
    expect(() => forgeWebhook({ secret: 's', maxBodyBytes: 0 })).toThrow(TypeError);
    expect(() => forgeWebhook({ secret: async () => ['s'], headers: { event: '' } })).toThrow(
      new TypeError('"headers.event" must be a non-empty string'),
    );
    expect(() => forgeWebhook(null as never)).toThrow(new TypeError('"options" must be an object'));
  });
});

describe('webhookErrors()', () => {
  it('renders an IngestError with its status and code, and a 409 as info', async () => {
    const { handler, logger } = chain({}, () => {
      throw new IngestError(409, 'in_progress', 'delivery is being processed, retry later');
    });
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(409);
    expect(errorOf(answer)).toEqual({
      code: 'in_progress',
      message: 'delivery is being processed, retry later',
    });
    expect(logger.lines).toEqual([
      {
        level: 'info',
        message: 'delivery in progress',
        fields: [{ status: 409, code: 'in_progress', delivery: 'delivery-1', event: 'issues' }],
      },
    ]);
  });

  it('hides the details of any other error behind a 503', async () => {
    const { handler, logger } = chain({}, () => {
      throw Object.assign(new Error(`token ${SECRET} leaked`), { code: 'Boom' });
    });
    const answer = await invoke(handler, v2Event());
    expect(answer.statusCode).toBe(503);
    expect(answer.body).not.toContain(SECRET);
    expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
    expect(logger.lines[0]?.fields[0]).toMatchObject({ errorCode: 'Boom', delivery: 'delivery-1' });
  });

  it('maps the JSON parser’s own 415 and 422 when it runs without forgeWebhook, and other 4xx as they are', async () => {
    const bare = (thrown?: unknown) =>
      middy(async () => {
        if (thrown !== undefined) throw thrown;
        return { statusCode: 204, body: '' };
      })
        .use(httpJsonBodyParser())
        .use(webhookErrors());
    const text = await invoke(bare(), { headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(text.statusCode).toBe(415);
    expect(errorOf(text)).toEqual({
      code: 'unsupported_media_type',
      message: 'content type is not supported, use "application/json"',
    });
    const broken = await invoke(bare(), { headers: { 'content-type': 'application/json' }, body: '{' });
    expect(broken.statusCode).toBe(400);
    expect(errorOf(broken)).toEqual({ code: 'invalid_json', message: 'body is not valid JSON' });
    const ok = () => ({ headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await invoke(bare(Object.assign(new Error('x'), { statusCode: 413 })), ok())).toMatchObject({
      statusCode: 413,
      body: JSON.stringify({ error: { code: 'payload_too_large', message: 'body is too large' } }),
    });
    expect(errorOf(await invoke(bare(Object.assign(new Error('x'), { statusCode: 404 })), ok())).code).toBe(
      'not_found',
    );
    const teapot = await invoke(bare(Object.assign(new Error('x'), { statusCode: 418 })), ok());
    expect(teapot.statusCode).toBe(418);
    expect(errorOf(teapot)).toEqual({ code: 'bad_request', message: 'request refused' });
    expect((await invoke(bare('a string'), ok())).statusCode).toBe(503);
  });
});
