/**
 * lib/aws as this repository's own code uses it beyond the public entry: the CLI (lib/cli), the delivery
 * inspector (lib/inspector), the local stack, the scripts and the benchmarks. It is not in package.json `exports`,
 * so no user imports it (the published CLI loads it from dist/). A user's code imports `forgebridge/aws`
 * (lib/aws/index.ts); tests import the modules themselves.
 */
export {
  AwsDefaults,
  DEFAULT_SOURCE,
  DELIVERY_ID_RULE,
  DedupeTable,
  DeliveryLogTable,
  isDeliveryId,
  isSourceName,
  SOURCE_NAME_RULE,
} from './core/index.js';
export {
  type DeliveryDetails,
  type DeliveryListQuery,
  DeliveryLog,
  type DeliveryOutcome,
  DeliveryOutcomes,
  type DeliveryRecord,
  type DeliveryVerdict,
  DeliveryVerdicts,
  detailsOfHook,
  hooksOf,
  maskHeaders,
  type SubscriberOutcome,
  withDeliveryReport,
} from './delivery-log/index.js';
export { sdkTimeouts, withoutSdkCallLog } from './env.js';
export { GOVERNOR_KEY_PREFIX } from './governor/governor.js';
export { readGovernorConfig } from './governor/limits.js';
export { createIngestHandler } from './handlers/ingest.js';
export { createReconcileHandler } from './handlers/reconcile.js';
export { createOrderedSubscriberHandler, createSubscriberHandler } from './handlers/subscriber.js';
export { inInvocation } from './invocation.js';
export { buildEventEntry, eventEntrySize, partitionKeyOf, streamEventOf } from './publish/index.js';
export { type ReconcileLastRun, readReconcileRun } from './reconcile/last-run.js';
export type { ReconcileReport } from './reconcile/types.js';
export { parseSecretList } from './secrets.js';
export {
  type OrderedStreamSettings,
  type OrderedSubscriberConfig,
  readDeliveryLogConfig,
  readIngestConfig,
  readOrderedStreamSettings,
  readOrderedSubscribers,
  readStageConfig,
  type SourceHook,
  sourceSecretEnv,
  stageConfigPath,
  stageDefaults,
  streamOrderBy,
  type WebhookSourceConfig,
  withSourceHooks,
} from './stage/index.js';
export { createSubscriber } from './subscriber/index.js';
export type { DeliveryDetail, DeliveryEntry, PayloadRef, ReplayMark } from './types.js';
