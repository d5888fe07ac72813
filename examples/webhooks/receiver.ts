// A local webhook receiver: the middleware on 127.0.0.1, logging every verified event.
//
//   npx tsx examples/webhooks/receiver.ts          # prints its URL and a dev secret
//   WEBHOOK_SECRET=... PORT=3000 npx tsx examples/webhooks/receiver.ts
//
// Point a forge webhook (content type application/json) or `examples/webhooks/send-delivery.ts` at the URL.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Webhooks } from '../../lib/webhooks/index.js';

export interface ReceiverOptions {
  /** Port on 127.0.0.1; 0 picks a free one. Default 3000. */
  port?: number;
  /** Secret the sender signs with. Default: a random dev secret. */
  secret?: string;
  /** Path deliveries are posted to. Default `/webhooks`. */
  path?: string;
  /** Where event lines go. Default `console.log`. */
  log?: (line: string) => void;
}

export interface Receiver {
  url: string;
  secret: string;
  webhooks: Webhooks;
  close(): Promise<void>;
}

export async function start(options: ReceiverOptions = {}): Promise<Receiver> {
  const { port = 3000, path = '/webhooks', log = console.log } = options;
  const secret = options.secret ?? `dev-${randomBytes(16).toString('hex')}`;
  const webhooks = new Webhooks({ secret, path });

  webhooks.on('*', ({ id, name, payload }) => {
    const action = (payload as { action?: unknown }).action;
    log(`verified ${typeof action === 'string' ? `${name}.${action}` : name} (delivery ${id})`);
  });
  // Failed handlers, and every delivery the middleware refuses (forged, misconfigured): the code, never secrets.
  webhooks.onError((error) => {
    const what = error.code === 'handler_failed' ? 'handler failed' : 'refused';
    log(`${what}: ${error.code} for ${error.event?.name ?? 'unknown event'}`);
  });

  const server: Server = createServer(webhooks.middleware);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}${path}`,
    secret,
    webhooks,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const fromEnv = process.env.WEBHOOK_SECRET;
  const receiver = await start({
    port: Number(process.env.PORT ?? 3000),
    ...(fromEnv ? { secret: fromEnv } : {}),
  });
  console.log(`webhook receiver listening on ${receiver.url}`);
  // A generated development secret only: a secret from the environment is never printed.
  console.log(
    fromEnv ? 'secret: from WEBHOOK_SECRET' : `dev secret (for local testing only): ${receiver.secret}`,
  );
  const stop = () => void receiver.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
