/**
 * Ports for the local servers: every one of them binds 127.0.0.1 only.
 */
import { once } from 'node:events';
import { connect, createServer } from 'node:net';

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

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
