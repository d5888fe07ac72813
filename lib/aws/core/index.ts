/**
 * The part of lib/aws that loads no AWS SDK: the stack's defaults and its small rules (what a delivery id and a
 * source name may be). lib/aws's own barrel exports the same; this entry is for code that must stay light, such as
 * the CLI commands that do no AWS work (`send`, `rules`, `dev`) and the deployment's configuration (infra/). A
 * stage's settings (lib/aws/stage-config.ts, which `forgebridge config` and infra/config.cjs load) are SDK-free
 * too, but load the YAML parser and the functions' configuration readers: they are an entry of their own
 * (lib/aws/stage).
 */
export {
  AwsDefaults,
  type AwsErrorCode,
  AwsErrorCodes,
  DedupeTable,
  DeliveryLogTable,
  TokenTable,
} from '../constants.js';
export {
  DEFAULT_SOURCE,
  DELIVERY_ID_RULE,
  isDeliveryId,
  isSourceName,
  SOURCE_NAME_RULE,
} from '../rules.js';
