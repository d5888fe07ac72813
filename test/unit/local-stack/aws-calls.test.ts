// local-stack/aws-calls.ts: the IAM action and resource ARN one AWS request needs, and the app id that sent it.
import { describe, expect, it } from 'vitest';
import { appIdOf, awsCallTargets, functionOfAppId } from '../../../local-stack/aws-calls.js';

const context = { region: 'eu-west-1', account: '000000000000' };
const table = (name: string) => `arn:aws:dynamodb:eu-west-1:000000000000:table/${name}`;

function dynamodb(operation: string, body: unknown) {
  return awsCallTargets(
    'dynamodb',
    {
      method: 'POST',
      url: '/',
      headers: { 'x-amz-target': `DynamoDB_20120810.${operation}` },
      body: Buffer.from(JSON.stringify(body)),
    },
    context,
  );
}

function s3(method: string, url: string, headers: Record<string, string> = {}) {
  return awsCallTargets('s3', { method, url, headers }, context);
}

describe('appIdOf()', () => {
  it("reads the app section of the SDK's User-Agent, from either header", () => {
    const ua = 'aws-sdk-js/3.1162.0 ua/2.1 os/linux#6.8 lang/js md/nodejs#22.23.3 api/dynamodb#3.1162.0';
    expect(appIdOf({ 'user-agent': `${ua} app/forgebridge-ingest` })).toBe('forgebridge-ingest');
    expect(appIdOf({ 'x-amz-user-agent': `${ua} app/forgebridge-onPush m/E` })).toBe('forgebridge-onPush');
    expect(appIdOf({ 'user-agent': ua })).toBeUndefined();
    expect(appIdOf({})).toBeUndefined();
  });
});

describe('functionOfAppId()', () => {
  it('gives the function key of our app id, without the part Powertools appends', () => {
    expect(functionOfAppId('forgebridge-ingest')).toBe('ingest');
    expect(functionOfAppId('forgebridge-onIssuesOpened-PT-NO-OP-2.35.0-PTEnv-NA')).toBe('onIssuesOpened');
    expect(functionOfAppId('forgebridge-redrive/PT/NO-OP/2.35.0/PTEnv/AWS_Lambda_nodejs22.x')).toBe(
      'redrive',
    );
    expect(functionOfAppId('PT-NO-OP-2.35.0-PTEnv-NA')).toBeNull();
    expect(functionOfAppId('forgebridge-')).toBeNull();
    expect(functionOfAppId(undefined)).toBeNull();
  });
});

