// How many instances of each function the local stack runs at once (local-stack/offline-concurrency.mjs). On Lambda
// every concurrent invocation has a microVM of its own; here every one is a worker thread on this machine's cores.
import { availableParallelism } from 'node:os';

/** An ordered subscriber as the stack's poller runs it: one batch per shard slot at a time. */
export interface LocalOrderedSubscriber {
  function: string;
  parallelizationFactor: number;
}

/**
 * The limits, per function key and `*` for the rest:
 * - the ingest: 5 per core. It mostly waits on DynamoDB and the bus, and a forge waits on its answer; more at once
 *   only load more copies of its bundle (50 deliveries at once on 2 cores took it past its timeout).
 * - an ordered subscriber: its shard slots (parallelization factor × shards), as its event-source mapping on AWS.
 *   The poller never runs more, so this limit never makes it wait.
 * - every other function (the rules' targets, the scheduled ones): 2 per core. An event beyond that waits its
 *   turn, as behind Lambda's event queue, while the ingest keeps its share of the cores.
 */
export function localConcurrency(
  ordered: readonly LocalOrderedSubscriber[],
  shards: number,
  cores: number = availableParallelism(),
): Record<string, number> {
  const limits: Record<string, number> = { ingest: 5 * cores, '*': 2 * cores };
  for (const subscriber of ordered) limits[subscriber.function] = subscriber.parallelizationFactor * shards;
  return limits;
}
