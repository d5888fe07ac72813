// What the reconciler's integration suites (test/integration/aws/reconcile/*) share around their forge stand-in:
// a bus on 127.0.0.1 that takes every PutEvents entry and records it, and the ingest's API Gateway event for a
// source.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

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
