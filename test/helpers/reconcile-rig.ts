// What the reconciler's integration suites (test/integration/aws/reconcile/*) share around their forge stand-in:
// the whole rig their `beforeAll` builds (a recording bus on 127.0.0.1 that takes every PutEvents entry, the local
// authorization server, DynamoDB Local's tables, s3rver's claim-check bucket and the ingest of one source, which the
// forge stand-in posts to), and the ingest's API Gateway event for a source.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll } from 'vitest';
import { createIngestHandler, EventPublisher } from '../../lib/aws/index.js';
import { DedupeRecords } from '../../lib/aws/queue/dedupe-record.js';
import { ReconcileAttempts } from '../../lib/aws/reconcile/attempts.js';
import { storeAuth } from '../../lib/aws/reconcile/auth.js';
import {
  type AuthorizationServer,
  DEFAULT_CLIENT,
  FORGE_API_RESOURCE,
  startAuthorizationServer,
} from '../../local-stack/authorization-server.js';
import { createTables } from '../../local-stack/dynamodb.js';
import { type LocalS3, startS3 } from '../../local-stack/s3.js';
import type { useDynamoDbLocal } from './aws-local.js';

/** A bus that accepts every entry: each entry's `detail.delivery` and its detail, in order. */
export interface RecordingBus {
  readonly url: string;
  readonly received: string[];
  readonly details: string[];
  /** Forgets what was received. */
  clear(): void;
  close(): Promise<void>;
}

