// Authorization code with PKCE (S256): build the authorize URL, then exchange the code from the callback.
// The browser step is yours; see test/integration/oauth2 for a full run through oidc-provider.
import { Client, type ConnectionOptions, generateCodeVerifier } from '../../lib/oauth2/index.js';

export function startLogin(
  client: Client,
  redirectUri: string,
): { url: string; verifier: string; state: string } {
  const verifier = generateCodeVerifier(); // keep it in the user's session
  const state = generateCodeVerifier();
  const url = client.authCode.authorizeUrl({
    redirect_uri: redirectUri,
    scope: 'openid',
    state,
    code_verifier: verifier, // becomes code_challenge + code_challenge_method=S256
  });
  return { url, verifier, state };
}

export async function finishLogin(
  client: Client,
  callbackUrl: string,
  session: { verifier: string; state: string; redirectUri: string },
): Promise<string> {
  const params = new URL(callbackUrl).searchParams;
  if (params.get('state') !== session.state) throw new Error('state mismatch');
  const code = params.get('code');
  if (code === null) throw new Error(`authorization failed: ${params.get('error') ?? 'no code'}`);
  const token = await client.authCode.getToken(code, {
    redirect_uri: session.redirectUri,
    code_verifier: session.verifier,
  });
  return token.token;
}

export function makeClient(site: string, connection: ConnectionOptions = {}): Client {
  return new Client('web-app', 'web-app-secret', { site, connection });
}
