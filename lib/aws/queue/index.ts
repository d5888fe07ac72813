/**
 * The durable queue and its retrier: the dedupe table's records, the queue of deliveries the bus did not take
 * (which the ingest writes to) and `redriveQueue`, the retrier's body (the redrive function). It may import the
 * publishing folder (lib/aws/publish), never the request path (lib/aws/ingest) or the subscriber side.
 */
export { DedupeRecords, type DedupeState, recordKeyOf } from './dedupe-record.js';
export {
  DeliveryQueue,
  type DeliveryQueueOptions,
  type QueuedDelivery,
} from './queue.js';
export { type RedriveOptions, type RedriveReport, redriveQueue } from './redrive.js';