/** Starts a {@link RecordingBus} on a free port. */
export async function startRecordingBus(): Promise<RecordingBus> {
  const received: string[] = [];
  const details: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const { Entries } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        Entries: { Detail: string }[];
      };
      const ids = Entries.map((entry) => {
        received.push((JSON.parse(entry.Detail) as { delivery: string }).delivery);
        details.push(entry.Detail);
        return { EventId: `event-${received.length}` };
      });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ FailedEntryCount: 0, Entries: ids }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
    received,
    details,
    clear() {
      received.length = 0;
      details.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The API Gateway (HTTP API) event of a delivery posted to `/webhooks/<source>`. */
export function sourceEvent(
  source: string,
  headers: Record<string, string>,
  body: string,
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /webhooks/{source}',
    rawPath: `/webhooks/${source}`,
    rawQueryString: '',
    headers,
    pathParameters: { source },
    requestContext: { http: { method: 'POST', path: `/webhooks/${source}` } },
    body,
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

/**
 * What reconcile() reads and writes in the dedupe table: the ingest's records, and the reconciler's own attempts
 * (kept a day past the forge's window, backing off 10 minutes to 6 hours).
 */
export function reconcileStores(client: () => DynamoDBClient, tableName: string, windowDays: number) {
  return {
    dedupe: new DedupeRecords({ client: client(), tableName }),
    attempts: new ReconcileAttempts({
      client: client(),
      tableName,
      ttlSeconds: (windowDays + 1) * 24 * 60 * 60,
      backoffSeconds: 600,
      maxBackoffSeconds: 6 * 60 * 60,
    }),
  };
}

/** How many times each id occurs. */
export function counts(ids: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const id of ids) map.set(id, (map.get(id) ?? 0) + 1);
  return map;
}

/** A publisher onto the recording bus at `busUrl`, its claim check in `bucket` of the local S3. */
export function busPublisher(busUrl: string, s3: LocalS3, bucket: string): EventPublisher {
  return new EventPublisher({
    eventBridge: new EventBridgeClient({
      endpoint: busUrl,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    }),
    eventBusName: 'forge',
    s3: new S3Client(s3.clientConfig),
    bucket,
  });
}

/**
 * The ingest as the function builds it, with the one webhook source `source` of `forge`, signed with `secret`:
 * a delivery in, its status out.
 */
export function sourceIngest(options: {
  client: DynamoDBClient;
  dedupeTable: string;
  source: string;
  forge: string;
  secret: string;
  publisher: EventPublisher;
}): (headers: Record<string, string>, body: string) => Promise<number> {
  const handler = createIngestHandler({
    env: {
      FORGEBRIDGE_BUS_NAME: 'forge',
      FORGEBRIDGE_DEDUPE_TABLE: options.dedupeTable,
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([{ name: options.source, forge: options.forge }]),
    },
    clients: { dynamodb: options.client },
    publisher: options.publisher,
    secret: async () => [options.secret],
    logger: { info() {}, warn() {}, error() {} },
    metrics: false,
  });
  const context = { getRemainingTimeInMillis: () => 20_000 } as Context;
  return async (headers, body) =>
    ((await handler(sourceEvent(options.source, headers, body) as never, context)) as { statusCode: number })
      .statusCode;
}

/** The `FORGEBRIDGE_OAUTH_CLIENTS` entry of the local authorization server's client (the forge API's audience). */
export function localTokenEntry(issuer: string) {
  return {
    provider: 'local',
    clientId: DEFAULT_CLIENT.client_id,
    site: issuer,
    scope: 'forge:read',
    resource: FORGE_API_RESOURCE,
  };
}

/** The token store's auth for that client, its tokens in `tokensTable`. */
export function localStoreAuth(issuer: string, documentClient: DynamoDBDocumentClient, tokensTable: string) {
  return storeAuth(localTokenEntry(issuer), {
    documentClient,
    tableName: tokensTable,
    env: { IS_OFFLINE: 'true', FORGEBRIDGE_OAUTH_CLIENT_SECRET: DEFAULT_CLIENT.client_secret },
  });
}

/** What {@link useReconcileRig} builds, each part set once its `beforeAll` ran. */
export interface ReconcileRig<Forge> {
  readonly bus: RecordingBus;
  readonly authServer: AuthorizationServer;
  readonly s3: LocalS3;
  readonly publisher: EventPublisher;
  readonly forge: Forge;
  readonly tables: { readonly dedupe: string; readonly tokens: string; readonly deliveries: string };
  /** The ingest's state: `down` answers 503 without taking the delivery. */
  readonly ingest: { down: boolean };
}

/** How a suite starts its forge stand-in on the rig. */
export interface ForgeStandInParts {
  /** Posts a delivery to the source's ingest (503 while the rig's ingest is down): the stand-in's `send`. */
  send(delivery: { headers: Record<string, string>; body: string }): Promise<number>;
  /** Whether a bearer token is an access token of the local authorization server for the forge API. */
  isAccessToken(token: string): Promise<boolean>;
}

/**
 * Builds the reconciler suites' rig before the suite's tests (and takes it down after them): a recording bus, the
 * local authorization server, fresh tables, a claim-check bucket, the ingest of `source` (of `forge`, verified
 * with `secret`) and the forge stand-in `startForge` starts on them.
 */
export function useReconcileRig<Forge extends { close(): Promise<void> }>(options: {
  ddb: ReturnType<typeof useDynamoDbLocal>;
  bucket: string;
  source: string;
  forge: string;
  secret: string;
  startForge: (parts: ForgeStandInParts) => Promise<Forge>;
}): ReconcileRig<Forge> {
  const { ddb } = options;
  const parts: { -readonly [K in Exclude<keyof ReconcileRig<Forge>, 'ingest'>]?: ReconcileRig<Forge>[K] } =
    {};
  const ingestState = { down: false };
  beforeAll(async () => {
    parts.bus = await startRecordingBus();
    const authServer = await startAuthorizationServer();
    parts.authServer = authServer;
    const jwks = createRemoteJWKSet(new URL(authServer.jwksUri));
    const { dedupe, tokens } = await ddb.tables();
    parts.tables = { dedupe, tokens, deliveries: `deliveries-${randomUUID().slice(0, 8)}` };
    await createTables(ddb.endpoint, { deliveries: parts.tables.deliveries });
    parts.s3 = await startS3({ buckets: [options.bucket] });
    parts.publisher = busPublisher(parts.bus.url, parts.s3, options.bucket);
    // The ingest as the function builds it, with the one source.
    const ingest = sourceIngest({
      client: ddb.client(),
      dedupeTable: dedupe,
      source: options.source,
      forge: options.forge,
      secret: options.secret,
      publisher: parts.publisher,
    });
    parts.forge = await options.startForge({
      send: async ({ headers, body }) => (ingestState.down ? 503 : ingest(headers, body)),
      isAccessToken: async (token) => {
        try {
          await jwtVerify(token, jwks, { issuer: authServer.issuer, audience: FORGE_API_RESOURCE });
          return true;
        } catch {
          return false;
        }
      },
    });
  }, 60_000);
  afterAll(async () => {
    await parts.forge?.close();
    await parts.authServer?.stop();
    await parts.s3?.stop();
    await parts.bus?.close();
  });
  const part = <K extends keyof typeof parts>(name: K): NonNullable<(typeof parts)[K]> => {
    const value = parts[name];
    if (value === undefined) throw new Error(`the reconcile rig's ${name} is used before its beforeAll ran`);
    return value as NonNullable<(typeof parts)[K]>;
  };
  return {
    get bus() {
      return part('bus');
    },
    get authServer() {
      return part('authServer');
    },
    get s3() {
      return part('s3');
    },
    get publisher() {
      return part('publisher');
    },
    get forge() {
      return part('forge');
    },
    get tables() {
      return part('tables');
    },
    ingest: ingestState,
  };
}
