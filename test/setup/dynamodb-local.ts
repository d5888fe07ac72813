// The integration project's one DynamoDB Local (vitest `globalSetup`): started before the first file, stopped
// after the last. Every file makes tables of its own (unique names, test/helpers/aws-local.ts), so the files share
// the server instead of each paying a Java start and a cold JVM.
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local-stack/dynamodb.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared DynamoDB Local's endpoint (`http://127.0.0.1:<port>`). */
    dynamodbLocalEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const local = await startDynamoDbLocal();
  project.provide('dynamodbLocalEndpoint', local.endpoint);
  return () => local.stop();
}
