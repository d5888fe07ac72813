// Client credentials with an RFC 8707 resource, then persisting the token as the gem's to_hash map.
// Run: npx tsx examples/oauth2/client-credentials.ts
import { AccessToken, Client, type ConnectionOptions } from '../../lib/oauth2/index.js';
import { type ExampleTarget, isMain, runExample } from './main.js';

export async function clientCredentials(
  { site, clientId, clientSecret }: ExampleTarget,
  connection: ConnectionOptions = {},
): Promise<Record<string, unknown>> {
  const client = new Client(clientId, clientSecret, { site, connection });
  const token = await client.clientCredentials.getToken({
    resource: 'urn:forgebridge:forge-api',
    scope: 'forge:read',
  });

  // Persist: a plain snake_case map (access_token, refresh_token, expires_at, mode, ...).
  const stored = JSON.stringify(token.toHash());
  // Later, maybe in another process: load it back.
  const loaded = AccessToken.fromHash(client, JSON.parse(stored));
  return { expired: loaded.expired(), expiresAt: loaded.expiresAt, tokenType: loaded.params.token_type };
}

if (isMain(import.meta.url)) await runExample((target) => clientCredentials(target));
