/**
 * A token refresher in its own process, for the cross-process single-flight test: it builds its own DynamoDB
 * client, OAuth client (lib/aws' `clientTarget`, as the functions build it) and TokenStore (nothing shared with its siblings but DynamoDB Local), prints `ready`,
 * waits for a `go` line on stdin (so every process starts together), calls `refresh()` on `FB_STORES` fresh
 * stores at once, and prints one JSON line: `{ "tokens": ["…"], "outcomes": ["refreshed" | "waited" | …] }`.
 *
 * Run: `node --import tsx test/helpers/aws-token-refresher.ts` with FB_ENDPOINT, FB_TABLE, FB_ISSUER,
 * FB_CLIENT_ID, FB_CLIENT_SECRET, FB_SCOPE, FB_RESOURCE, FB_STORES.
 */
import { createInterface } from 'node:readline';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TokenStore } from '../../lib/aws/index.js';
import { clientTarget } from '../../lib/aws/tokens/token-source.js';
import type { AccessToken } from '../../lib/oauth2/index.js';
import { localClientConfig } from '../../local-stack/dynamodb.js';

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new TypeError(`environment variable "${name}" is required`);
  return value;
}

const config = {
  provider: 'local',
  clientId: env('FB_CLIENT_ID'),
  site: env('FB_ISSUER'),
  scope: env('FB_SCOPE'),
  resource: env('FB_RESOURCE'),
};
const stores = Array.from(
  { length: Number(env('FB_STORES')) },
  () =>
    new TokenStore<AccessToken>({
      ...clientTarget(config, env('FB_CLIENT_SECRET')),
      client: DynamoDBDocumentClient.from(new DynamoDBClient(localClientConfig(env('FB_ENDPOINT')))),
      tableName: env('FB_TABLE'),
      pollMs: 50,
      waitMs: 15_000,
    }),
);

process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === 'go') break;
lines.close();
const results = await Promise.all(stores.map((store) => store.refresh()));
process.stdout.write(
  `${JSON.stringify({ tokens: results.map((result) => result.token.token), outcomes: results.map((result) => result.outcome) })}\n`,
);
process.exit(0);
