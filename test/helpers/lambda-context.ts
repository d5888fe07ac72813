// A Lambda invocation's context as a handler reads it, for calling a function's handler directly in a test.
import type { Context } from 'aws-lambda';

/** The context of one invocation of `functionName` (request `request-1`, 10 s left). */
export function lambdaContext(functionName: string, memoryLimitInMB = '512'): Context {
  return {
    functionName,
    awsRequestId: 'request-1',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB,
    functionVersion: '$LATEST',
    getRemainingTimeInMillis: () => 10_000,
  } as unknown as Context;
}
