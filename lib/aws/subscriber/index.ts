/**
 * The subscriber side, which runs in the subscribers' functions behind an EventBridge rule: `resolveDelivery`
 * (an event back to the delivery, its claim-checked body fetched and checked) and `createSubscriber` (resolve,
 * log, dispatch). It imports none of the delivery path (lib/aws/ingest, lib/aws/queue, lib/aws/publish).
 */
export {
  type DeliveryReplay,
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
} from './resolve-delivery.js';
export { createSubscriber, type ReplayMode, ReplayModes, type SubscriberOptions } from './subscriber.js';
