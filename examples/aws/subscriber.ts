// A subscriber of your own: the delivery from the bus (a claim check resolved), then the forge API with a token
// from the DynamoDB token store, served from memory while fresh and refreshed once across all processes.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { type DeliveryDetail, resolveDelivery, TokenStore } from '../../lib/aws/index.js';
import { AccessToken, Client } from '../../lib/oauth2/index.js';

const s3 = new S3Client({});
const forge = new Client('ci-bot', process.env.CLIENT_SECRET, { site: 'https://forge.example.com' });
const tokens = new TokenStore({
  client: DynamoDBDocumentClient.from(new DynamoDBClient({})),
  tableName: 'forgebridge-prod-tokens',
  key: { provider: 'forge', clientId: 'ci-bot', scope: 'repo' },
  fromHash: (hash) => AccessToken.fromHash(forge, hash),
  fetchToken: () => forge.clientCredentials.getToken({ scope: 'repo' }),
});

export const handler = middy(async (event: EventBridgeEvent<'issues.opened', DeliveryDetail>) => {
  const { payload } = await resolveDelivery(event, { s3 });
  const { repository, issue } = payload as { repository: { full_name: string }; issue: { number: number } };
  const token = await tokens.get();
  const response = await token.get(`api/v1/repos/${repository.full_name}/issues/${issue.number}`);
  return response.status;
});
