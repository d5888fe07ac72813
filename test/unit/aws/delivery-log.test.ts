// The delivery log with DynamoDB mocked (aws-sdk-client-mock on the DocumentClient): one write per record, masked
// headers for every forge preset, bounded items, never a throw out of record(), and the subscriber report helper.
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DeliveryLog,
  type DeliveryLogEntry,
  isMaskedHeader,
  maskHeaders,
  SIGNATURE_HEADERS,
  withDeliveryReport,
} from '../../../lib/aws/delivery-log/index.js';
import { SubscriberTimeoutError } from '../../../lib/aws/errors.js';
import { Forges, resolvePreset } from '../../../lib/webhooks/index.js';

const documents = mockClient(DynamoDBDocumentClient);
const client = new DynamoDBClient({
  region: 'us-east-1',
  credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
});

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

function recordingLogger() {
  const lines: { message: string; extra: unknown[] }[] = [];
  return { lines, warn: (message: string, ...extra: unknown[]) => lines.push({ message, extra }) };
}

const entry = (overrides: Partial<DeliveryLogEntry> = {}): DeliveryLogEntry => ({
  receivedAt: Date.parse('2024-05-01T10:00:00.000Z'),
  deliveryId: 'd-1',
  event: 'issues',
  action: 'opened',
  forge: 'github',
  source: 'default',
  verdict: 'verified',
  httpStatus: 202,
  outcome: 'published',
  eventId: 'event-1',
  headers: { 'X-GitHub-Event': 'issues', 'X-Hub-Signature-256': 'sha256=0123abcd' },
  body: '{"action":"opened"}',
  ...overrides,
});

function putItem(): Record<string, unknown> {
  const calls = documents.commandCalls(PutCommand);
  expect(calls).toHaveLength(1);
  return calls[0]?.args[0].input.Item as Record<string, unknown>;
}

beforeEach(() => {
  documents.reset();
});

describe('maskHeaders', () => {
  it('masks every signature and token header of every forge preset, in any case, keeping only a scheme prefix', () => {
    const presetHeaders = Forges.flatMap((forge) => resolvePreset(forge).signatures.map((s) => s.header));
    expect(presetHeaders.length).toBeGreaterThan(0);
    for (const header of presetHeaders) {
      expect(SIGNATURE_HEADERS.has(header)).toBe(true);
      const secretish = 'f00dfacecafe1234deadbeef';
      for (const name of [header, header.toUpperCase()]) {
        for (const value of [`sha256=${secretish}`, `sha1=${secretish}`, secretish, [secretish, secretish]]) {
          const masked = maskHeaders({ [name]: value });
          const shown = masked[header];
          expect(shown).toBeDefined();
          expect(shown).not.toContain(secretish);
          expect(shown).toContain('[masked]');
        }
      }
      expect(maskHeaders({ [header]: 'sha256=abc' })[header]).toBe('sha256=[masked]');
      expect(maskHeaders({ [header]: 'sha1=abc' })[header]).toBe('sha1=[masked]');
      expect(maskHeaders({ [header]: 'abc' })[header]).toBe('[masked]');
    }
    // the presets' headers named explicitly, so a preset dropping one is noticed
    for (const header of [
      'x-hub-signature-256',
      'x-hub-signature',
      'x-gitea-signature',
      'x-forgejo-signature',
      'x-gitlab-token',
    ]) {
      expect(isMaskedHeader(header)).toBe(true);
    }
  });

  it('masks credentials that are no signature and keeps the other headers, lowercased', () => {
    const masked = maskHeaders({
      Authorization: 'Bearer abc.def.ghi',
      Cookie: 'session=1',
      'X-Api-Key': 'k',
      'X-Custom-Secret': 's',
      'X-GitHub-Event': 'issues',
      'Content-Type': ['application/json', 'charset=utf-8'],
      'X-Missing': undefined,
    });
    expect(masked).toEqual({
      authorization: '[masked]',
      cookie: '[masked]',
      'x-api-key': '[masked]',
      'x-custom-secret': '[masked]',
      'x-github-event': 'issues',
      'content-type': 'application/json, charset=utf-8',
    });
  });

  it("masks every header not known to be harmless for the preset: a forge user's own headers hold keys under any name", () => {
    const custom = {
      'X-Webhook-Key': 'k3y-value',
      'X-Hmac': 'hm4c-value',
      'X-Jwt': 'eyJ.jwt.value',
      'Cf-Access-Jwt-Assertion': 'eyJ.cf.value',
      'X-Shared-Key': 'sh4red-value',
      'X-Anything': 'whatever-value',
    };
    const gitlab = maskHeaders(
      {
        ...custom,
        'X-Gitlab-Event': 'Push Hook',
        'X-Gitlab-Event-UUID': 'uuid-1',
        'Idempotency-Key': 'key-1',
        'X-Gitlab-Instance': 'https://gitlab.example.com',
        'User-Agent': 'GitLab/17.6.0',
        'Content-Type': 'application/json',
      },
      'gitlab',
    );
    for (const name of Object.keys(custom)) expect(gitlab[name.toLowerCase()], name).toBe('[masked]');
    expect(JSON.stringify(gitlab)).not.toMatch(/value/);
    expect(gitlab).toMatchObject({
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-event-uuid': 'uuid-1',
      'idempotency-key': 'key-1',
      'x-gitlab-instance': 'https://gitlab.example.com',
      'user-agent': 'GitLab/17.6.0',
      'content-type': 'application/json',
    });
    // Harmless for one forge is not harmless for another.
    expect(maskHeaders({ 'X-Gitlab-Instance': 'x' }, 'github')['x-gitlab-instance']).toBe('[masked]');
    expect(maskHeaders({ 'X-GitHub-Hook-ID': '7', 'X-GitHub-Delivery': 'd' }, 'github')).toEqual({
      'x-github-hook-id': '7',
      'x-github-delivery': 'd',
    });
    expect(maskHeaders({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000' }, 'standard')).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
    });
  });

  it('bounds values and the number of headers', () => {
    const many = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`x-h-${String(i).padStart(3, '0')}`, 'v']),
    );
    expect(Object.keys(maskHeaders(many))).toHaveLength(100);
    const long = maskHeaders({ 'user-agent': 'y'.repeat(5000) })['user-agent'];
    expect(long?.length).toBe(1025);
    expect(maskHeaders(undefined)).toEqual({});
  });
});

