// The AWS clients the ingest's unit tests mock (aws-sdk-client-mock), set up once here: each is reset before every
// test to the happy path of a delivery (every DynamoDB write succeeds, EventBridge takes every entry, S3 stores
// every object). A test, or a suite's own `beforeEach` registered after this one, changes one answer with `.on()`.
import {
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach } from 'vitest';

/** Mocks DynamoDB (both clients), EventBridge and S3 for the file, reset to the happy path before each test. */
export function useIngestMocks() {
  const mocks = {
    dynamo: mockClient(DynamoDBClient),
    documents: mockClient(DynamoDBDocumentClient),
    events: mockClient(EventBridgeClient),
    s3: mockClient(S3Client),
  };
  beforeEach(() => {
    for (const mock of Object.values(mocks)) mock.reset();
    mocks.dynamo.on(PutItemCommand).resolves({});
    mocks.dynamo.on(UpdateItemCommand).resolves({});
    mocks.dynamo.on(DeleteItemCommand).resolves({});
    mocks.documents.on(PutCommand).resolves({});
    mocks.events.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'event-1' }] });
    mocks.s3.on(PutObjectCommand).resolves({});
  });
  return mocks;
}
