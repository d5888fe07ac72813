// What the forges' delivery-log stand-ins (github-deliveries.ts, gitlab-events.ts) share: a JSON answer that is
// also recorded, so that the tests can validate every answer against the forge's published description, and a
// server on 127.0.0.1 that reads each request whole before routing it.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** How a stand-in delivers to the stack (the ingest's URL behind it): resolves with the HTTP status. */
export type SendDelivery = (request: {
  headers: Record<string, string>;
  body: string;
  /** The hook's own URL, for a hook created through the stand-in's hooks API (else the stand-in's target). */
  url?: string;
}) => Promise<number>;

/** One answer a stand-in sent. */
export interface RecordedAnswer<Operation extends string> {
  method: string;
  /** The route's operation (`list`, `redeliver`, `error`, ...). */
  operation: Operation;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** Set on an answer broken on purpose (the `malformed` fault): it does not conform, by design. */
  fault?: 'malformed';
}

/** Answers `body` as JSON with the stand-in's own headers first, and records the answer in `responses`. */
export function recordingAnswer<Operation extends string>(
  responses: RecordedAnswer<Operation>[],
  baseHeaders: Record<string, string>,
) {
  return (
    req: IncomingMessage,
    res: ServerResponse,
    operation: Operation,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    fault?: 'malformed',
  ): void => {
    const all = { ...baseHeaders, ...headers };
    responses.push({
      method: req.method ?? '',
      operation,
      path: req.url ?? '',
      status,
      headers: all,
      body,
      ...(fault === undefined ? {} : { fault }),
    });
    res.writeHead(status, all);
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
}

/** A stand-in's server: its port, and `close()` that drops open connections. */
export interface StandInServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `route` on 127.0.0.1 (`port`, or a free one); a route that throws answers 500. */
export async function serveStandIn(
  route: (req: IncomingMessage, res: ServerResponse, body: string) => Promise<unknown>,
  port = 0,
): Promise<StandInServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      route(req, res, Buffer.concat(chunks).toString('utf8')).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
