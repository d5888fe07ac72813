/**
 * A stage's settings (`config/<stage>.yml`, the environment over it, the defaults), checked by the functions' own
 * configuration readers, and the webhook-source schema with its one parser: lib/aws's third entry, SDK-free, for
 * `forgebridge config` and infra/config.cjs. It loads the YAML parser and those readers, which lib/aws/core does not.
 */
export {
  type AlarmSettings,
  checkStageSettings,
  parseStageFile,
  readAlarmSettings,
  readStageConfig,
  type SettingOrigin,
  type StageConfig,
  type StageConfigOptions,
  type StageSettingName,
  StageSettingNames,
  stageConfigPath,
  stageDefaults,
} from '../stage-config.js';
export {
  type DeliveryLogConfig,
  type IngestConfig,
  type RedriveConfig,
  readDeliveryLogConfig,
  readIngestConfig,
  readRedriveConfig,
} from './function-config.js';
export {
  type OrderedStreamSettings,
  type OrderedSubscriberConfig,
  readOrderedStreamSettings,
  readOrderedSubscribers,
  streamOrderBy,
} from './ordered-subscribers.js';
export { parseSourceHook, type SourceHook, type SourceHookKind } from './source-hook.js';
export {
  readWebhookSources,
  type SourceDeliveryOptions,
  sourceSecretEnv,
  type WebhookSourceConfig,
  withSourceHooks,
} from './webhook-source.js';
