// The stage's settings for serverless.yml: config/<stage>.yml, a set FORGEBRIDGE_* environment variable over it,
// the defaults under both (lib/aws/stage-config.ts, loaded through tsx: the same readers the functions run at their
// cold start check every value here, so `osls package` stops on a wrong one). `forgebridge config --stage <name>`
// prints the same. infra/monitoring.cjs reads the alarms and the sources through `load`, the metrics through `core`.
'use strict';

const { join } = require('node:path');
const { tsImport } = require('tsx/esm/api');

/** One resolution per stage and process: osls calls this file's function once per reference. */
const resolved = new Map();

/** `osls offline` (the local stack): the functions read their secrets from the environment. */
const offline = process.argv.slice(2).includes('offline');

/** The stage's resolved configuration (`readStageConfig`), once per stage. */
function load(stage) {
  if (!resolved.has(stage)) {
    resolved.set(
      stage,
      tsImport('../lib/aws/stage/index.ts', __filename).then(({ readStageConfig }) =>
        readStageConfig({ stage, dir: join(__dirname, '..'), env: process.env, offline }),
      ),
    );
  }
  return resolved.get(stage);
}

let coreModule;
/**
 * lib/aws's SDK-free core (lib/aws/core): the custom metrics' names, units and dimensions the functions print, the
 * one home infra/monitoring.cjs builds the alarms and the dashboard from. Loaded, not copied: a generated CommonJS
 * copy would be one more file to keep in step, and tsx is already here for the stage's settings.
 */
function core() {
  coreModule ??= tsImport('../lib/aws/core/index.ts', __filename);
  return coreModule;
}

/** The names the functions are given: the stack's own resources, or offline the configured names. */
function names(settings) {
  if (offline) {
    return {
      bus: settings.FORGEBRIDGE_BUS_NAME,
      dedupeTable: settings.FORGEBRIDGE_DEDUPE_TABLE,
      tokenTable: settings.FORGEBRIDGE_TOKEN_TABLE,
      deliveriesTable: settings.FORGEBRIDGE_DELIVERIES_TABLE,
      bucket: settings.FORGEBRIDGE_BUCKET,
    };
  }
  return {
    bus: { Ref: 'Bus' },
    dedupeTable: { Ref: 'DedupeTable' },
    tokenTable: { Ref: 'TokenTable' },
    deliveriesTable: { Ref: 'DeliveriesTable' },
    bucket: { Ref: 'ClaimCheckBucket' },
  };
}

module.exports = async ({ resolveVariable }) => {
  const config = await load(await resolveVariable('sls:stage'));
  const { settings } = config;
  // The ingest's role reads every source's secret parameter by name, never by a wildcard.
  const parameters = [
    ...new Set(config.sources.map((source) => source.secretParameter).filter((name) => name !== undefined)),
  ];
  if (parameters.length === 0) parameters.push(settings.FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER);
  return {
    settings,
    // The settings CloudFormation takes as numbers (timeouts, days), checked whole numbers by then.
    numbers: Object.fromEntries(
      [
        'FORGEBRIDGE_INGEST_TIMEOUT',
        'FORGEBRIDGE_SUBSCRIBER_TIMEOUT',
        'FORGEBRIDGE_ARCHIVE_RETENTION_DAYS',
        'FORGEBRIDGE_CLAIM_CHECK_EXPIRY_DAYS',
      ].map((name) => [name, Number(settings[name])]),
    ),
    alarms: config.alarms,
    names: names(settings),
    bucketName: settings.FORGEBRIDGE_BUCKET === '' ? { Ref: 'AWS::NoValue' } : settings.FORGEBRIDGE_BUCKET,
    secretParameterArns: parameters.map((name) => ({
      'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${name}`,
    })),
  };
};
module.exports.load = load;
module.exports.core = core;
