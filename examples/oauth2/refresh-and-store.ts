// A stored token that refreshes itself on first use after expiry and writes the fresh one back.
import { AccessToken, Client, type ConnectionOptions } from '../../lib/oauth2/index.js';

/** Anything that can keep a token map (DynamoDB in forgebridge; a Map here). */
export interface TokenStore {
  get(): Promise<Record<string, unknown>>;
  put(hash: Record<string, unknown>): Promise<void>;
}

export async function callApiWithStoredToken(
  site: string,
  store: TokenStore,
  connection: ConnectionOptions = {},
): Promise<unknown> {
  const client = new Client('forgebridge-local', 'forgebridge-local-secret', { site, connection });
  const token = AccessToken.fromHash(client, {
    ...(await store.get()),
    autoRefresh: true, // refresh before a request when expired; concurrent callers share one refresh
    onRefresh: (fresh: AccessToken) => store.put(fresh.toHash()),
  });
  const response = await token.get('api/repos');
  return response.parsed;
}
