/**
 * The part of lib/aws that loads no AWS SDK: the stack's defaults and its small rules (what a delivery id and a
 * source name may be). lib/aws's own barrel exports the same; this entry is for code that must stay light, such as
 * the CLI commands that do no AWS work (`send`, `rules`, `dev`, `config`) and the deployment's configuration
 * (infra/config.cjs reads `config/<stage>.yml` through `readStageConfig`).
 */
export {
  AwsDefaults,
  type AwsErrorCode,
  AwsErrorCodes,
  DedupeTable,
  DeliveryLogTable,
  TokenTable,
} from '../constants.js';
export { isDeliveryId, isSourceName } from '../rules.js';
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
