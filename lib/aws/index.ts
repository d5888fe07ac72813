/**
 * The AWS-facing pieces of forgebridge: webhook ingest onto EventBridge (dedupe, claim check, retries),
 * subscriber-side resolution, webhook secrets from SSM, and the DynamoDB token store with its scheduled
 * refresh. Deeper paths are private.
 */

export {
  AwsDefaults,
  type AwsErrorCode,
  AwsErrorCodes,
  DedupeTable,
  ENTRY_TIME_BYTES,
  TokenTable,
} from './constants.js';
export { type Env, numberEnv, optionalEnv, requireEnv, sdkTimeouts } from './env.js';
export {
  AwsBridgeError,
  IngestError,
  PublishError,
  ResolveDeliveryError,
  SecretsError,
  TokenStoreConflictError,
  TokenStoreError,
} from './errors.js';
export { type ApiGatewayEvent, fromApiGatewayEvent, isPayloadV2 } from './ingest/api-gateway.js';
export { ClaimCheck, type ClaimCheckOptions, claimCheckKey } from './ingest/claim-check.js';
export { type IngestConfig, readIngestConfig } from './ingest/config.js';
export {
  actionOf,
  buildEventEntry,
  detailTypeOf,
  type EventEntryOptions,
  eventEntrySize,
  routingFieldsOf,
} from './ingest/event-entry.js';
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
  type WebhookErrorsOptions,
  type WebhookSecret,
  webhookErrors,
} from './ingest/middleware.js';
export { EventPublisher, type EventPublisherOptions, type PublishResult } from './ingest/publisher.js';
export {
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
} from './ingest/resolve-delivery.js';
export { createSubscriber, type SubscriberOptions } from './ingest/subscriber.js';
export {
  createSecretsProvider,
  parseSecretList,
  type SecretsProvider,
  type SecretsProviderOptions,
} from './secrets.js';
export {
  type ForgeApiConfig,
  type OAuthClientConfig,
  readForgeApiConfig,
  readOAuthClients,
  readTokenConfig,
  type TokenConfig,
} from './tokens/config.js';
export {
  type RefreshOptions,
  type RefreshReport,
  type RefreshRun,
  refreshTokens,
  TokenRefreshError,
} from './tokens/refresh.js';
export {
  clientTarget,
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
  tokenPartitionKey,
} from './tokens/token-store.js';
export type {
  Delivery,
  DeliveryDetail,
  DeliveryEntry,
  HeaderMap,
  IngestRequest,
  IngestResponse,
  LoggerLike,
  PayloadRef,
  TokenKey,
  TokenLike,
} from './types.js';
