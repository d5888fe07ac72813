// What one AWS API request asks IAM for: the action and the resource ARN(s), read from the request as the SDK sent
// it (DynamoDB's and EventBridge's `X-Amz-Target` and JSON body, S3's method and path), and who sent it (the SDK's
// `app/<id>` User-Agent section, from the function's AWS_SDK_UA_APP_ID). The recording proxy in front of the local
// stack's endpoints (local-stack/aws-call-recorder.ts) writes one record per (action, resource) of each request.

/** The services the local stack's functions reach, by the name their `AWS_ENDPOINT_URL_<SERVICE>` carries. */
export type AwsService = 'dynamodb' | 's3' | 'events' | 'kinesis';

/** One IAM authorization a request needs. */
export interface AwsCallTarget {
  /** The API operation (`PutItem`, `GetObject`, `PutEvents`). */
  operation: string;
  /** The IAM action (`dynamodb:PutItem`), or `unknown:<what>` when the request could not be read. */
  action: string;
  /** The resource ARN as the request names it (`…:table/t`, `…:table/t/index/i`, `arn:aws:s3:::b/k`). */
  resource: string;
}

/** The parts of a request this needs. */
export interface AwsRequest {
  method: string;
  /** Path and query, as on the request line (`/bucket/key?x-id=GetObject`). */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body, for the JSON services (DynamoDB, EventBridge); S3's is never needed. */
  body?: Buffer | undefined;
}

/** Partition, region and account the ARNs are written with. */
export interface ArnContext {
  region: string;
  account: string;
  /** Default `aws`. */
  partition?: string;
}

/** The app id prefix of serverless.yml's functions (`AWS_SDK_UA_APP_ID: forgebridge-<function key>`). */
export const APP_ID_PREFIX = 'forgebridge-';

/**
 * The function key an app id names (`forgebridge-ingest` -> `ingest`), or null for another app id. Powertools adds
 * its own part to the variable at import (`forgebridge-ingest/PT/NO-OP/2.35.0/PTEnv/NA`, which the SDK's
 * User-Agent escapes to `forgebridge-ingest-PT-NO-OP-2.35.0-PTEnv-NA`): that part is left out.
 */
export function functionOfAppId(appId: string | undefined): string | null {
  if (appId === undefined || !appId.startsWith(APP_ID_PREFIX)) return null;
  const key = appId.slice(APP_ID_PREFIX.length).replace(/[-/]PT[-/].*$/, '');
  return key === '' ? null : key;
}

