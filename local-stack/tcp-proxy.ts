// A small TCP proxy on 127.0.0.1 (node:net) that can be stopped and started again on the same port. The
// end-to-end tests put it between the ingest and the local EventBridge to make the bus fail on demand.
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** Port the proxy forwards to, on `targetHost`. */
  targetPort: number;
  /** Default `127.0.0.1`. */
  targetHost?: string;
  /** Port to listen on. Default: a free one (port 0). */
  port?: number;
}

/** A running (or stopped) proxy. */
export interface TcpProxy {
  /** The port it listens on; it keeps it across `stop()` / `start()`. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Whether it accepts connections now. */
  readonly listening: boolean;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Stops listening and drops every open connection, so clients see refused connections. */
  stop(): Promise<void>;
}

async function listen(server: Server, port: number): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('tcp proxy has no address');
  return address.port;
}

/**
 * Starts a TCP proxy in front of `targetHost:targetPort`.
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy({ targetPort: busPort });
 * await proxy.stop(); // the bus now "fails"
 * await proxy.start();
 * ```
 * @see https://nodejs.org/api/net.html
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const targetHost = options.targetHost ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = createConnection({ host: targetHost, port: options.targetPort });
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  let port = await listen(server, options.port ?? 0);
  let listening = true;

  return {
    get port() {
      return port;
    },
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get listening() {
      return listening;
    },
    async start() {
      if (listening) return;
      port = await listen(server, port);
      listening = true;
    },
    async stop() {
      if (!listening) return;
      listening = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
