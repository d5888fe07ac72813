/**
 * Webhook ingest: an HTTP API route or Function URL (payload 2.0), or a REST API (payload 1.0), delivers a forge
 * webhook to `/webhooks` or `/webhooks/{source}`; it is verified with its source's forge preset and secret,
 * deduped on its source and delivery id and published onto the bus, or kept for the retrier when the bus does not
 * take it in time. Configuration, clients and middleware order: lib/aws' `createIngestHandler`.
 */
import { createIngestHandler } from '../../lib/aws/index.js';

/** The Lambda entry point. */
export const handler = createIngestHandler();
