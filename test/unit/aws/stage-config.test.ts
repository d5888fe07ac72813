// config/<stage>.yml: the file's values over the defaults, a set environment variable over the file, every value
// checked by the functions' own readers, and a clear error naming the file or the setting for anything wrong.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  parseStageFile,
  readStageConfig,
  StageSettingNames,
  stageConfigPath,
  stageDefaults,
} from '../../../lib/aws/stage/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-stage-config-'));
  mkdirSync(join(dir, 'config'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function stageFile(stage: string, text: string): string {
  const path = join(dir, 'config', `${stage}.yml`);
  writeFileSync(path, text);
  return path;
}

describe('readStageConfig', () => {
  it('gives the defaults, named after the stage, when the stage has no file', () => {
    const config = readStageConfig({ stage: 'dev', dir, env: {} });
    expect(config.file).toBeUndefined();
    expect(config.settings).toEqual(stageDefaults('dev'));
    expect(config.settings.FORGEBRIDGE_BUS_NAME).toBe('forgebridge-dev');
    // No bucket name: CloudFormation names the bucket, since bucket names are global.
    expect(config.settings.FORGEBRIDGE_BUCKET).toBe('');
    expect(new Set(Object.values(config.origins))).toEqual(new Set(['default']));
    expect(config.sources).toMatchObject([
      { name: 'default', secretParameter: '/forgebridge/dev/webhook-secret' },
    ]);
  });

  it('reads the file: scalars as text, the sources list as the JSON the functions read', () => {
    const file = stageFile(
      'prod',
      [
        'FORGEBRIDGE_WEBHOOK_SOURCES:',
        '  - name: github',
        '    forge: github',
        '    secretParameter: /forgebridge/prod/webhook-secret/github',
        'FORGEBRIDGE_INGEST_TIMEOUT: 12',
        'FORGEBRIDGE_DELIVERY_LOG_PAYLOAD: false',
        'FORGEBRIDGE_ALARM_EMAIL: ops@example.com',
        'FORGEBRIDGE_EVENT_HEADER: ~',
      ].join('\n'),
    );
    const config = readStageConfig({ stage: 'prod', dir, env: {} });
    expect(config.file).toBe(file);
    expect(JSON.parse(config.settings.FORGEBRIDGE_WEBHOOK_SOURCES)).toEqual([
      { name: 'github', forge: 'github', secretParameter: '/forgebridge/prod/webhook-secret/github' },
    ]);
    expect(config.settings.FORGEBRIDGE_INGEST_TIMEOUT).toBe('12');
    expect(config.settings.FORGEBRIDGE_DELIVERY_LOG_PAYLOAD).toBe('false');
    expect(config.origins.FORGEBRIDGE_INGEST_TIMEOUT).toBe('file');
    // A null value leaves the default.
    expect(config.origins.FORGEBRIDGE_EVENT_HEADER).toBe('default');
    expect(config.alarms.email).toBe('ops@example.com');
    expect(config.sources).toMatchObject([
      { name: 'github', forge: 'github', secretParameter: '/forgebridge/prod/webhook-secret/github' },
    ]);
  });

  it('lets a set, non-empty environment variable override the file', () => {
    stageFile('prod', 'FORGEBRIDGE_FORGE: github\nFORGEBRIDGE_LOG_LEVEL: INFO\n');
    const config = readStageConfig({
      stage: 'prod',
      dir,
      env: { FORGEBRIDGE_LOG_LEVEL: 'DEBUG', FORGEBRIDGE_FORGE: '' },
    });
    expect(config.settings.FORGEBRIDGE_LOG_LEVEL).toBe('DEBUG');
    expect(config.origins.FORGEBRIDGE_LOG_LEVEL).toBe('environment');
    // Empty is unset: the file's value stays.
    expect(config.settings.FORGEBRIDGE_FORGE).toBe('github');
    expect(config.origins.FORGEBRIDGE_FORGE).toBe('file');
  });

  it("checks every value with the functions' readers and says where the wrong one came from", () => {
    const file = stageFile('prod', 'FORGEBRIDGE_FORGE: githab\n');
    expect(() => readStageConfig({ stage: 'prod', dir, env: {} })).toThrow(
      new RegExp(`"FORGEBRIDGE_FORGE" must be one of .* \\(the value from ${file.replaceAll('/', '\\/')}\\)`),
    );
    expect(() =>
      readStageConfig({
        stage: 'prod',
        dir,
        env: { FORGEBRIDGE_FORGE: 'github', FORGEBRIDGE_MAX_ENTRY_BYTES: '-1' },
      }),
    ).toThrow('"FORGEBRIDGE_MAX_ENTRY_BYTES" must be a positive number (the value from the environment)');
  });

  it('refuses at package time a source whose timestamp tolerance outlives its dedupe record', () => {
    const file = stageFile(
      'prod',
      'FORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: pay, forge: standard, secretParameter: /p/pay, toleranceSeconds: 604800, dedupeTtlSeconds: 60 }\n',
    );
    expect(() => readStageConfig({ stage: 'prod', dir, env: {} })).toThrow(
      `"FORGEBRIDGE_WEBHOOK_SOURCES[0]" accepts a signed timestamp for 604800 s but keeps its dedupe record 60 s`,
    );
    expect(() => readStageConfig({ stage: 'prod', dir, env: {} })).toThrow(file);
  });

  it('refuses what a deploy would only find out on AWS', () => {
    const cases: [string, RegExp | string][] = [
      // A source without its secret parameter: the ingest could never read its secret.
      ['FORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: github, forge: github }\n', /secretParameter/],
      // A secret outside the path the roles may read: denied at the first refresh.
      [
        'FORGEBRIDGE_OAUTH_CLIENTS:\n  - { provider: forge, clientId: a, site: "https://forge.example.com", secretParameter: /elsewhere/a }\n',
        '"FORGEBRIDGE_OAUTH_CLIENTS[0]": its parameter "/elsewhere/a" must sit under "FORGEBRIDGE_OAUTH_SECRET_PATH" ("/forgebridge/prod/oauth/")',
      ],
      ['FORGEBRIDGE_HTTP_API: yes\n', '"FORGEBRIDGE_HTTP_API" must be "true" or "false"'],
      [
        'FORGEBRIDGE_INGEST_TIMEOUT: 901\n',
        '"FORGEBRIDGE_INGEST_TIMEOUT" must be a whole number from 1 to 900',
      ],
      [
        'FORGEBRIDGE_RECONCILE_RATE: every 10 minutes\n',
        '"FORGEBRIDGE_RECONCILE_RATE" must be a schedule expression',
      ],
      [
        'FORGEBRIDGE_ALARM_QUIET_HOURS: 25\n',
        '"FORGEBRIDGE_ALARM_QUIET_HOURS" must be a whole number from 0 to 24',
      ],
      ['FORGEBRIDGE_ALARM_EMAIL: ops at example\n', '"FORGEBRIDGE_ALARM_EMAIL" must be one email address'],
      [
        'FORGEBRIDGE_ALARM_SIGNATURE_FAILURES: 2.5\n',
        '"FORGEBRIDGE_ALARM_SIGNATURE_FAILURES" must be a whole number from 0 to',
      ],
      [
        'FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS: 30\n',
        '"FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS" must be a whole number from 60',
      ],
      [
        'FORGEBRIDGE_FORGE: github\nFORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: a, forge: gitlab, secretParameter: /x/a }\n',
        'with "FORGEBRIDGE_WEBHOOK_SOURCES" give each source its "forge" instead',
      ],
    ];
    for (const [text, message] of cases) {
      stageFile('prod', text);
      expect(() => readStageConfig({ stage: 'prod', dir, env: {} }), text).toThrow(message);
    }
  });

  it('runs offline without secret parameters: the local stack reads each secret from the environment', () => {
    stageFile('local', 'FORGEBRIDGE_WEBHOOK_SOURCES:\n  - { name: github, forge: github }\n');
    expect(readStageConfig({ stage: 'local', dir, env: {}, offline: true }).sources).toMatchObject([
      { name: 'github', secretParameter: undefined },
    ]);
  });

  it('refuses a stage name that is not one (a path)', () => {
    expect(() => stageConfigPath('../etc/passwd', dir)).toThrow('stage "../etc/passwd" must be letters');
    expect(() => readStageConfig({ stage: 'a b', dir, env: {} })).toThrow(
      'must be letters, digits and hyphens',
    );
  });
});

describe('parseStageFile', () => {
  it('takes an empty file as no settings', () => {
    expect(parseStageFile('# nothing yet\n', 'config/x.yml')).toEqual({});
  });

  it('names the file and the line of a YAML error, and refuses a duplicate key', () => {
    expect(() => parseStageFile('FORGEBRIDGE_FORGE: [github\n', 'config/x.yml')).toThrow(
      /^config\/x\.yml:\d+: not valid YAML/,
    );
    expect(() =>
      parseStageFile('FORGEBRIDGE_FORGE: github\nFORGEBRIDGE_FORGE: gitlab\n', 'config/x.yml'),
    ).toThrow('config/x.yml:2: not valid YAML (DUPLICATE_KEY)');
  });

  it('refuses a list at the top, an unknown key, a secret, and a value of the wrong shape', () => {
    expect(() => parseStageFile('- a\n', 'f.yml')).toThrow(
      'f.yml: must be a mapping of setting names to values',
    );
    expect(() => parseStageFile('FORGEBRIDGE_FORGES: github\n', 'f.yml')).toThrow(
      'f.yml: "FORGEBRIDGE_FORGES" is not a setting',
    );
    expect(() => parseStageFile('FORGEBRIDGE_WEBHOOK_SECRET: hunter2\n', 'f.yml')).toThrow(
      /"FORGEBRIDGE_WEBHOOK_SECRET" is a secret: keep it in SSM Parameter Store/,
    );
    expect(() => parseStageFile('FORGEBRIDGE_WEBHOOK_SECRET: hunter2\n', 'f.yml')).not.toThrow(/hunter2/);
    expect(() => parseStageFile('FORGEBRIDGE_FORGE: [github]\n', 'f.yml')).toThrow(
      'f.yml: "FORGEBRIDGE_FORGE" must be a single value, not a list',
    );
    expect(() => parseStageFile('FORGEBRIDGE_OAUTH_CLIENTS: { a: 1 }\n', 'f.yml')).toThrow(
      'f.yml: "FORGEBRIDGE_OAUTH_CLIENTS" must be a list',
    );
  });

  it('takes a list setting written as JSON text too, as the environment variable is', () => {
    expect(parseStageFile("FORGEBRIDGE_OAUTH_CLIENTS: '[]'\n", 'f.yml')).toEqual({
      FORGEBRIDGE_OAUTH_CLIENTS: '[]',
    });
  });

  it('knows every setting serverless.yml reads, each with a default', () => {
    expect(StageSettingNames).toEqual(Object.keys(stageDefaults('x')));
    expect(StageSettingNames.length).toBeGreaterThan(40);
  });
});
