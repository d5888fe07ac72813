/**
 * A generic subscriber: it rebuilds `{ id, name, payload }` from the EventBridge event (resolving an S3 claim
 * check) and logs one `delivery received` line. serverless.yml subscribes it under several rule forms (every
 * `issues` action, `push`, everything): copy it as the start of a subscriber of your own, and register your
 * handlers with `register: (events) => events.on('push', ({ payload }) => …)`. On the local stack it has a failure
 * switch, a test aid (fail-switch.ts).
 */
import { createSubscriberHandler } from '../../lib/aws/index.js';
import { failSwitch } from './fail-switch.js';

/** The Lambda entry point. */
export const handler = createSubscriberHandler(failSwitch());
