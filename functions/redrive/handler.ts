/**
 * Scheduled retrier (every minute): publishes the deliveries the ingest queued because the bus did not take
 * them in time, each exactly once across concurrent runs; after `FORGEBRIDGE_QUEUE_MAX_AGE_SECONDS` a delivery is
 * dead-lettered and the `DeadLetteredDeliveries` metric fires its alarm (lib/aws' `createRedriveHandler`).
 */
import { createRedriveHandler } from '../../lib/aws/index.js';

/** The Lambda entry point. */
export const handler = createRedriveHandler();
