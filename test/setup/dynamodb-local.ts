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
  // The client compiler only and the serial collector, as the local stack runs it: the JVM's JIT threads cost more CPU
  // than the tests' requests gain from the optimizing compiler (measured: 25 CPU-s against 14 for the ingest's
  // fault, token-store and durable-queue files).
  const local = await startDynamoDbLocal({ javaOptions: ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] });
  project.provide('dynamodbLocalEndpoint', local.endpoint);
  return () => local.stop();
}
