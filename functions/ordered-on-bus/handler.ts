/**
 * The example ordered subscriber's work as an ordinary rule target on the bus (local stage only,
 * local-stack/bus-twin.yml): unordered, as every rule's; each delivery logged `delivery handled`, so that the local
 * stack shows what the ordered stream changes.
 */
import { createSubscriberHandler } from '../../lib/aws/index.js';
import { pullRequestWork } from '../ordered/work.js';

/** The Lambda entry point: one EventBridge event. */
export const handler = createSubscriberHandler({ register: pullRequestWork('delivery handled') });
