/**
 * Real local AWS peers for the lib/aws integration tests: DynamoDB Local (Java), shared by the integration
 * project's files (test/setup/dynamodb-local.ts), and s3rver, started per test file on 127.0.0.1 and a free port.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import {
  createTables,
  type DynamoDbLocal,
  localClientConfig,
  startDynamoDbLocal,
} from '../../local-stack/dynamodb.js';

/**
 * DynamoDB Local for the current test file (the shared server, or one of its own when there is none). `documentClient()` gives a NEW client each call (its own
 * connection pool, nothing shared), `tables()` creates a fresh pair of tables with unique names.
 *
 * @example
 * ```ts
 * const ddb = useDynamoDbLocal();
 * it('…', async () => { const { dedupe } = await ddb.tables(); });
 * ```
 */
export function useDynamoDbLocal() {
  let local: Pick<DynamoDbLocal, 'endpoint' | 'clientConfig'> | undefined;
  let own: DynamoDbLocal | undefined;
  const clients: DynamoDBClient[] = [];
  beforeAll(async () => {
    // The integration project's shared server (test/setup/dynamodb-local.ts); a run without it starts its own.
    const shared = inject('dynamodbLocalEndpoint');
    if (typeof shared === 'string') {
      local = { endpoint: shared, clientConfig: localClientConfig(shared) };
    } else {
      own = await startDynamoDbLocal();
      local = own;
    }
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await own?.stop();
  });
  return {
    get endpoint(): string {
      if (local === undefined) throw new Error('dynamodb local is not running');
      return local.endpoint;
    },
    /** A raw client with its own connections. */
    client(): DynamoDBClient {
      if (local === undefined) throw new Error('dynamodb local is not running');
      const client = new DynamoDBClient(local.clientConfig);
      clients.push(client);
      return client;
    },
    /** A DocumentClient with its own connections (undefined values dropped, as the functions configure it). */
    documentClient(): DynamoDBDocumentClient {
      return DynamoDBDocumentClient.from(this.client(), { marshallOptions: { removeUndefinedValues: true } });
    },
    /** Creates a dedupe and a token table with unique names. */
    async tables(): Promise<{ dedupe: string; tokens: string }> {
      const suffix = randomUUID().slice(0, 8);
      const names = { dedupe: `dedupe-${suffix}`, tokens: `tokens-${suffix}` };
      await createTables(this.endpoint, names);
      return names;
    },
  };
}
