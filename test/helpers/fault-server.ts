/**
 * What the fault injectors (fault-eventbridge.ts, fault-dynamodb.ts) share: seeded draws, attempt numbers, fault
 * rates checked the same way, an AWS JSON error or answer with its length, and the node:http server on 127.0.0.1
 * that reads each request's whole body before handing it over.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A number in [0, 1) fixed by `seed` and `parts` (the same draw whatever order requests arrive in). */
export function draw(seed: number, ...parts: (string | number)[]): number {
  const digest = createHash('sha256')
    .update(`${seed}\u0000${parts.join('\u0000')}`)
    .digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Checks a fault rate: a number from 0 to 1. */
export function checkRate(name: string, value: number | undefined): number {
  const rate = value ?? 0;
  if (!(rate >= 0 && rate <= 1)) throw new TypeError(`"${name}" must be a number from 0 to 1`);
  return rate;
}

/**
 * Checks the rates of faults that exclude each other (one draw picks at most one of them): each from 0 to 1, and
 * at most 1 together. The result has every name, 0 for the ones not given.
 */
export function exclusiveRates<Name extends string>(
  names: readonly Name[],
  given: Partial<Record<Name, number>>,
): Record<Name, number> {
  const rates = Object.fromEntries(names.map((name) => [name, checkRate(name, given[name])])) as Record<
    Name,
    number
  >;
  if (names.reduce((sum, name) => sum + rates[name], 0) > 1) {
    const quoted = names.map((name) => `"${name}"`);
    throw new TypeError(`${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)} must add up to at most 1`);
  }
  return rates;
}

/** Counts occurrences per key: the 0-based attempt number of the next request about it. */
export class Attempts {
  readonly #seen = new Map<string, number>();

  next(key: string): number {
    const n = this.#seen.get(key) ?? 0;
    this.#seen.set(key, n + 1);
    return n;
  }

  clear(): void {
    this.#seen.clear();
  }
}

/** Answers `body` as JSON of the given AWS content type, with its length and any extra headers. */
export function answerJson(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A fault injector's server, listening. */
export interface FaultServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly server: Server;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 and a free port that reads each request's whole body and calls `handle` with it;
 * a request that breaks off midway loses its socket. `name` says whose server has no address, should that happen.
 */
export async function startFaultServer(
  name: string,
  handle: (req: IncomingMessage, res: ServerResponse, raw: Buffer) => void,
): Promise<FaultServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
    req.on('error', () => req.socket.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error(`${name} has no address`);
  return {
    url: `http://127.0.0.1:${address.port}`,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
