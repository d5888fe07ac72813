// createForgeApi(): the stored token goes to the configured API's origin only, never to an absolute URL elsewhere
// (one a subscriber took from a payload).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createForgeApi } from '../../../../lib/aws/index.js';

const documents = mockClient(DynamoDBDocumentClient);
const ssm = mockClient(SSMClient);

const env = {
  FORGEBRIDGE_FORGE_API_URL: 'https://api.github.com/',
  FORGEBRIDGE_TOKEN_TABLE: 'tokens',
  FORGEBRIDGE_OAUTH_CLIENTS: JSON.stringify([
    { provider: 'forge', clientId: 'bot', site: 'https://auth.example.com', secretParameter: '/p/bot' },
  ]),
};

beforeEach(() => {
  documents.reset();
  ssm.reset();
  documents.onAnyCommand().rejects(new Error('token store unreachable in this test'));
  ssm.onAnyCommand().rejects(new Error('ssm unreachable in this test'));
});

const api = () =>
  createForgeApi({
    env,
    clients: { dynamodb: new DynamoDBClient({ region: 'us-east-1' }), ssm: new SSMClient({}) },
  });

describe('createForgeApi().get()', () => {
  it.each([
    'https://evil.example/repos/a/b',
    'http://api.github.com/repos/a/b',
    'https://api.github.com.evil.example/x',
    'https://api.github.com:8443/x',
    'HTTPS://EVIL.EXAMPLE/x',
    'file:///etc/passwd',
    'ftp://api.github.com/x',
  ])('refuses %s before any token is read', async (url) => {
    await expect(api().get(url)).rejects.toThrow(
      new TypeError('"path" must be relative to the forge api or on its origin (https://api.github.com)'),
    );
    expect(documents.calls().length + ssm.calls().length).toBe(0);
  });

  it.each(['/repos/a/b/issues/1', 'repos/a/b', 'https://api.github.com/repos/a/b'])(
    'reads the token for %s',
    async (path) => {
      // Past the origin check, the token source reads the client's secret (unreachable here).
      await expect(api().get(path)).rejects.toThrow('parameter "/p/bot" could not be read');
    },
  );
});