describe('DeliveryLog.record', () => {
  it('writes exactly one PutItem with the summary, masked headers, index keys and the TTL; no body by default', async () => {
    documents.onAnyCommand().resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    const result = await log.record(
      entry({ payloadRef: { bucket: 'b', key: 'k', bytes: 19, sha256: 'ab' } }),
    );
    expect(result.ok).toBe(true);
    expect(documents.calls()).toHaveLength(1);
    const item = putItem();
    expect(documents.commandCalls(PutCommand)[0]?.args[0].input.TableName).toBe('deliveries');
    const recordId = result.ok ? result.recordId : '';
    expect(item).toMatchObject({
      pk: 'delivery#d-1',
      sk: `record#2024-05-01T10:00:00.000Z#${recordId}`,
      at: `2024-05-01T10:00:00.000Z#${recordId}`,
      recordId,
      deliveryId: 'd-1',
      receivedAt: Date.parse('2024-05-01T10:00:00.000Z'),
      event: 'issues',
      action: 'opened',
      forge: 'github',
      source: 'default',
      bodyBytes: 19,
      verdict: 'verified',
      httpStatus: 202,
      outcome: 'published',
      eventId: 'event-1',
      payloadRef: { bucket: 'b', key: 'k', bytes: 19, sha256: 'ab' },
      headers: { 'x-github-event': 'issues', 'x-hub-signature-256': 'sha256=[masked]' },
      payloadOmitted: 'disabled',
      expiresAt: Date.parse('2024-05-01T10:00:00.000Z') / 1000 + 14 * 24 * 3600,
    });
    expect(item.day).toMatch(/^2024-05-01#[0-3]$/);
    expect(item).not.toHaveProperty('body');
    expect(JSON.stringify(item)).not.toContain('0123abcd');
  });

  it("keeps the forge's headers, not the ones the front door added, and stays within one write unit", async () => {
    documents.onAnyCommand().resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    const headers = {
      Accept: '*/*',
      'Content-Length': '19',
      'Content-Type': 'application/json',
      'User-Agent': 'GitHub-Hookshot/7f3c1d2',
      'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'X-GitHub-Event': 'issues',
      'X-GitHub-Hook-ID': '292430182',
      'X-GitHub-Hook-Installation-Target-ID': '79929171',
      'X-GitHub-Hook-Installation-Target-Type': 'repository',
      'X-Hub-Signature': 'sha1=0123abcd',
      'X-Hub-Signature-256': 'sha256=0123abcd',
      host: 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws',
      via: '2.0 cloudfront',
      'x-amz-cf-id': 'abc',
      'x-amzn-tls-cipher-suite': 'TLS_AES_128_GCM_SHA256',
      'x-amzn-tls-version': 'TLSv1.3',
      'x-amzn-trace-id': 'Root=1-67891233-abcdef012345678912345678',
      'x-forwarded-for': '140.82.115.1',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
    };
    await log.record(
      entry({
        deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        eventId: '21097003-2924-4245-98b4-24cadbfbcfaa',
        headers,
        nativeEvent: 'issues',
        nativeAction: 'opened',
      }),
    );
    const item = putItem();
    expect(Object.keys(item.headers as object).sort()).toEqual([
      'accept',
      'content-type',
      'user-agent',
      'x-forwarded-for',
      'x-github-delivery',
      'x-github-event',
      'x-github-hook-id',
      'x-github-hook-installation-target-id',
      'x-github-hook-installation-target-type',
      'x-hub-signature',
      'x-hub-signature-256',
    ]);
    expect(item).not.toHaveProperty('headersTruncated');
    // A write unit is 1 KB: the item's names and values, as DynamoDB counts them, fit with room to spare.
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(1024);
  });

  it('keeps the body with storePayload, omits one over payloadMaxBytes with a flag, and honours ttlSeconds', async () => {
    documents.onAnyCommand().resolves({});
    const log = new DeliveryLog({
      client,
      tableName: 'deliveries',
      storePayload: true,
      payloadMaxBytes: 100,
      ttlSeconds: 60,
    });
    expect(log.storesPayload).toBe(true);
    await log.record(entry());
    const stored = putItem();
    expect(Buffer.from(stored.body as Uint8Array).toString('utf8')).toBe('{"action":"opened"}');
    expect(stored.payloadOmitted).toBeUndefined();
    expect(stored.expiresAt).toBe(Date.parse('2024-05-01T10:00:00.000Z') / 1000 + 60);
    documents.resetHistory();
    await log.record(entry({ body: new Uint8Array(101) }));
    const large = putItem();
    expect(large).not.toHaveProperty('body');
    expect(large).toMatchObject({ payloadOmitted: 'too_large', bodyBytes: 101 });
  });

  it('keeps a rejected request without a usable delivery id under its own key, with a safe reason', async () => {
    documents.onAnyCommand().resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    const result = await log.record({
      deliveryId: 'bad id\n',
      verdict: 'bad_signature',
      reason: `no configured secret matches\u0000${'x'.repeat(400)}`,
      httpStatus: 401,
      outcome: 'rejected',
      errorCode: 'invalid_signature',
    });
    expect(result.ok).toBe(true);
    const item = putItem();
    expect(item.pk).toBe(`request#${result.ok ? result.recordId : ''}`);
    expect(item.deliveryIdInvalid).toBe(true);
    expect(item).not.toHaveProperty('deliveryId');
    expect(item.reason).toMatch(/^no configured secret matches /);
    expect(String(item.reason)).toHaveLength(256);
    expect(item.payloadOmitted).toBe('absent');
  });

  it('keys a delivery of another source apart from the default one', async () => {
    documents.onAnyCommand().resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    await log.record(entry({ source: 'gitlab-main' }));
    expect(putItem().pk).toBe('delivery#source#gitlab-main#d-1');
  });

  it('never throws: a failed write or a bad entry resolves ok: false and logs the code only', async () => {
    documents
      .on(PutCommand)
      .rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
    const logger = recordingLogger();
    const log = new DeliveryLog({ client, tableName: 'deliveries', logger });
    const failed = await log.record(entry());
    expect(failed.ok).toBe(false);
    expect(logger.lines).toEqual([
      {
        message: 'delivery log write failed',
        extra: [{ code: 'ProvisionedThroughputExceededException', delivery: 'd-1' }],
      },
    ]);
    const invalid = await log.record({ ...entry(), verdict: 'nope' as never });
    expect(invalid).toMatchObject({ ok: false });
    expect(String((invalid as { error: Error }).error.message)).toContain('"verdict" must be one of');
    await expect(log.record(null as never)).resolves.toMatchObject({ ok: false });
    await expect(log.record({ ...entry(), httpStatus: 42 })).resolves.toMatchObject({ ok: false });
    await expect(log.record({ ...entry(), outcome: 'lost' as never })).resolves.toMatchObject({ ok: false });
    await expect(log.record({ ...entry(), receivedAt: Number.NaN })).resolves.toMatchObject({ ok: false });
    // one write attempt only (the failed one); the bad entries never reached DynamoDB
    expect(documents.commandCalls(PutCommand)).toHaveLength(1);
    const throwingLogger = {
      warn: () => {
        throw new Error('logger down');
      },
    };
    const quiet = new DeliveryLog({ client, tableName: 'deliveries', logger: throwingLogger });
    await expect(quiet.record(entry())).resolves.toMatchObject({ ok: false });
  });

  it('validates its options with clear errors', () => {
    expect(() => new DeliveryLog({} as never)).toThrow('"client" is required');
    expect(() => new DeliveryLog({ client } as never)).toThrow('"tableName" is required');
    expect(() => new DeliveryLog({ client, tableName: 't', ttlSeconds: 0 })).toThrow(
      '"ttlSeconds" must be a positive number',
    );
    expect(() => new DeliveryLog({ client, tableName: 't', payloadMaxBytes: 400 * 1024 })).toThrow(
      '"payloadMaxBytes" must be a number from 1 to 358400',
    );
    expect(() => new DeliveryLog({ client, tableName: 't', indexShards: 1.5 })).toThrow('"indexShards"');
    expect(() => new DeliveryLog({ client, tableName: 't', indexShards: 65 })).toThrow('"indexShards"');
    expect(() => new DeliveryLog({ client, tableName: 't', logger: {} as never })).toThrow(
      '"logger" must have a "warn" function',
    );
  });
});

describe('DeliveryLog.list and get', () => {
  it('queries every shard of a day on the by-day index newest first, with the window as key condition and filters', async () => {
    documents.on(QueryCommand).resolves({ Items: [] });
    const log = new DeliveryLog({ client, tableName: 'deliveries', indexShards: 2 });
    const since = Date.parse('2024-05-01T00:00:00.000Z');
    const until = Date.parse('2024-05-01T12:00:00.000Z');
    const page = await log.list({
      event: 'issues.opened',
      status: 'failed',
      verdict: 'verified',
      since,
      until,
      limit: 5,
    });
    expect(page).toEqual({ records: [] });
    const inputs = documents.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.ExpressionAttributeValues?.[':day']).sort()).toEqual([
      '2024-05-01#0',
      '2024-05-01#1',
    ]);
    for (const input of inputs) {
      expect(input).toMatchObject({ IndexName: 'by-day', ScanIndexForward: false, TableName: 'deliveries' });
      expect(input.KeyConditionExpression).toBe('#day = :day AND #at BETWEEN :lower AND :upper');
      expect(input.ExpressionAttributeValues).toMatchObject({
        ':lower': '2024-05-01T00:00:00.000Z',
        ':upper': '2024-05-01T12:00:00.000Z',
        ':event': 'issues',
        ':action': 'opened',
        ':outcome': 'failed',
        ':verdict': 'verified',
      });
      expect(input.FilterExpression).toContain('#event = :event');
    }
  });

  it('merges the shards newest first, returns a cursor, and the next page continues below it', async () => {
    const at = (minute: number, id: string) =>
      `2024-05-01T10:${String(minute).padStart(2, '0')}:00.000Z#${id}`;
    const item = (minute: number, id: string) => ({
      pk: `delivery#${id}`,
      sk: `record#${at(minute, id)}`,
      day: '2024-05-01#0',
      at: at(minute, id),
      recordId: id,
      deliveryId: id,
      outcome: 'published',
    });
    const shards: Record<string, ReturnType<typeof item>[]> = {
      '2024-05-01#0': [item(9, 'a9'), item(5, 'a5'), item(1, 'a1')],
      '2024-05-01#1': [item(8, 'b8'), item(2, 'b2')],
    };
    // The index as DynamoDB answers it: the day shard's items below `:upper`, newest first.
    documents.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: Record<string, string> }) => {
      const values = input.ExpressionAttributeValues;
      const items = (shards[values[':day'] as string] ?? []).filter(
        (entry) => entry.at <= (values[':upper'] as string),
      );
      return { Items: items };
    });
    const log = new DeliveryLog({ client, tableName: 'deliveries', indexShards: 2 });
    const since = Date.parse('2024-05-01T00:00:00.000Z');
    const until = Date.parse('2024-05-01T23:00:00.000Z');
    const first = await log.list({ since, until, limit: 3 });
    expect(first.records.map((record) => record.recordId)).toEqual(['a9', 'b8', 'a5']);
    expect(first.records[0]).not.toHaveProperty('pk');
    expect(first.cursor).toEqual(expect.any(String));
    documents.resetHistory();
    const second = await log.list({ since, until, limit: 3, cursor: first.cursor });
    for (const call of documents.commandCalls(QueryCommand)) {
      expect(call.args[0].input.ExpressionAttributeValues?.[':upper']).toBe(at(5, 'a5'));
    }
    expect(second.records.map((record) => record.recordId)).toEqual(['b2', 'a1']);
    expect(second.cursor).toBeUndefined();
  });

  it('refuses a bad query with the field named', async () => {
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    await expect(log.list({ limit: 0 })).rejects.toThrow('"limit" must be a number from 1 to 1000');
    await expect(log.list({ status: 'lost' as never })).rejects.toThrow('"status" must be one of');
    await expect(log.list({ verdict: 'meh' as never })).rejects.toThrow('"verdict" must be one of');
    await expect(log.list({ cursor: 'not-a-cursor' })).rejects.toThrow(
      '"cursor" is not a cursor of this log',
    );
    await expect(log.list({ since: 'yesterday' as never })).rejects.toThrow(
      '"since" must be a date or epoch milliseconds',
    );
    await expect(log.get('bad id')).rejects.toThrow('"deliveryId" must be 1 to 256 visible ascii characters');
  });

  it('get reads the delivery partition and returns records newest first with the subscribers map', async () => {
    documents.on(QueryCommand).resolves({
      Items: [
        {
          pk: 'delivery#d-1',
          sk: 'subscribers',
          subscribers: { mailer: { outcome: 'ok', durationMs: 3, at: 1 } },
        },
        {
          pk: 'delivery#d-1',
          sk: 'record#2024-05-01T10:00:01.000Z#r2',
          recordId: 'r2',
          outcome: 'duplicate',
        },
        {
          pk: 'delivery#d-1',
          sk: 'record#2024-05-01T10:00:00.000Z#r1',
          recordId: 'r1',
          outcome: 'published',
        },
      ],
    });
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    const details = await log.get('d-1');
    expect(details?.latest.recordId).toBe('r2');
    expect(details?.records.map((record) => record.outcome)).toEqual(['duplicate', 'published']);
    expect(details?.subscribers).toEqual({ mailer: { outcome: 'ok', durationMs: 3, at: 1 } });
    expect(documents.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      ExpressionAttributeValues: { ':pk': 'delivery#d-1' },
      ScanIndexForward: false,
    });
    documents.on(QueryCommand).resolves({ Items: [] });
    await expect(log.get('d-2')).resolves.toBeUndefined();
  });

  it('list with subscribers reads them with one BatchGetItem', async () => {
    documents
      .on(QueryCommand)
      .resolves({
        Items: [
          { at: '2024-05-01T10:00:00.000Z#r1', recordId: 'r1', deliveryId: 'd-1', outcome: 'published' },
        ],
      })
      .on(BatchGetCommand)
      .resolves({
        Responses: {
          deliveries: [{ pk: 'delivery#d-1', sk: 'subscribers', subscribers: { a: { outcome: 'error' } } }],
        },
      });
    const log = new DeliveryLog({ client, tableName: 'deliveries', indexShards: 1 });
    const since = Date.parse('2024-05-01T00:00:00.000Z');
    const page = await log.list({ since, until: since + 3_600_000 * 20, subscribers: true, limit: 1 });
    expect(page.records[0]?.subscribers).toEqual({ a: { outcome: 'error' } });
    expect(documents.commandCalls(BatchGetCommand)).toHaveLength(1);
  });
});

