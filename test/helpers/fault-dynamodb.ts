/**
 * An HTTP proxy on 127.0.0.1 in front of DynamoDB Local for the fault-injection suite. It reads each request's
 * operation (`X-Amz-Target`) and item key, counts requests per operation and writes per key, and injects faults
 * on the write operations (PutItem, UpdateItem, DeleteItem by default): throttling (400
 * `ProvisionedThroughputExceededException`, not forwarded), 500 `InternalServerError` (not forwarded), and lost
 * replies (forwarded, carried out by DynamoDB Local, then the socket is destroyed). Faults are drawn from a seed,
 * the key, the operation and its attempt number, so a run with the same seed injects the same faults.
 */
import { Agent, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { Attempts, answerJson, draw, exclusiveRates, startFaultServer } from './fault-server.js';

/** Fault rates of the write operations, each from 0 to 1 (at most 1 together). */
export interface TableFaults {
  /** Answer 400 `ProvisionedThroughputExceededException` without forwarding. */
  throttleRate?: number;
  /** Answer 500 `InternalServerError` without forwarding. */
  http500Rate?: number;
  /** Forward, let DynamoDB Local carry it out, then destroy the socket. */
  lostReplyRate?: number;
  /** Operations the faults apply to. Default PutItem, UpdateItem, DeleteItem. */
  operations?: readonly string[];
  /** Other rates for the items whose key starts with a prefix (the first prefix that matches wins). */
  byKeyPrefix?: Record<string, Pick<TableFaults, 'throttleRate' | 'http500Rate' | 'lostReplyRate'>>;
  /**
   * Operations answered 400 `AccessDeniedException` every time, not forwarded: what DynamoDB answers a role whose
   * policy lacks the action (DynamoDB Local checks no IAM).
   */
  denied?: readonly string[];
}

/** What the proxy saw. */
export interface TableStats {
  /** Requests per operation (`PutItem`, `Query`, ...), faulted ones included. */
  operations: Record<string, number>;
  /** Write requests (of the faulted operations) per partition key value. */
  writesByKey: Map<string, number>;
  throttled: number;
  http500: number;
  lostReplies: number;
  /** Requests answered `AccessDeniedException`. */
  denied: number;
}

/** A running fault-injecting DynamoDB proxy. */
export interface FaultDynamoDb {
  /** `http://127.0.0.1:<port>`: the endpoint to give the clients under test. */
  readonly url: string;
  readonly stats: TableStats;
  /** Write requests of the faulted operations, in total. */
  writes(): number;
  setFaults(faults: TableFaults): void;
  /** Forgets the counters and attempt numbers (the faults stay). */
  reset(): void;
  close(): Promise<void>;
}

const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem'] as const;

function emptyStats(): TableStats {
  return { operations: {}, writesByKey: new Map(), throttled: 0, http500: 0, lostReplies: 0, denied: 0 };
}

/** The partition key value of a single-item request (`Item.pk.S` or `Key.pk.S`). */
function keyOf(raw: Buffer, partitionKey: string): string | undefined {
  try {
    const body = JSON.parse(raw.toString('utf8')) as Record<string, Record<string, { S?: unknown }>>;
    const value = (body.Item ?? body.Key)?.[partitionKey]?.S;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function fail(res: ServerResponse, status: number, type: string, message: string): void {
  answerJson(res, status, 'application/x-amz-json-1.0', {
    __type: `com.amazonaws.dynamodb.v20120810#${type}`,
    message,
  });
}

/** DynamoDB's answer to a call the caller's identity policy does not allow (the IAM refusal's own type and wording). */
function deny(res: ServerResponse, operation: string): void {
  answerJson(res, 400, 'application/x-amz-json-1.0', {
    __type: 'com.amazon.coral.service#AccessDeniedException',
    Message: `User: arn:aws:sts::000000000000:assumed-role/forgebridge-faults/function is not authorized to perform: dynamodb:${operation} on resource: arn:aws:dynamodb:us-east-1:000000000000:table/faults because no identity-based policy allows the dynamodb:${operation} action`,
  });
}

/**
 * Starts the proxy in front of `target` (DynamoDB Local's endpoint). Faults default to none.
 *
 * @example
 * ```ts
 * const table = await startFaultDynamoDb({ target: ddb.endpoint, faults: { lostReplyRate: 0.05 } });
 * process.env.AWS_ENDPOINT_URL_DYNAMODB = table.url;
 * ```
 */
export async function startFaultDynamoDb(options: {
  target: string;
  seed?: number;
  faults?: TableFaults;
  /** Partition key attribute whose value keys the draws and the per-key counts. Default `pk`. */
  partitionKey?: string;
}): Promise<FaultDynamoDb> {
  const target = new URL(options.target);
  const seed = options.seed ?? 1;
  const partitionKey = options.partitionKey ?? 'pk';
  let faults = normalise(options.faults ?? {});
  let stats = emptyStats();
  const attempts = new Attempts();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  function rates(given: Pick<TableFaults, 'throttleRate' | 'http500Rate' | 'lostReplyRate'>) {
    return exclusiveRates(['throttleRate', 'http500Rate', 'lostReplyRate'], given);
  }

  function normalise(given: TableFaults) {
    return {
      ...rates(given),
      denied: new Set<string>(given.denied ?? []),
      operations: new Set<string>(given.operations ?? WRITES),
      byKeyPrefix: Object.entries(given.byKeyPrefix ?? {}).map(([prefix, other]) => ({
        prefix,
        ...rates(other),
      })),
    };
  }

  const forward = (req: IncomingMessage, res: ServerResponse, raw: Buffer, dropReply: boolean) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => {
          if (dropReply) {
            // DynamoDB Local carried the write out; the caller never hears of it.
            req.socket.destroy();
            return;
          }
          res.writeHead(reply.statusCode ?? 500, reply.headers);
          res.end(Buffer.concat(chunks));
        });
        reply.on('error', () => req.socket.destroy());
      },
    );
    upstream.on('error', () => req.socket.destroy());
    upstream.end(raw);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => {
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    stats.operations[operation] = (stats.operations[operation] ?? 0) + 1;
    if (faults.denied.has(operation)) {
      stats.denied += 1;
      deny(res, operation);
      return;
    }
    if (!faults.operations.has(operation)) {
      forward(req, res, raw, false);
      return;
    }
    const key = keyOf(raw, partitionKey) ?? '(no key)';
    stats.writesByKey.set(key, (stats.writesByKey.get(key) ?? 0) + 1);
    const { throttleRate, http500Rate, lostReplyRate } =
      faults.byKeyPrefix.find(({ prefix }) => key.startsWith(prefix)) ?? faults;
    const u = draw(seed, operation, key, attempts.next(`${operation}\u0000${key}`));
    if (u < throttleRate) {
      stats.throttled += 1;
      fail(
        res,
        400,
        'ProvisionedThroughputExceededException',
        'The level of configured provisioned throughput for the table was exceeded (injected)',
      );
      return;
    }
    if (u < throttleRate + http500Rate) {
      stats.http500 += 1;
      fail(res, 500, 'InternalServerError', 'Internal server error (injected)');
      return;
    }
    const lost = u < throttleRate + http500Rate + lostReplyRate;
    if (lost) stats.lostReplies += 1;
    forward(req, res, raw, lost);
  };

  const proxy = await startFaultServer('fault dynamodb proxy', handle);

  return {
    url: proxy.url,
    get stats() {
      return stats;
    },
    writes() {
      let total = 0;
      for (const count of stats.writesByKey.values()) total += count;
      return total;
    },
    setFaults(given) {
      faults = normalise(given);
    },
    reset() {
      stats = emptyStats();
      attempts.clear();
    },
    async close() {
      agent.destroy();
      await proxy.close();
    },
  };
}
