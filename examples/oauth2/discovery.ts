// OpenID Connect discovery: endpoints come from <issuer>/.well-known/openid-configuration (or RFC 8414).
// Run: npx tsx examples/oauth2/discovery.ts
import { Client, type ConnectionOptions } from '../../lib/oauth2/index.js';
import { type ExampleTarget, isMain, runExample } from './main.js';

export async function discover(
  { site, clientId, clientSecret }: ExampleTarget,
  connection: ConnectionOptions = {},
): Promise<{ tokenUrl: string; grants: unknown }> {
  const client = await Client.discover(site, clientId, clientSecret, { connection });
  return { tokenUrl: client.tokenUrl(), grants: client.metadata?.grant_types_supported };
}

if (isMain(import.meta.url)) await runExample((target) => discover(target));
