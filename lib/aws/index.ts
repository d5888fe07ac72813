/**
 * The AWS-facing pieces of forgebridge: webhook ingest onto EventBridge (dedupe, claim check, retries),
 * subscriber-side resolution, the delivery log, webhook secrets from SSM, and the DynamoDB token store with its
 * scheduled refresh, and the composition root of each function (`createIngestHandler()` and its siblings: a
 * handler is one line). What handlers and users need; deeper paths are private (tests reach them directly).
 */

// The SDK-free part (defaults, table definitions, the delivery id and source name rules), also its own entry.
export * from './core/index.js';
export * from './delivery-log/index.js';
export {
  type Env,
  numberEnv,
  optionalEnv,
  requireEnv,
  type SdkClientLike,
  sdkTimeouts,
  withoutSdkCallLog,
} from './env.js';
export {
  AwsBridgeError,
  IngestError,
  type OnBus,
  PublishError,
  ResolveDeliveryError,
  SecretsError,
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
export {
  createRedriveHandler,
  type RedriveClients,
  type RedriveHandlerOptions,
} from './handlers/redrive.js';
export { createRefreshHandler, type RefreshHandlerOptions } from './handlers/refresh.js';
export {
  createSubscriberHandler,
  type SubscriberContext,
  type SubscriberEvents,
  type SubscriberHandlerOptions,
  type SubscriberLambdaHandler,
} from './handlers/subscriber.js';
export {
  type DeliveryLogConfig,
  type IngestConfig,
  type RedriveConfig,
  readDeliveryLogConfig,
  readIngestConfig,
  readRedriveConfig,
} from './ingest/config.js';
export { type DeliveryLogMiddlewareOptions, deliveryLog } from './ingest/delivery-log-middleware.js';
export { buildEventEntry, type EventEntryOptions } from './ingest/event-entry.js';
export {
  createIngest,
  type IngestHandler,
  type IngestOptions,
  type PublisherLike,
} from './ingest/ingest.js';
export {
  type ForgeWebhook,
  type ForgeWebhookEvent,
  type ForgeWebhookOptions,
  forgeWebhook,
  type IngestOutcome,
  type WebhookSecret,
} from './ingest/middleware.js';
export { EventPublisher, type EventPublisherOptions, type PublishResult } from './ingest/publisher.js';
export {
  DeliveryQueue,
  type DeliveryQueueOptions,
  type QueuedDelivery,
  QueueError,
} from './ingest/queue.js';
export { type RedriveOptions, type RedriveReport, redriveQueue } from './ingest/redrive.js';
export { type RefusalFacts, refusalOf } from './ingest/refusal.js';
export {
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
} from './ingest/resolve-delivery.js';
export type { SourceHook, SourceHookKind } from './ingest/source-hook.js';
export { createSubscriber, type SubscriberOptions } from './ingest/subscriber.js';
export { type WebhookErrorsOptions, webhookErrors } from './ingest/webhook-errors.js';
export {
  type ForgeWebhookSource,
  type ForgeWebhookSourcesOptions,
  forgeWebhookSources,
} from './ingest/webhook-sources.js';
export {
  type DeliveryMetric,
  ForgebridgeMetrics,
  type ForgebridgeMetricsOptions,
  type QueueMetric,
  type ReconcileMetric,
  type SubscriberMetric,
  UNKNOWN_SOURCE,
} from './metrics.js';
export { type ReconcileConfig, type ReconcileSourceConfig, readReconcileConfig } from './reconcile/config.js';
export { ForgeApiError, type ForgeApiErrorCode, ForgeApiErrorCodes } from './reconcile/forge-http.js';
export { type ReconcileLastRun, readReconcileRun } from './reconcile/last-run.js';
export type { ReconcileReport, SourceCounts } from './reconcile/types.js';
export { errorCode, isOffline, positive } from './rules.js';
export {
  createSecretsProvider,
  parseSecretList,
  type SecretsProvider,
  type SecretsProviderOptions,
} from './secrets.js';
export * from './stage/index.js';
export {
  type ForgeApiConfig,
  type GitHubAppConfig,
  type GitHubAppPermissionLevel,
  type OAuthClientConfig,
  readForgeApiConfig,
  readOAuthClients,
  readTokenConfig,
  type TokenConfig,
  type TokenSourceConfig,
} from './tokens/config.js';
export { GitHubAppError } from './tokens/github-app.js';
export {
  type RefreshOptions,
  type RefreshReport,
  type RefreshRun,
  refreshTokens,
  TokenRefreshError,
} from './tokens/refresh.js';
export {
  createTokenSource,
  createTokenSources,
  type TokenSource,
  type TokenSourceOptions,
} from './tokens/token-source.js';
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
  TokenKey,
  TokenLike,
} from './types.js';
