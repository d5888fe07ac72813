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
  ForgeApiError,
  type ForgeApiErrorCode,
  ForgeApiErrorCodes,
  GitHubAppError,
  IngestError,
  type OnBus,
  PublishError,
  QueueError,
  ResolveDeliveryError,
  SecretsError,
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
  createIngest,
  type DeliveryLogMiddlewareOptions,
  deliveryLog,
  type ForgeWebhook,
  type ForgeWebhookEvent,
  type ForgeWebhookOptions,
  type ForgeWebhookSource,
  type ForgeWebhookSourcesOptions,
  forgeWebhook,
  forgeWebhookSources,
  type IngestHandler,
  type IngestOptions,
  type IngestOutcome,
  type RefusalFacts,
  refusalOf,
  type WebhookErrorsOptions,
  type WebhookSecret,
  webhookErrors,
} from './ingest/index.js';
export {
  type DeliveryMetric,
  ForgebridgeMetrics,
  type ForgebridgeMetricsOptions,
  type QueueMetric,
  type ReconcileMetric,
  type SubscriberMetric,
  UNKNOWN_SOURCE,
} from './metrics.js';
export {
  buildEventEntry,
  type EventEntryOptions,
  EventPublisher,
  type EventPublisherOptions,
  type PublisherLike,
  type PublishResult,
} from './publish/index.js';
export {
  DeliveryQueue,
  type DeliveryQueueOptions,
  type QueuedDelivery,
  type RedriveOptions,
  type RedriveReport,
  redriveQueue,
} from './queue/index.js';
export { type ReconcileConfig, type ReconcileSourceConfig, readReconcileConfig } from './reconcile/config.js';
export { type ReconcileLastRun, readReconcileRun } from './reconcile/last-run.js';
export type { ReconcileReport, SourceCounts } from './reconcile/types.js';
export { errorCode, isOffline, positive } from './rules.js';
export {
  createSecretsProvider,
  parseSecretList,
  type SecretsProvider,
  type SecretsProviderOptions,
} from './secrets.js';
export {
  type DeliveryLogConfig,
  type IngestConfig,
  type RedriveConfig,
  readDeliveryLogConfig,
  readIngestConfig,
  readRedriveConfig,
} from './stage/function-config.js';
export * from './stage/index.js';
export type { SourceHook, SourceHookKind } from './stage/source-hook.js';
export {
  createSubscriber,
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
  type SubscriberOptions,
} from './subscriber/index.js';
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
export {
  type RefreshOptions,
  type RefreshReport,
  type RefreshRun,
  refreshTokens,
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
