/**
 * fauxqs (an SQS API server, on npm) for the local stack's queues: the subscriber rules' dead-letter queue, so
 * `forgebridge dlq` works locally as on a stage. 127.0.0.1, a free port, the queues created up front, in memory.
 *
 * serverless-offline's EventBridge plugin does not dead-letter an event its target failed; a message gets there as
 * EventBridge would put it (the event as the body, `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE`, `ERROR_MESSAGE` as
 * attributes), which is how the tests fill it.
 *
 * @see https://github.com/kibertoad/fauxqs#readme
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
import { CreateQueueCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

/** A running fauxqs. */
export interface LocalSqs {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Client settings that reach it (endpoint, region, dummy credentials). */
  clientConfig: SQSClientConfig;
  /** Each queue's URL, by name. */
  queueUrls: Readonly<Record<string, string>>;
  /** Closes the server (its messages are gone). Safe to call twice. */
  stop(): Promise<void>;
}

/** Client settings for a fauxqs endpoint. */
export function localSqsClientConfig(endpoint: string): SQSClientConfig {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  };
}

/**
 * Starts fauxqs on 127.0.0.1 (its own `startFauxqs` listens on every interface) with `queues` created.
 *
 * @example
 * ```ts
 * const sqs = await startSqs({ queues: ['forgebridge-local-subscriber-dlq'] });
 * await sqs.stop();
 * ```
 */
export async function startSqs(
  options: { queues?: readonly string[]; port?: number } = {},
): Promise<LocalSqs> {
  const app = buildApp({ logger: false, host: '127.0.0.1' });
  const endpoint = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
  };
  const clientConfig = localSqsClientConfig(endpoint);
  const client = new SQSClient(clientConfig);
  const queueUrls: Record<string, string> = {};
  try {
    for (const name of options.queues ?? []) {
      const created = await client.send(
        new CreateQueueCommand({
          QueueName: name,
          // What the template gives the dead-letter queue: 14 days.
          Attributes: { MessageRetentionPeriod: '1209600' },
        }),
      );
      if (created.QueueUrl === undefined) throw new Error(`fauxqs created no URL for queue "${name}"`);
      queueUrls[name] = created.QueueUrl;
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, clientConfig, queueUrls, stop };
}
