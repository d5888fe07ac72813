import { describe, expect, it } from 'vitest';
import { readOAuthClients } from '../../../functions/shared/oauth-clients.js';

describe('functions/shared/oauth-clients readOAuthClients()', () => {
  it('is empty when FORGEBRIDGE_OAUTH_CLIENTS is unset', () => {
    expect(readOAuthClients({})).toEqual([]);
  });

  it('parses every field of each client', () => {
    const clients = readOAuthClients({
      FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
        {
          provider: 'forge',
          clientId: 'bot',
          site: 'https://forge.example.com',
          scope: 'repo',
          resource: 'urn:api',
          tokenUrl: 'oauth/token',
          secretParameter: '/p/bot',
          secretEnv: 'BOT_SECRET',
        },
      ]),
    });
    expect(clients).toEqual([
      {
        provider: 'forge',
        clientId: 'bot',
        site: 'https://forge.example.com',
        scope: 'repo',
        resource: 'urn:api',
        tokenUrl: 'oauth/token',
        secretParameter: '/p/bot',
        secretEnv: 'BOT_SECRET',
      },
    ]);
  });

  it('names the malformed field', () => {
    expect(() => readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: '{' })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_OAUTH_CLIENTS" must be a json array'),
    );
    expect(() => readOAuthClients({ FORGEBRIDGE_OAUTH_CLIENTS: '{}' })).toThrow(/must be a json array/);
    expect(() =>
      readOAuthClients({
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([{ provider: 'forge', site: 'https://f' }]),
      }),
    ).toThrow(new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" is required'));
    expect(() =>
      readOAuthClients({
        FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([{ provider: 'forge', clientId: 1, site: 'https://f' }]),
      }),
    ).toThrow(new TypeError('"FORGEBRIDGE_OAUTH_CLIENTS[0].clientId" must be a string'));
  });
});