/** The app id in the SDK's User-Agent (`… app/forgebridge-ingest`), or undefined for a client that set none. */
export function appIdOf(headers: AwsRequest['headers']): string | undefined {
  for (const name of ['x-amz-user-agent', 'user-agent']) {
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw.join(' ') : raw;
    const match = value === undefined ? null : /(?:^|\s)app\/(\S+)/.exec(value);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

/**
 * The IAM actions and resources one request needs: one entry per distinct (action, resource) (a BatchGetItem over
 * two tables gives two, a PutEvents naming one bus one); an entry with an `unknown:` action for a request that is
 * not understood, so that nothing passes unseen.
 *
 * @see https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html
 */
export function awsCallTargets(
  service: AwsService,
  request: AwsRequest,
  context: ArnContext,
): AwsCallTarget[] {
  const targets =
    service === 's3'
      ? s3Targets(request, context)
      : jsonTargets(service, request, arnPrefix(service, context));
  const seen = new Set<string>();
  return targets.filter((target) => {
    const key = `${target.action} ${target.resource}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function arnPrefix(service: 'dynamodb' | 'events' | 'kinesis', context: ArnContext): string {
  return `arn:${context.partition ?? 'aws'}:${service}:${context.region}:${context.account}`;
}

function header(request: AwsRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function unknown(what: string, resource = '*'): AwsCallTarget {
  return { operation: what, action: `unknown:${what}`, resource };
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function jsonTargets(
  service: 'dynamodb' | 'events' | 'kinesis',
  request: AwsRequest,
  prefix: string,
): AwsCallTarget[] {
  const target = header(request, 'x-amz-target');
  const operation = target?.split('.').at(-1);
  if (target === undefined || operation === undefined || operation === '') {
    return [unknown(`${service} ${request.method} ${request.url} without X-Amz-Target`)];
  }
  let body: Json | undefined;
  try {
    body = asObject(JSON.parse(request.body?.toString('utf8') ?? '{}'));
  } catch {
    body = undefined;
  }
  if (body === undefined) return [unknown(`${service} ${operation} with a body that is not a JSON object`)];
  if (service === 'kinesis') return kinesisTargets(operation, body, prefix);
  return service === 'dynamodb'
    ? dynamoDbTargets(operation, body, prefix)
    : eventsTargets(operation, body, prefix);
}

/** A Kinesis call names its stream by `StreamARN` or `StreamName` (GetRecords by its iterator only: unknown). */
function kinesisTargets(operation: string, body: Json, prefix: string): AwsCallTarget[] {
  const action = `kinesis:${operation}`;
  if (typeof body.StreamARN === 'string') return [{ operation, action, resource: body.StreamARN }];
  if (typeof body.StreamName === 'string' && body.StreamName !== '') {
    return [{ operation, action, resource: `${prefix}:stream/${body.StreamName}` }];
  }
  return [unknown(`kinesis ${operation} without StreamName or StreamARN`)];
}

/** The actions of DynamoDB's transactions, by item kind: a transaction is authorized item by item. */
const TRANSACT_ITEM_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

function dynamoDbTargets(operation: string, body: Json, prefix: string): AwsCallTarget[] {
  const table = (name: unknown): string =>
    // A table may be named by its ARN as well as by its name.
    typeof name === 'string' && name.startsWith('arn:') ? name : `${prefix}:table/${String(name)}`;
  const action = `dynamodb:${operation}`;
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    const items = asObject(body.RequestItems) ?? {};
    return Object.keys(items).map((name) => ({ operation, action, resource: table(name) }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const items = Array.isArray(body.TransactItems) ? body.TransactItems : [];
    return items.flatMap((item) =>
      Object.entries(asObject(item) ?? {}).map(([kind, value]) => {
        const itemAction = TRANSACT_ITEM_ACTIONS[kind];
        const name = asObject(value)?.TableName;
        return itemAction === undefined || name === undefined
          ? unknown(`dynamodb ${operation} item ${kind}`)
          : { operation, action: `dynamodb:${itemAction}`, resource: table(name) };
      }),
    );
  }
  if (operation === 'ListTables') return [{ operation, action, resource: '*' }];
  if (body.TableName === undefined) return [unknown(`dynamodb ${operation} without TableName`)];
  const base = table(body.TableName);
  // A Query or Scan of an index is authorized on the index.
  const index = (operation === 'Query' || operation === 'Scan') && typeof body.IndexName === 'string';
  return [{ operation, action, resource: index ? `${base}/index/${body.IndexName}` : base }];
}

function eventsTargets(operation: string, body: Json, prefix: string): AwsCallTarget[] {
  const action = `events:${operation}`;
  const bus = (name: unknown): string =>
    typeof name === 'string' && name.startsWith('arn:')
      ? name
      : `${prefix}:event-bus/${typeof name === 'string' && name !== '' ? name : 'default'}`;
  if (operation === 'PutEvents') {
    const entries = Array.isArray(body.Entries) ? body.Entries : [];
    if (entries.length === 0) return [unknown('events PutEvents without entries')];
    return entries.map((entry) => ({ operation, action, resource: bus(asObject(entry)?.EventBusName) }));
  }
  if (body.EventBusName !== undefined || body.Name !== undefined) {
    return [{ operation, action, resource: bus(body.EventBusName ?? body.Name) }];
  }
  return [unknown(`events ${operation}`)];
}

/** The query parameters of a ListObjects(V2) request. */
const LIST_QUERY = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'max-keys',
  'continuation-token',
  'start-after',
  'marker',
  'encoding-type',
  'fetch-owner',
]);

/** S3's object operations by method, for a path-style request `/<bucket>/<key>`. */
const S3_OBJECT_ACTIONS: Readonly<Record<string, string>> = {
  GET: 'GetObject',
  // HeadObject is authorized as GetObject.
  HEAD: 'GetObject',
  PUT: 'PutObject',
  DELETE: 'DeleteObject',
};

function s3Targets(request: AwsRequest, context: ArnContext): AwsCallTarget[] {
  const url = new URL(request.url, 'http://s3.local');
  const [bucket = '', ...keyParts] = url.pathname.slice(1).split('/');
  const key = keyParts.map(decodeURIComponent).join('/');
  const partition = context.partition ?? 'aws';
  const method = request.method.toUpperCase();
  const operation = url.searchParams.get('x-id') ?? `${method} ${url.pathname}`;
  const query = [...url.searchParams.keys()].filter((name) => name !== 'x-id');
  if (bucket === '') {
    return method === 'GET' && query.length === 0
      ? [{ operation: 'ListBuckets', action: 's3:ListAllMyBuckets', resource: '*' }]
      : [unknown(`s3 ${method} ${request.url}`)];
  }
  const bucketArn = `arn:${partition}:s3:::${decodeURIComponent(bucket)}`;
  if (keyParts.length === 0) {
    // ListObjects(V2) and HeadBucket are authorized as ListBucket on the bucket.
    return (method === 'GET' && query.every((name) => LIST_QUERY.has(name))) || method === 'HEAD'
      ? [{ operation, action: 's3:ListBucket', resource: bucketArn }]
      : [unknown(`s3 ${method} ${request.url}`, bucketArn)];
  }
  const objectArn = `${bucketArn}/${key}`;
  if (query.length === 0) {
    const objectAction = S3_OBJECT_ACTIONS[method];
    if (objectAction === undefined) return [unknown(`s3 ${method} ${request.url}`, objectArn)];
    const targets = [{ operation, action: `s3:${objectAction}`, resource: objectArn }];
    // A copy also reads its source.
    const source = header(request, 'x-amz-copy-source');
    if (method === 'PUT' && source !== undefined) {
      const path = decodeURIComponent(source.split('?')[0] ?? '').replace(/^\//, '');
      targets.push({ operation, action: 's3:GetObject', resource: `arn:${partition}:s3:::${path}` });
    }
    return targets;
  }
  // A multipart upload is authorized as PutObject from its start to its completion.
  const multipart =
    (method === 'POST' && query.length === 1 && query[0] === 'uploads') ||
    (query.includes('uploadId') && query.every((name) => name === 'uploadId' || name === 'partNumber'));
  if (multipart && (method === 'POST' || method === 'PUT')) {
    return [{ operation, action: 's3:PutObject', resource: objectArn }];
  }
  if (multipart && method === 'DELETE') {
    return [{ operation, action: 's3:AbortMultipartUpload', resource: objectArn }];
  }
  return [unknown(`s3 ${method} ${request.url}`, objectArn)];
}
