// Error handling: OAuth2Error carries the provider's error code, description and the response.
import { Client, type ConnectionOptions, OAuth2Error } from '../../lib/oauth2/index.js';

export async function tryBadSecret(site: string, connection: ConnectionOptions = {}): Promise<string> {
  const client = new Client('forgebridge-local', 'wrong-secret', { site, connection });
  try {
    await client.clientCredentials.getToken();
    return 'unexpected success';
  } catch (error) {
    if (error instanceof OAuth2Error) return `${error.code} (${error.response.status})`;
    throw error;
  }
}

export async function withoutThrowing(site: string, connection: ConnectionOptions = {}): Promise<number> {
  const client = new Client('forgebridge-local', 'wrong-secret', { site, raiseErrors: false, connection });
  const response = await client.request('POST', 'oauth/token', {
    body: { grant_type: 'client_credentials' },
  });
  return response.error ? response.status : 0;
}