describe('awsCallTargets()', () => {
  it('names a DynamoDB item operation by its X-Amz-Target and the table by its TableName', () => {
    expect(dynamodb('PutItem', { TableName: 'dedupe', Item: {} })).toEqual([
      { operation: 'PutItem', action: 'dynamodb:PutItem', resource: table('dedupe') },
    ]);
    expect(dynamodb('GetItem', { TableName: table('tokens') })[0]?.resource).toBe(table('tokens'));
  });

  it('names the index of a Query or a Scan on one, and the table of a Query without', () => {
    expect(dynamodb('Query', { TableName: 'dedupe', IndexName: 'queue-due' })[0]?.resource).toBe(
      `${table('dedupe')}/index/queue-due`,
    );
    expect(dynamodb('Scan', { TableName: 'log', IndexName: 'by-day' })[0]?.resource).toBe(
      `${table('log')}/index/by-day`,
    );
    expect(dynamodb('Query', { TableName: 'log' })[0]?.resource).toBe(table('log'));
  });

  it('gives a batch one target per table, and a transaction one per item action and table', () => {
    expect(dynamodb('BatchGetItem', { RequestItems: { a: { Keys: [] }, b: { Keys: [] } } })).toEqual([
      { operation: 'BatchGetItem', action: 'dynamodb:BatchGetItem', resource: table('a') },
      { operation: 'BatchGetItem', action: 'dynamodb:BatchGetItem', resource: table('b') },
    ]);
    expect(
      dynamodb('TransactWriteItems', {
        TransactItems: [
          { Put: { TableName: 'a' } },
          { Put: { TableName: 'a' } },
          { ConditionCheck: { TableName: 'b' } },
          { Delete: { TableName: 'b' } },
        ],
      }).map(({ action, resource }) => [action, resource]),
    ).toEqual([
      ['dynamodb:PutItem', table('a')],
      ['dynamodb:ConditionCheckItem', table('b')],
      ['dynamodb:DeleteItem', table('b')],
    ]);
  });

  it('marks a request it cannot read as unknown, so that it is never passed over', () => {
    const noTarget = awsCallTargets('dynamodb', { method: 'POST', url: '/', headers: {} }, context);
    expect(noTarget[0]?.action).toMatch(/^unknown:/);
    const notJson = awsCallTargets(
      'dynamodb',
      {
        method: 'POST',
        url: '/',
        headers: { 'x-amz-target': 'DynamoDB_20120810.PutItem' },
        body: Buffer.from('{'),
      },
      context,
    );
    expect(notJson[0]?.action).toMatch(/^unknown:/);
    expect(dynamodb('PutItem', {})[0]?.action).toMatch(/^unknown:/);
  });

  it('names each bus of a PutEvents once, by name or ARN, the default bus when none is named', () => {
    const bus = (name: string) => `arn:aws:events:eu-west-1:000000000000:event-bus/${name}`;
    const putEvents = (entries: unknown[]) =>
      awsCallTargets(
        'events',
        {
          method: 'POST',
          url: '/',
          headers: { 'x-amz-target': 'AWSEvents.PutEvents' },
          body: Buffer.from(JSON.stringify({ Entries: entries })),
        },
        context,
      );
    expect(putEvents([{ EventBusName: 'fb' }, { EventBusName: bus('fb') }, {}])).toEqual([
      { operation: 'PutEvents', action: 'events:PutEvents', resource: bus('fb') },
      { operation: 'PutEvents', action: 'events:PutEvents', resource: bus('default') },
    ]);
  });

  it('names an S3 object operation by method and path, the key decoded', () => {
    expect(s3('GET', '/claims/deliveries/a%20b/c.json?x-id=GetObject')).toEqual([
      {
        operation: 'GetObject',
        action: 's3:GetObject',
        resource: 'arn:aws:s3:::claims/deliveries/a b/c.json',
      },
    ]);
    expect(s3('PUT', '/claims/deliveries/x?x-id=PutObject')[0]?.action).toBe('s3:PutObject');
    expect(s3('HEAD', '/claims/deliveries/x')[0]?.action).toBe('s3:GetObject');
    expect(s3('DELETE', '/claims/deliveries/x?x-id=DeleteObject')[0]?.action).toBe('s3:DeleteObject');
  });

  it('reads S3 copies, multipart uploads and listings as IAM authorizes them', () => {
    expect(
      s3('PUT', '/claims/b?x-id=CopyObject', { 'x-amz-copy-source': '/claims/a' }).map(
        ({ action, resource }) => [action, resource],
      ),
    ).toEqual([
      ['s3:PutObject', 'arn:aws:s3:::claims/b'],
      ['s3:GetObject', 'arn:aws:s3:::claims/a'],
    ]);
    expect(s3('POST', '/claims/big?uploads')[0]?.action).toBe('s3:PutObject');
    expect(s3('PUT', '/claims/big?partNumber=1&uploadId=u')[0]?.action).toBe('s3:PutObject');
    expect(s3('POST', '/claims/big?uploadId=u')[0]?.action).toBe('s3:PutObject');
    expect(s3('DELETE', '/claims/big?uploadId=u')[0]?.action).toBe('s3:AbortMultipartUpload');
    expect(s3('GET', '/claims?list-type=2&prefix=deliveries%2F')).toEqual([
      { operation: 'GET /claims', action: 's3:ListBucket', resource: 'arn:aws:s3:::claims' },
    ]);
    expect(s3('GET', '/')[0]?.action).toBe('s3:ListAllMyBuckets');
  });

  it('marks S3 sub-resources it does not know as unknown', () => {
    expect(s3('GET', '/claims/x?tagging')[0]?.action).toMatch(/^unknown:/);
    expect(s3('PUT', '/claims?policy')[0]?.action).toMatch(/^unknown:/);
    expect(s3('POST', '/claims/x')[0]?.action).toMatch(/^unknown:/);
  });
});
