// A lost DynamoDB reply (item 8 of issue 8): a loopback HTTP proxy in front of DynamoDB Local forwards the
// ingest's conditional PutItem, lets DynamoDB Local carry it out, and drops the reply. The SDK retries its own
// put, which fails the condition on the record it just wrote: that lock is the caller's.
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../../../lib/aws/index.js';
import { signedDelivery, testIngest } from '../../../helpers/aws-delivery.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();

/** Forwards every request to DynamoDB Local; drops the reply of the next `dropPutReplies` PutItem calls. */
let proxy: Server;
let proxyUrl = '';
const seen: string[] = [];
let dropPutReplies = 0;

beforeAll(async () => {
  const target = new URL(ddb.endpoint);
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      seen.push(operation);
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            if (operation === 'PutItem' && dropPutReplies > 0) {
              // DynamoDB Local carried the put out; the caller never hears of it.
              dropPutReplies -= 1;
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 500, answer.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      upstream.on('error', () => req.socket.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
});

const context = { getRemainingTimeInMillis: () => 20_000 } as Context;

function ingest(tableName: string, published: Delivery[]) {
  // The SDK's default retries (3 attempts), as the handler's DynamoDB client has them.
  const client = new DynamoDBClient({
    endpoint: proxyUrl,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const publisher = { publish: async (delivery: Delivery) => void published.push(delivery) };
  return testIngest({ tableName, dynamodb: client, publisher });
}

async function post(handler: ReturnType<typeof ingest>, id: string) {
  const { headers, body } = signedDelivery({ action: 'opened', issue: {} }, { id });
  const event = { version: '2.0', headers, body, requestContext: { http: { method: 'POST' } } };
  return (await handler(event as never, context)) as { statusCode: number; body: string };
}

describe('the dedupe when the reply to its own conditional put is lost', () => {
  it('takes its own in-progress record as its lock: 202 and exactly one publish', async () => {
    const { dedupe } = await ddb.tables();
    const published: Delivery[] = [];
    const handler = ingest(dedupe, published);
    seen.length = 0;
    dropPutReplies = 1;
    const answer = await post(handler, 'd-lost-reply');
    // The put was sent twice: the first carried out with its reply dropped, the retry failing the condition.
    expect(seen.filter((operation) => operation === 'PutItem')).toHaveLength(2);
    expect(dropPutReplies).toBe(0);
    expect(answer).toMatchObject({ statusCode: 202, body: '{"delivery":"d-lost-reply"}' });
    expect(published.map((delivery) => delivery.id)).toEqual(['d-lost-reply']);
    const { Items } = await ddb.documentClient().send(new ScanCommand({ TableName: dedupe }));
    expect(Items).toHaveLength(1);
    expect(Items?.[0]).toMatchObject({ status: 'COMPLETED', data: { delivery: 'd-lost-reply' } });
    // A redelivery, with another attempt's owner token, is a duplicate.
    expect(await post(handler, 'd-lost-reply')).toMatchObject({
      statusCode: 200,
      body: '{"duplicate":true}',
    });
    expect(published).toHaveLength(1);
  });

  it('still answers 409 to another invocation holding the lock (its owner is not ours)', async () => {
    const { dedupe } = await ddb.tables();
    const published: Delivery[] = [];
    let release!: () => void;
    const slow = testIngest({
      tableName: dedupe,
      dynamodb: ddb.client(),
      publisher: {
        publish: (delivery) =>
          new Promise<void>((resolve) => {
            release = () => resolve(void published.push(delivery));
          }),
      },
    });
    const first = post(slow, 'd-held');
    await expect.poll(() => release, { timeout: 10_000 }).toBeTypeOf('function');
    const second = await post(ingest(dedupe, published), 'd-held');
    expect(second.statusCode).toBe(409);
    release();
    expect((await first).statusCode).toBe(202);
    expect(published).toHaveLength(1);
  });
});
