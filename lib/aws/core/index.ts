/**
 * The part of lib/aws that loads no AWS SDK: the stack's defaults, its custom metrics (names, units, dimensions:
 * infra/monitoring.cjs builds the alarms and the dashboard from them) and its small rules (what a delivery id and a
 * source name may be, and their wording for error messages). It is a door inside this repository, not a package
 * entry (`forgebridge/aws` exports only `AwsErrorCodes` of it): for code that must stay light, such as the CLI
 * commands that do no AWS work (`send`, `rules`, `dev`) and the deployment's configuration (infra/). A stage's
 * settings (lib/aws/stage-config.ts, which `forgebridge config` and infra/config.cjs load) are SDK-free too, but
 * load the YAML parser and the functions' configuration readers: they are a door of their own (lib/aws/stage).
 */
export {
  AwsDefaults,
  type AwsErrorCode,
  AwsErrorCodes,
  DedupeTable,
  DeliveryLogTable,
  type MetricDefinition,
  MetricDefinitions,
  MetricDimensions,
  MetricNames,
  TokenTable,
  VERIFIED_DELIVERY_OUTCOMES,
} from '../constants.js';
export {
  DEFAULT_SOURCE,
  DELIVERY_ID_RULE,
  isDeliveryId,
  isSourceName,
  SOURCE_NAME_RULE,
} from '../rules.js';
