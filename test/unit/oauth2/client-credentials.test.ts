import { afterEach, describe, expect, it } from 'vitest';
import { AccessToken } from '../../../lib/oauth2/index.js';
import { type Captured, JSON_HEADERS, mockAgent, mockClient, normalizeHeaders, SITE } from './helpers.js';

describe('clientCredentials.getToken()', () => {
  const agent = mockAgent();
  afterEach(() => agent.assertNoPendingInterceptors());

  it('posts grant_type=client_credentials with extras and basic auth, and builds an AccessToken', async () => {
    let seen: Captured | undefined;
    agent
      .get(SITE)
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(
        200,
        (opts) => {
          seen = {
            body: String(opts.body),
            headers: normalizeHeaders(opts.headers),
            path: opts.path,
            method: opts.method,
          };
          return { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600 };
        },
        JSON_HEADERS,
      );
    const client = mockClient(agent);
    const token = await client.clientCredentials.getToken({ resource: 'https://api.example.test' });
    expect(token).toBeInstanceOf(AccessToken);
    expect(token.token).toBe('at-1');
    expect(token.params.token_type).toBe('Bearer');
    expect(seen?.body).toBe('grant_type=client_credentials&resource=https%3A%2F%2Fapi.example.test');
    expect(seen?.headers.authorization).toBe(
      `Basic ${Buffer.from('client-id:client-secret').toString('base64')}`,
    );
    expect(seen?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });
});