describe('DeliveryLog.recordSubscriber', () => {
  it("creates the subscribers map with one UpdateItem when it is the delivery's first subscriber", async () => {
    documents.on(UpdateCommand).resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    await log.recordSubscriber('d-1', { subscriber: 'mailer', outcome: 'ok', durationMs: 12.4 });
    const calls = documents.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      Key: { pk: 'delivery#d-1', sk: 'subscribers' },
      UpdateExpression: 'SET #subs = :map, #exp = :exp',
      ConditionExpression: 'attribute_not_exists(#subs)',
      ExpressionAttributeValues: { ':map': { mailer: { outcome: 'ok', durationMs: 12 } } },
    });
  });

  it('sets its entry in the map another subscriber created, and creates it when that one vanished meanwhile', async () => {
    documents
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed())
      .rejectsOnce(conditionFailed())
      .rejectsOnce(conditionFailed())
      .resolves({});
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    await log.recordSubscriber('d-1', {
      subscriber: 'mailer',
      outcome: 'error',
      durationMs: 1,
      error: { name: 'TypeError', message: `boom ${'m'.repeat(500)}` },
      source: 'gitlab-main',
    });
    const inputs = documents.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(inputs.map((input) => input.ConditionExpression)).toEqual([
      'attribute_not_exists(#subs)',
      'attribute_exists(#subs)',
      'attribute_not_exists(#subs)',
      'attribute_exists(#subs)',
    ]);
    expect(inputs[0]?.Key).toEqual({ pk: 'delivery#source#gitlab-main#d-1', sk: 'subscribers' });
    expect(inputs[3]).toMatchObject({
      UpdateExpression: 'SET #subs.#name = :outcome, #exp = :exp',
      ExpressionAttributeNames: { '#name': 'mailer' },
    });
    const outcome = inputs[3]?.ExpressionAttributeValues?.[':outcome'] as {
      error: { name: string; message: string };
    };
    expect(outcome.error.name).toBe('TypeError');
    expect(outcome.error.message).toHaveLength(300);
  });

  it('refuses a bad report with the field named', async () => {
    const log = new DeliveryLog({ client, tableName: 'deliveries' });
    await expect(
      log.recordSubscriber('d-1', { subscriber: '', outcome: 'ok', durationMs: 1 }),
    ).rejects.toThrow('"subscriber"');
    await expect(
      log.recordSubscriber('d-1', { subscriber: 's', outcome: 'meh' as never, durationMs: 1 }),
    ).rejects.toThrow('"outcome" must be "ok" or "error"');
    await expect(
      log.recordSubscriber('d-1', { subscriber: 's', outcome: 'ok', durationMs: -1 }),
    ).rejects.toThrow('"durationMs"');
    expect(documents.calls()).toHaveLength(0);
  });
});

