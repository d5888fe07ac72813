// private_key_jwt client authentication (RFC 7523 §2.2): the library signs the client_assertion.
import { Client, type ConnectionOptions, type SigningKey } from '../../lib/oauth2/index.js';

export async function privateKeyJwt(
  site: string,
  clientId: string,
  privateKey: SigningKey,
  connection: ConnectionOptions = {},
): Promise<string> {
  const client = new Client(clientId, undefined, {
    site,
    authScheme: 'private_key_jwt',
    privateKey, // PEM, JWK, CryptoKey or KeyObject
    privateKeyAlg: 'ES256',
    connection,
  });
  const token = await client.clientCredentials.getToken();
  return token.token;
}
