// The unit project runs its files in one module context (`isolate: false` in vitest.config.ts): an
// aws-sdk-client-mock stub lives on an SDK client's prototype, so one a file left in place would answer the next
// file's calls. Every stub still in place is undone after each file.
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll } from 'vitest';

const CLIENTS = [
  CloudFormationClient,
  DynamoDBClient,
  DynamoDBDocumentClient,
  EventBridgeClient,
  LambdaClient,
  S3Client,
  SSMClient,
];

afterAll(() => {
  for (const Client of CLIENTS) {
    // A sinon stub (what aws-sdk-client-mock installs) carries its own `restore`; the SDK's method does not.
    (Client.prototype.send as { restore?: () => void }).restore?.();
  }
});