describe('withDeliveryReport', () => {
  const event = (delivery: unknown = 'd-1') => ({
    'detail-type': 'issues',
    detail: { delivery, source: 'default', payload: { secret: 'payload-value' } },
  });

  it('reports ok with the duration and returns the result', async () => {
    const reports: unknown[] = [];
    const deliveryLog = { recordSubscriber: async (...args: unknown[]) => void reports.push(args) };
    const handler = withDeliveryReport(async (_event: unknown, context: { n: number }) => context.n * 2, {
      name: 'doubler',
      deliveryLog,
    });
    await expect(handler(event(), { n: 21 })).resolves.toBe(42);
    expect(reports).toEqual([
      ['d-1', { subscriber: 'doubler', outcome: 'ok', durationMs: expect.any(Number), source: 'default' }],
    ]);
  });

  it('reports an error with its class name and message (never the payload), and rethrows the same error', async () => {
    const reports: unknown[] = [];
    const deliveryLog = { recordSubscriber: async (...args: unknown[]) => void reports.push(args) };
    class ChatDown extends Error {}
    const thrown = new ChatDown('chat api answered 503');
    const handler = withDeliveryReport(
      async () => {
        throw thrown;
      },
      { name: 'chat', deliveryLog },
    );
    await expect(handler(event())).rejects.toBe(thrown);
    expect(reports).toEqual([
      [
        'd-1',
        {
          subscriber: 'chat',
          outcome: 'error',
          durationMs: expect.any(Number),
          error: { name: 'ChatDown', message: 'chat api answered 503' },
          source: 'default',
        },
      ],
    ]);
    expect(JSON.stringify(reports)).not.toContain('payload-value');
  });

  it('reports a handler still running just before the timeout as error (SubscriberTimeoutError), then fails', async () => {
    const reports: unknown[] = [];
    const deliveryLog = { recordSubscriber: async (...args: unknown[]) => void reports.push(args) };
    const hanging = withDeliveryReport(async () => new Promise(() => undefined), {
      name: 'slow',
      deliveryLog,
    });
    const started = Date.now();
    // 1 s left: reported a fifth of it (200 ms) before the end, not 500 ms.
    const error = await hanging(event(), { getRemainingTimeInMillis: () => 1_000 }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(SubscriberTimeoutError);
    expect(error).toMatchObject({ code: 'subscriber_timeout' });
    const { marginMs } = error as SubscriberTimeoutError;
    expect(marginMs).toBeGreaterThan(150);
    expect(marginMs).toBeLessThanOrEqual(200);
    expect(took).toBeGreaterThanOrEqual(790);
    expect(took).toBeLessThan(1_000);
    expect(reports).toEqual([
      [
        'd-1',
        {
          subscriber: 'slow',
          outcome: 'error',
          durationMs: expect.any(Number),
          error: {
            name: 'SubscriberTimeoutError',
            message: `the handler had not finished ${marginMs} ms before the function's timeout`,
            code: 'subscriber_timeout',
          },
          source: 'default',
        },
      ],
    ]);
    // A handler done in time is reported ok, and its timer does not outlive it; without a Lambda context none is set.
    reports.length = 0;
    const quick = withDeliveryReport(async () => 'done', { name: 'quick', deliveryLog });
    await expect(quick(event(), { getRemainingTimeInMillis: () => 60_000 })).resolves.toBe('done');
    await expect(quick(event())).resolves.toBe('done');
    // A context's time left past what a timer can wait (a test harness's) is no timeout at once.
    const unhurried = withDeliveryReport(
      async () => new Promise((resolve) => setTimeout(() => resolve('done'), 30)),
      { name: 'unhurried', deliveryLog },
    );
    await expect(unhurried(event(), { getRemainingTimeInMillis: () => 2 ** 40 })).resolves.toBe('done');
    expect(reports.map((report) => (report as [string, { outcome: string }])[1].outcome)).toEqual([
      'ok',
      'ok',
      'ok',
    ]);
  });

  it('never fails the handler because the report failed, and logs the code only', async () => {
    const logger = recordingLogger();
    const deliveryLog = {
      recordSubscriber: async () => {
        throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
      },
    };
    const handler = withDeliveryReport(async () => 'done', { name: 'x', deliveryLog, logger });
    await expect(handler(event())).resolves.toBe('done');
    expect(logger.lines).toEqual([
      { message: 'delivery report failed', extra: [{ code: 'AccessDeniedException', delivery: 'd-1' }] },
    ]);
    const failing = withDeliveryReport(
      async () => {
        throw new RangeError('own');
      },
      { name: 'x', deliveryLog, logger },
    );
    await expect(failing(event())).rejects.toThrow(RangeError);
  });

  it('reads a detail given as JSON text and skips an event without a delivery id', async () => {
    const reports: unknown[] = [];
    const deliveryLog = { recordSubscriber: async (...args: unknown[]) => void reports.push(args) };
    const handler = withDeliveryReport(async () => 1, { name: 'x', deliveryLog });
    await handler({ detail: JSON.stringify({ delivery: 'd-9' }) });
    await handler({ detail: { delivery: 42 } });
    await handler({ detail: '{not json' });
    expect(reports).toEqual([['d-9', { subscriber: 'x', outcome: 'ok', durationMs: expect.any(Number) }]]);
  });

  it('validates its options', () => {
    const deliveryLog = { recordSubscriber: async () => {} };
    expect(() => withDeliveryReport('x' as never, { name: 'x', deliveryLog })).toThrow(
      '"handler" must be a function',
    );
    expect(() => withDeliveryReport(async (_e: unknown) => 1, { name: '', deliveryLog })).toThrow('"name"');
    expect(() =>
      withDeliveryReport(async (_e: unknown) => 1, { name: 'x', deliveryLog: {} as never }),
    ).toThrow('"deliveryLog" must have a "recordSubscriber" function');
  });
});
