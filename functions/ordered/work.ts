/**
 * The example ordered subscriber's work, shared by it (functions/ordered/handler.ts, on the ordered stream) and its
 * twin on the bus (functions/ordered-on-bus/handler.ts, an ordinary rule target): every `pull_request` action
 * (of every forge: a GitLab merge request, a Bitbucket pull request). Each delivery takes `FORGEBRIDGE_EXAMPLE_WORK_MS` (default 300) of stand-in
 * work, so that two of one pull request at once would show, and is logged as one line, `message`, with the delivery
 * id, the resource (`octo/hello#pr:42`) and when its handling started and ended (epoch ms). A payload whose
 * `pull_request.updated_at` is there and not a date (a malformed delivery) is refused: on the stream that record is
 * retried, holding up the keys of its shard slot only, and once its retries are used up it goes to the failure
 * destination.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SubscriberHandlerOptions } from '../../lib/aws/index.js';
import { type Forge, resourceKey } from '../../lib/webhooks/index.js';

const workMs = Number(process.env.FORGEBRIDGE_EXAMPLE_WORK_MS || 300);
if (!Number.isInteger(workMs) || workMs < 0 || workMs > 60_000) {
  throw new TypeError(
    'environment variable "FORGEBRIDGE_EXAMPLE_WORK_MS" must be a whole number of ms from 0 to 60000',
  );
}

/** Registers the pull request work, logging each delivery handled as `message`. */
export function pullRequestWork(message: string): NonNullable<SubscriberHandlerOptions['register']> {
  return (events, { logger }) =>
    events.on('pull_request', async (event) => {
      const { id, payload } = event;
      // The resolved delivery carries the forge and its own event name (a GitLab merge request is a `pull_request`).
      const { forge, nativeEvent } = event as { forge?: Forge; nativeEvent?: string };
      const startedAt = Date.now();
      const updatedAt = (payload.pull_request as { updated_at?: unknown } | undefined)?.updated_at;
      // A payload without the field is handled: only one that carries a wrong one is refused.
      if (updatedAt !== undefined && (typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt)))) {
        throw new TypeError('pull_request.updated_at is not a date');
      }
      await sleep(workMs);
      logger.info(message, {
        delivery: id,
        resource:
          (forge === undefined ? undefined : resourceKey(forge, nativeEvent ?? 'pull_request', payload)) ??
          '-',
        startedAt,
        endedAt: Date.now(),
      });
    });
}
