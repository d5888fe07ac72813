/**
 * The request path, which runs in the ingest function behind API Gateway: the Middy middleware that reads and
 * verifies a delivery (`forgeWebhook`, one per source behind `forgeWebhookSources`), the JSON body, the delivery
 * log's record of each request, the error answers, and `createIngest` (dedupe, publish, else park on the queue). It
 * may import the publishing folder (lib/aws/publish) and the queue's store (lib/aws/queue), never the subscriber
 * side.
 */
export {
  createDedupedPublish,
  type DedupeOptions,
  type DedupeOutcome,
} from './dedupe.js';
export { type DeliveryLogMiddlewareOptions, deliveryLog } from './delivery-log-middleware.js';
export { createIngest, type IngestHandler, type IngestOptions } from './ingest.js';
export { jsonBody } from './json-body.js';
export {
  type ForgeWebhook,
  type ForgeWebhookEvent,
  type ForgeWebhookOptions,
  forgeWebhook,
  type IngestOutcome,
  type WebhookSecret,
} from './middleware.js';
export { type RefusalFacts, refusalOf } from './refusal.js';
export { type WebhookErrorsOptions, webhookErrors } from './webhook-errors.js';
export {
  type ForgeWebhookSource,
  type ForgeWebhookSourcesOptions,
  forgeWebhookSources,
} from './webhook-sources.js';
