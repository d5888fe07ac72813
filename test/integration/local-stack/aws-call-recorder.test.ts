// local-stack/aws-call-recorder.ts in front of the real peers (DynamoDB Local, s3rver) with the real SDK clients:
// every request and answer goes through unchanged (SigV4 signatures still match, a 2 MB object comes back whole, a
// refused conditional write is still the SDK's ConditionalCheckFailedException), and the log holds one line per IAM
// authorization each request needed, attributed by the client's app id; an endpoint that is down drops the
// connection, as the endpoint itself would be unreachable, and the call is recorded with status 0.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AwsCallLogLine,
  type AwsCallRecorders,
  startAwsCallRecorders,
} from '../../../local-stack/aws-call-recorder.js';
import { localClientConfig } from '../../../local-stack/dynamodb.js';
import { freePort } from '../../../local-stack/ports.js';
import { type LocalS3, localS3ClientConfig, startS3 } from '../../../local-stack/s3.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
const BUCKET = 'claims';
const ARN = 'arn:aws:dynamodb:eu-west-1:000000000000:table';

let dir: string;
let file: string;
let s3: LocalS3;
let recorders: AwsCallRecorders;
let tables: { dedupe: string; tokens: string };
const clients: { destroy(): void }[] = [];

function lines(): AwsCallLogLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AwsCallLogLine);
}

function track<T extends { destroy(): void }>(client: T): T {
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-aws-calls-'));
  file = join(dir, 'aws-calls.jsonl');
  s3 = await startS3({ buckets: [BUCKET] });
  tables = await ddb.tables();
  recorders = await startAwsCallRecorders({
    file,
    stage: 'test',
    region: 'eu-west-1',
    names: { dedupeTable: tables.dedupe, bucket: BUCKET },
    // Nothing listens there: the bus is down.
    targets: { dynamodb: ddb.endpoint, s3: s3.endpoint, events: `http://127.0.0.1:${await freePort()}` },
  });
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await recorders?.stop();
  await s3?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('startAwsCallRecorders()', () => {
  it('writes the stack line first: its names, region and account', () => {
    expect(lines()[0]).toMatchObject({
      kind: 'stack',
      stage: 'test',
      region: 'eu-west-1',
      account: '000000000000',
      names: { dedupeTable: tables.dedupe, bucket: BUCKET },
    });
  });

  it("forwards DynamoDB calls unchanged and records each table's action, by the client's app id", async () => {
    const documents = DynamoDBDocumentClient.from(
      track(
        new DynamoDBClient({
          ...localClientConfig(recorders.urls.dynamodb),
          region: 'eu-west-1',
          userAgentAppId: 'forgebridge-redrive',
        }),
      ),
    );
    const before = lines().length;
    await documents.send(new PutCommand({ TableName: tables.dedupe, Item: { pk: 'a', n: 1 } }));
    await expect(
      documents.send(
        new PutCommand({
          TableName: tables.dedupe,
          Item: { pk: 'a' },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    const batch = await documents.send(
      new BatchGetCommand({
        RequestItems: { [tables.dedupe]: { Keys: [{ pk: 'a' }] }, [tables.tokens]: { Keys: [{ pk: 'a' }] } },
      }),
    );
    expect(batch.Responses?.[tables.dedupe]).toEqual([{ pk: 'a', n: 1 }]);
    await documents.send(
      new QueryCommand({
        TableName: tables.dedupe,
        IndexName: 'queue-due',
        KeyConditionExpression: '#queue = :due',
        ExpressionAttributeNames: { '#queue': 'queue' },
        ExpressionAttributeValues: { ':due': 'due' },
      }),
    );
    const calls = lines()
      .slice(before)
      .map((line) => line.kind === 'call' && [line.function, line.action, line.resource, line.status]);
    expect(calls).toEqual([
      ['redrive', 'dynamodb:PutItem', `${ARN}/${tables.dedupe}`, 200],
      ['redrive', 'dynamodb:PutItem', `${ARN}/${tables.dedupe}`, 400],
      ['redrive', 'dynamodb:BatchGetItem', `${ARN}/${tables.dedupe}`, 200],
      ['redrive', 'dynamodb:BatchGetItem', `${ARN}/${tables.tokens}`, 200],
      ['redrive', 'dynamodb:Query', `${ARN}/${tables.dedupe}/index/queue-due`, 200],
    ]);
  });

  it('streams a 2 MB object through both ways, s3rver checking the signatures, and records the object', async () => {
    const client = track(
      new S3Client({ ...localS3ClientConfig(recorders.urls.s3), userAgentAppId: 'forgebridge-ingest' }),
    );
    const body = randomBytes(2 * 1024 * 1024);
    const before = lines().length;
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'deliveries/a b.json', Body: body }));
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'deliveries/a b.json' }));
    const bytes = Buffer.from(
      await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      createHash('sha256').update(body).digest('hex'),
    );
    expect(
      lines()
        .slice(before)
        .map((line) => line.kind === 'call' && [line.function, line.action, line.resource, line.status]),
    ).toEqual([
      ['ingest', 's3:PutObject', `arn:aws:s3:::${BUCKET}/deliveries/a b.json`, 200],
      ['ingest', 's3:GetObject', `arn:aws:s3:::${BUCKET}/deliveries/a b.json`, 200],
    ]);
  });

  it("records a client without our app id as nobody's, and a call to an endpoint that is down with status 0", async () => {
    const plain = track(new S3Client(localS3ClientConfig(recorders.urls.s3)));
    const bus = track(
      new EventBridgeClient({
        endpoint: recorders.urls.events,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 1,
        userAgentAppId: 'forgebridge-onPush',
      }),
    );
    const before = lines().length;
    await expect(plain.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'missing' }))).rejects.toMatchObject({
      name: 'NoSuchKey',
    });
    await expect(
      bus.send(
        new PutEventsCommand({
          Entries: [{ EventBusName: 'fb', Source: 's', DetailType: 'd', Detail: '{}' }],
        }),
      ),
    ).rejects.toThrow();
    // The plain client's app id is nobody's: none, or only what Powertools puts in AWS_SDK_UA_APP_ID once loaded in
    // this process (it is, when another file of this worker loaded it first).
    expect(
      lines()
        .slice(before)
        .map(
          (line) =>
            line.kind === 'call' && [
              line.function,
              typeof line.appId === 'string' && line.appId.startsWith('forgebridge-') ? line.appId : null,
              line.action,
              line.resource,
              line.status,
            ],
        ),
    ).toEqual([
      [null, null, 's3:GetObject', `arn:aws:s3:::${BUCKET}/missing`, 404],
      [
        'onPush',
        expect.stringMatching(/^forgebridge-onPush/),
        'events:PutEvents',
        'arn:aws:events:eu-west-1:000000000000:event-bus/fb',
        0,
      ],
    ]);
  });
});
