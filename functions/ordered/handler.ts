/**
 * The example ordered subscriber, on every `pull_request` action (GitHub, Gitea and Forgejo payloads), fed by the
 * ordered stream (docs/ordering.md): the deliveries of one pull request reach it one at a time, in the order the
 * ingest accepted them, while other pull requests' go on beside them. For each it logs one `ordered delivery
 * handled` line with the delivery id, the resource (`octo/hello#pr:42`) and when its handling started and ended
 * (epoch ms), after `FORGEBRIDGE_EXAMPLE_WORK_MS` (default 300) of stand-in work, so that two at once would show.
 * It refuses a payload whose `pull_request.updated_at` is not a date (a malformed delivery): that record is retried,
 * holding up the keys of its shard slot only, and once its retries are used up it goes to the failure destination.
 *
 * `onBus` is the same handler on the bus, an ordinary rule's target (the local stage subscribes it beside the
 * ordered one, local-stack/bus-twin.yml): its `delivery handled` lines show what the stream changes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createOrderedSubscriberHandler,
  createSubscriberHandler,
  type SubscriberHandlerOptions,
} from '../../lib/aws/index.js';
import { resourceKey } from '../../lib/webhooks/index.js';

const workMs = Number(process.env.FORGEBRIDGE_EXAMPLE_WORK_MS || 300);
if (!Number.isInteger(workMs) || workMs < 0 || workMs > 60_000) {
  throw new TypeError(
    'environment variable "FORGEBRIDGE_EXAMPLE_WORK_MS" must be a whole number of ms from 0 to 60000',
  );
}

/** The one handler both functions run; only the line it logs differs. */
function handling(message: string): SubscriberHandlerOptions['register'] {
  return (events, { logger }) =>
    events.on('pull_request', async ({ id, payload }) => {
      const startedAt = Date.now();
      const updatedAt = (payload.pull_request as { updated_at?: unknown } | undefined)?.updated_at;
      if (typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt))) {
        throw new TypeError('pull_request.updated_at is not a date');
      }
      await sleep(workMs);
      logger.info(message, {
        delivery: id,
        resource: resourceKey('github', 'pull_request', payload),
        startedAt,
        endedAt: Date.now(),
      });
    });
}

/** The ordered subscriber: a Kinesis event-source mapping's batches. */
export const handler = createOrderedSubscriberHandler({ register: handling('ordered delivery handled') });

/** The same work as an EventBridge rule's target: unordered, as every rule's. */
export const onBus = createSubscriberHandler({ register: handling('delivery handled') });
