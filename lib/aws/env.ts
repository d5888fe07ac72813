import { NodeHttpHandler } from '@smithy/node-http-handler';
/**
 * Reading a function's configuration from its environment. Every variable is named in serverless.yml
 * (`provider.environment` and `functions.*.environment`) and documented in docs/configuration.md.
 */

/** The environment the functions read; `process.env` unless a test passes its own. */
export type Env = Record<string, string | undefined>;

/**
 * A required variable: a `TypeError` naming it when it is missing or empty, so a misconfigured function fails at
 * its cold start instead of on the first delivery.
 */
export function requireEnv(name: string, env: Env = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') throw new TypeError(`environment variable "${name}" is required`);
  return value;
}

/** An optional variable: `undefined` when it is missing or empty. */
export function optionalEnv(name: string, env: Env = process.env): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * An optional positive number: `undefined` when missing or empty (the library default then applies), a
 * `TypeError` naming the variable when it is not a positive number.
 */
export function numberEnv(name: string, env: Env = process.env): number | undefined {
  const value = optionalEnv(name, env);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) {
    throw new TypeError(`environment variable "${name}" must be a positive number`);
  }
  return number;
}

/**
 * SDK client options with socket timeouts: a stalled AWS call fails (and can be retried) within the caller's
 * budget instead of hanging until the Lambda timeout. A call that timed out may still have been carried out.
 */
export function sdkTimeouts(requestTimeoutMs = 5_000) {
  return {
    requestHandler: {
      connectionTimeout: 1_000,
      requestTimeout: requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  };
}

/**
 * {@link sdkTimeouts} on an HTTP/1.1 handler, for a client whose default is HTTP/2 (Kinesis's, for
 * SubscribeToShard): PutRecord and GetRecords need no HTTP/2, and a local Kinesis (kinesalite) speaks HTTP/1.1 only.
 */
export function sdkHttp1Timeouts(requestTimeoutMs = 5_000) {
  return { requestHandler: new NodeHttpHandler(sdkTimeouts(requestTimeoutMs).requestHandler) };
}

/** What {@link withoutSdkCallLog} needs of a client: its middleware stack. */
export interface SdkClientLike {
  middlewareStack: { remove(toRemove: string): boolean };
}

/**
 * Takes the AWS SDK's per-call log step out of a client, and returns the client. On every call that step builds
 * a redacted copy of the command's input and output for the client's logger, even when the logger is the
 * SDK's default one, which drops it: for a `PutEvents` that is the whole delivery again. The functions build
 * their own clients this way; the SDK's warnings (`logger.warn`) are not affected. Give a client you hand to a
 * handler the same treatment unless you set a `logger` on it to see each call.
 */
export function withoutSdkCallLog<C extends SdkClientLike>(client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}
