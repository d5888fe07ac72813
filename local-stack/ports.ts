/**
 * Ports for the local servers: every one of them binds 127.0.0.1 only.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A free port on 127.0.0.1 (listen on port 0, read it, close).
 *
 * @example
 * ```ts
 * const port = await freePort();
 * ```
 * @see https://nodejs.org/api/net.html#serverlistenport-host-backlog-callback
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
