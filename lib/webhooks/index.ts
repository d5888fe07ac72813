/**
 * forgebridge webhook toolset: sign and verify deliveries, dispatch events to typed handlers, and serve them
 * over HTTP. Named exports only; deeper paths are private.
 */

export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PATH,
  DEFAULT_TIMEOUT_MS,
  DefaultHeaders,
  ErrorCodes,
  SignatureAlgorithms,
} from './constants.js';
export { readDelivery } from './delivery.js';
export { diagnoseSignature, maskSignature } from './diagnose.js';
export {
  type CheckedSignature,
  type DiagnoseOptions,
  type DiagnosisCode,
  DiagnosisCodes,
  type DiagnosisReason,
  type SignatureDiagnosis,
  type SignatureVerdict,
} from './diagnosis.js';
export {
  ProxyChannelError,
  type ProxyChannelErrorCode,
  ProxyChannelErrorCodes,
  WebhookPayloadError,
  WebhookReceiveError,
  WebhooksError,
  WebhookVerificationError,
} from './errors.js';
export { createEventHandler, EventHandler } from './event-handler.js';
export {
  EventNames,
  isKnownEventName,
  knownEventNames,
  neutralEventName,
} from './event-names.js';
export type {
  ActionPayloadMap,
  EmitterWebhookEventName,
  EventPayloadMap,
  EventPayloads,
  PayloadFor,
  WebhookEvent,
  WebhookEventName,
} from './event-types.js';
export {
  asSentBy,
  type ForgeOwnSample,
  forgeOwnSample,
  forgeOwnSampleNames,
  hasOwnShapes,
  type OwnShapeForge,
} from './forge-samples.js';
export {
  type DeliveryLogForge,
  DeliveryLogForges,
  type DeliveryLogTrait,
  deliveryLogOf,
  type Forge,
  type ForgePreset,
  type ForgeRoute,
  Forges,
  forgeSecret,
  resolvePreset,
  routeForgeEvent,
  type SignatureScheme,
  type SignatureSource,
} from './forges.js';
export { forgeEventNameAliases } from './generated/catalogue.js';
export { createNodeMiddleware, type NodeMiddleware } from './middleware.js';
export {
  createProxyChannel,
  ProxyChannel,
  type ProxyChannelEvents,
  type ProxyChannelOptions,
  type ProxyChannelTarget,
  type ProxyEventSource,
  type ProxyEventSourceConstructor,
} from './proxy-channel.js';
export type { ProxyMessageKeys } from './proxy-message.js';
export { replayHeaders } from './replay-headers.js';
export {
  parseKeyPath,
  type ResourceKeyReader,
  type ResourceRule,
  repositoryKey,
  resourceKey,
  resourceKeyAt,
} from './resource-key.js';
export { serializePayload } from './serialize.js';
export { type DeliveryHeadersOptions, deliveryHeaders, sign } from './sign.js';
export { DEFAULT_TOLERANCE_SECONDS, standardSecret } from './standard.js';
export type {
  DeliveryFailureStatus,
  DeliveryHeaderNames,
  DeliveryOptions,
  DeliveryRequest,
  DeliveryResult,
  ErrorHandlerFunction,
  EventHandlerOptions,
  HandlerEvent,
  HandlerEventName,
  HandlerFunction,
  Logger,
  MiddlewareOptions,
  ReceivedEvent,
  Secret,
  SignatureAlgorithm,
  SignaturePayload,
  SignedEvent,
  SignKeyOptions,
  SignOptions,
  Transform,
  WebhookEventError,
  WebhooksOptions,
  WildcardHandlerFunction,
} from './types.js';
export { verify } from './verify.js';
export { Webhooks } from './webhooks.js';
