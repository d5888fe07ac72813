/**
 * `forgebridge/aws`: what a user's code calls. The composition root of each function (`createIngestHandler()` and
 * its siblings: a handler is one line), the middleware for an ingest of one's own (`forgeWebhook`, `webhookErrors`),
 * the publisher, the subscriber side (`resolveDelivery`, `createSubscriber`), the token store, the delivery log's
 * reader, the errors they throw, and the types they take and return; `requireEnv` and `sdkTimeouts` for a
 * subscriber's own function. Everything else is internal: this repository's CLI, local stack and scripts import
 * lib/aws/internal.ts, and the SDK-free pieces (defaults, table definitions, metric names, the delivery-id and
 * source-name rules; a stage's settings) have their own doors, lib/aws/core and lib/aws/stage.
 */
export { type AwsErrorCode, AwsErrorCodes } from './core/index.js';
export {
  type DeliveryDetails,
  type DeliveryListPage,
  type DeliveryListQuery,
  DeliveryLog,
  type DeliveryLogOptions,
  type DeliveryOutcome,
  DeliveryOutcomes,
  type DeliveryRecord,
  type DeliveryVerdict,
  DeliveryVerdicts,
  type DiagnosisEntry,
  detailsOfHook,
  hooksOf,
  maskHeaders,
  type PayloadOmitted,
  type SubscriberOutcome,
  type SubscriberReport,
} from './delivery-log/index.js';
export { requireEnv, sdkTimeouts } from './env.js';
export {
  AwsBridgeError,
  ForgeRateLimitError,
  GitHubAppError,
  IngestError,
  type OnBus,
  PublishError,
  ResolveDeliveryError,
  SecretsError,
  SubscriberTimeoutError,
  TokenRefreshError,
  TokenStoreConflictError,
  TokenStoreError,
} from './errors.js';
export { createForgeApi, type ForgeApi, type ForgeApiOptions } from './handlers/forge-api.js';
export {
  createIngestHandler,
  type IngestClients,
  type IngestHandlerOptions,
  type IngestLambdaHandler,
} from './handlers/ingest.js';
export {
  createReconcileHandler,
  type ReconcileClients,
  type ReconcileEvent,
  type ReconcileHandler,
  type ReconcileHandlerOptions,
} from './handlers/reconcile.js';
export { createRedriveHandler, type RedriveClients, type RedriveHandlerOptions } from './handlers/redrive.js';
export { createRefreshHandler, type RefreshHandlerOptions } from './handlers/refresh.js';
export {
  createOrderedSubscriberHandler,
  createSubscriberHandler,
  type OrderedBatchEvent,
  type OrderedBatchResponse,
  type OrderedSubscriberLambdaHandler,
  type SubscriberContext,
  type SubscriberEvents,
  type SubscriberHandlerOptions,
  type SubscriberLambdaHandler,
} from './handlers/subscriber.js';
export {
  type ForgeWebhook,
  type ForgeWebhookEvent,
  type ForgeWebhookOptions,
  forgeWebhook,
  type IngestOutcome,
  type WebhookErrorsOptions,
  type WebhookSecret,
  webhookErrors,
} from './ingest/index.js';
export {
  EventPublisher,
  type EventPublisherOptions,
  type OrderBy,
  type OutputName,
  OutputsPublishError,
  OutputsPublisher,
  type OutputsPublisherOptions,
  type PublisherLike,
  type PublishResult,
  type StreamEvent,
  StreamPublisher,
  type StreamPublisherOptions,
  type StreamPublishResult,
} from './publish/index.js';
export type { RedriveReport } from './queue/index.js';
export type { ReconcileReport, SourceCounts } from './reconcile/types.js';
export {
  createSubscriber,
  type DeliveryReplay,
  type ReplayMode,
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
  type SubscriberOptions,
} from './subscriber/index.js';
export type { RefreshReport, RefreshRun } from './tokens/refresh.js';
export type { TokenSource } from './tokens/token-source.js';
export {
  type RefreshOutcome,
  type RefreshResult,
  type StoredToken,
  TokenStore,
  type TokenStoreOptions,
  type TokenTarget,
} from './tokens/token-store.js';
export type {
  Delivery,
  DeliveryDetail,
  DeliveryEntry,
  IngestResponse,
  LoggerLike,
  PayloadRef,
  ReplayMark,
  TokenKey,
  TokenLike,
} from './types.js';
