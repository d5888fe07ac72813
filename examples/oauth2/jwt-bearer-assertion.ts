// The JWT bearer grant (RFC 7523 §2.1): a signed assertion about a subject buys a token for it.
import { Client, type ConnectionOptions, type SigningKey } from '../../lib/oauth2/index.js';

export async function assertionGrant(
  site: string,
  signingKey: SigningKey,
  connection: ConnectionOptions = {},
): Promise<string> {
  const client = new Client('forgebridge-local', 'forgebridge-local-secret', { site, connection });
  const now = Math.floor(Date.now() / 1000);
  const token = await client.assertion.getToken(
    { iss: 'https://ci.example.test', sub: 'alice', aud: client.tokenUrl(), exp: now + 300 },
    { algorithm: 'ES256', key: signingKey },
    { scope: 'openid' },
  );
  return token.token;
}
