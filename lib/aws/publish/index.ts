/**
 * Putting a delivery on the bus, shared by the ingest (lib/aws/ingest), the retrier (lib/aws/queue) and the
 * reconciler: the EventBridge entry a delivery becomes, the claim check for bodies too large for one entry, and the
 * publisher that retries within its budget. It imports no other delivery-path folder.
 */

export { orderByText, parseOrderBy } from '../order-by.js';
export { ClaimCheck, type ClaimCheckOptions } from './claim-check.js';
export { buildEventEntry, type EventEntryOptions, eventEntrySize } from './event-entry.js';
export {
  OUTPUT_ORDER,
  type OutputName,
  OutputsPublishError,
  OutputsPublisher,
  type OutputsPublisherOptions,
  type OutputsResult,
} from './outputs.js';
export {
  EventPublisher,
  type EventPublisherOptions,
  type PublisherLike,
  type PublishResult,
} from './publisher.js';
export {
  StreamPublisher,
  type StreamPublisherOptions,
  type StreamPublishResult,
} from './stream-publisher.js';
export {
  type KinesisBatchRecord,
  type OrderBy,
  orderKeyOf,
  partitionKeyOf,
  type StreamEvent,
  StreamLimits,
  streamEventOf,
  streamEventOfRecord,
} from './stream-record.js';
