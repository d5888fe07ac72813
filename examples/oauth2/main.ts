// Shared runner of the oauth2 examples: with OAUTH_SITE, OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET set it runs
// an example against that provider; without them it starts the local authorization server (a real
// oidc-provider on 127.0.0.1, see local-stack/authorization-server.ts) and runs against it.
import { pathToFileURL } from 'node:url';

/** What every example takes. */
export interface ExampleTarget {
  site: string;
  clientId: string;
  clientSecret: string;
}

/** True when `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === moduleUrl;
}

/** Runs `example` against the provider from the environment, or against the local authorization server. */
export async function runExample(example: (target: ExampleTarget) => Promise<unknown>): Promise<void> {
  const { OAUTH_SITE, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET } = process.env;
  if (OAUTH_SITE && OAUTH_CLIENT_ID && OAUTH_CLIENT_SECRET) {
    console.log(
      await example({ site: OAUTH_SITE, clientId: OAUTH_CLIENT_ID, clientSecret: OAUTH_CLIENT_SECRET }),
    );
    return;
  }
  const local = await import('../../local-stack/authorization-server.js');
  const server = await local.startAuthorizationServer();
  try {
    const { client_id: clientId, client_secret: clientSecret } = local.DEFAULT_CLIENT;
    console.log(await example({ site: server.issuer, clientId, clientSecret }));
  } finally {
    await server.stop();
  }
}
