/**
 * The AWS-facing pieces of forgebridge: webhook ingest onto EventBridge (dedupe, claim check, retries),
 * subscriber-side resolution, webhook secrets from SSM, and the DynamoDB token store with its scheduled
 * refresh. Deeper paths are private.
 */
export { type ApiGatewayEvent, fromApiGatewayEvent, isPayloadV2 } from './api-gateway.js';
export { ClaimCheck, type ClaimCheckOptions, claimCheckKey } from './claim-check.js';
export {
  AwsDefaults,
  BeginResult,
  DedupeStatus,
  DedupeTable,
  ENTRY_TIME_BYTES,
  TokenTable,
} from './constants.js';
export { DedupeStore, type DedupeStoreOptions } from './dedupe-store.js';
export {
  AwsBridgeError,
  PublishError,
  ResolveDeliveryError,
  SecretsError,
  TokenStoreConflictError,
  TokenStoreError,
} from './errors.js';
export {
  actionOf,
  buildEventEntry,
  detailTypeOf,
  type EventEntryOptions,
  eventEntrySize,
  routingFieldsOf,
} from './event-entry.js';
export {
  type DedupeLike,
  handleDelivery,
  type IngestConfig,
  type IngestDependencies,
  type PublisherLike,
} from './ingest.js';
export { EventPublisher, type EventPublisherOptions, type PublishResult } from './publisher.js';
export {
  type RefreshDependencies,
  type RefreshReport,
  type RefreshTarget,
  refreshTokens,
} from './refresh.js';
export {
  type ResolveDeliveryDependencies,
  type ResolvedDelivery,
  resolveDelivery,
} from './resolve-delivery.js';
export {
  createSecretsProvider,
  parseSecretList,
  type SecretsProvider,
  type SecretsProviderOptions,
} from './secrets.js';
export {
  type RefreshOutcome,
  type RefreshResult,
  type StoredToken,
  TokenStore,
  type TokenStoreOptions,
  tokenPartitionKey,
} from './token-store.js';
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
