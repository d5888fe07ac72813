// A stage configured by config/<stage>.yml alone: osls with nothing in the environment resolves the stage the file
// describes (its sources, forge, alarm address, log level), a redeploy from another shell builds the same
// template as one from the shell that had every variable set, a variable still overrides the file, and a wrong
// value stops osls with the file named. The same file read by `forgebridge config` shows the same settings.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oslsEnv } from '../../helpers/packaged-template.js';

const root = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

/** A stage of this test's own: its file lives in config/ for the test's length only. */
const STAGE = `ci-file-${process.pid}`;
const FILE = join(root, 'config', `${STAGE}.yml`);

const SOURCES = [
  { name: 'github', forge: 'github', secretParameter: `/forgebridge/${STAGE}/webhook-secret/github` },
  {
    name: 'gitlab-acme',
    forge: 'gitlab',
    secretParameter: `/forgebridge/${STAGE}/webhook-secret/gitlab-acme`,
    verifyWith: 'token',
  },
];

const STAGE_FILE = `# written by test/integration/infra/stage-config.test.ts
FORGEBRIDGE_WEBHOOK_SOURCES:
  - name: github
    forge: github
    secretParameter: /forgebridge/${STAGE}/webhook-secret/github
  - name: gitlab-acme
    forge: gitlab
    secretParameter: /forgebridge/${STAGE}/webhook-secret/gitlab-acme
    verifyWith: token
FORGEBRIDGE_LOG_LEVEL: INFO
FORGEBRIDGE_ALARM_EMAIL: ops@example.com
FORGEBRIDGE_ALARM_QUIET_HOURS: 6
FORGEBRIDGE_INGEST_TIMEOUT: 12
`;

/** The same settings as environment variables: what a deploy before config files needed in its shell. */
const AS_VARIABLES = {
  FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(SOURCES),
  FORGEBRIDGE_LOG_LEVEL: 'INFO',
  FORGEBRIDGE_ALARM_EMAIL: 'ops@example.com',
  FORGEBRIDGE_ALARM_QUIET_HOURS: '6',
  FORGEBRIDGE_INGEST_TIMEOUT: '12',
};

/** `osls print --format json`: the stage's configuration with every variable resolved. */
interface Printed {
  provider: { environment: Record<string, unknown> };
  functions: Record<
    string,
    {
      timeout?: number;
      environment?: Record<string, unknown>;
      iamRoleStatements?: { Action: string | string[]; Resource: unknown }[];
    }
  >;
  resources: { Resources: Record<string, unknown>; Parameters: Record<string, { Default?: unknown }> };
}

let dir: string;
let workFolder: string;
let osls: (args: string[], extra?: NodeJS.ProcessEnv) => Promise<{ stdout: string; stderr: string }>;
const print = async (extra: NodeJS.ProcessEnv = {}): Promise<Printed> =>
  JSON.parse((await osls(['print', '--stage', STAGE, '--format', 'json'], extra)).stdout) as Printed;
/**
 * The stage as the file alone configures it. `osls print` resolves every setting the template is compiled from (the
 * functions with their environment, timeout and role statements, and the resources infra/ generates); the package
 * test compiles and lints such a configuration, so this one does not package again.
 */
let fromFile: Printed;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-stage-config-'));
  workFolder = `.esbuild/stage-config-${basename(dir)}`;
  const home = join(dir, 'home');
  // Nothing of the test's own environment: PATH and a throw-away HOME only.
  const env = oslsEnv(home, workFolder);
  osls = (args, extra = {}) =>
    run(join(root, 'node_modules/.bin/osls'), args, {
      cwd: root,
      env: { ...env, ...extra },
      timeout: 150_000,
    });
  writeFileSync(FILE, STAGE_FILE);
  fromFile = await print();
}, 200_000);

afterAll(() => {
  rmSync(FILE, { force: true });
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  if (workFolder !== undefined) rmSync(join(root, workFolder), { recursive: true, force: true });
});

/** A function's environment as deployed: the provider's variables with the function's own over them. */
function variablesOf(name: string): Record<string, unknown> {
  const fn = fromFile.functions[name];
  if (fn === undefined) throw new Error(`no function ${name}`);
  return { ...fromFile.provider.environment, ...fn.environment };
}

describe('a stage configured by config/<stage>.yml alone', () => {
  it("gives the ingest and the reconciler the file's sources, and the ingest's role each source's secret by name", () => {
    expect(JSON.parse(String(variablesOf('ingest').FORGEBRIDGE_WEBHOOK_SOURCES))).toEqual(SOURCES);
    expect(JSON.parse(String(variablesOf('reconcile').FORGEBRIDGE_WEBHOOK_SOURCES))).toEqual(SOURCES);
    const ssm = (fromFile.functions.ingest?.iamRoleStatements ?? []).filter((statement) =>
      [statement.Action].flat().includes('ssm:GetParameter'),
    );
    expect(ssm.map((statement) => statement.Resource)).toEqual([
      SOURCES.map((source) => ({
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${source.secretParameter}`,
      })),
    ]);
  });

  it('takes the log level, the Lambda timeout, the alarm address and the per-source alarms from the file', () => {
    expect(variablesOf('ingest').POWERTOOLS_LOG_LEVEL).toBe('INFO');
    expect(fromFile.functions.ingest?.timeout).toBe(12);
    expect(variablesOf('ingest').FORGEBRIDGE_DEDUPE_LOCK_SECONDS).toBe('12');
    expect(fromFile.resources.Parameters.AlarmEmail?.Default).toBe('ops@example.com');
    expect(
      Object.keys(fromFile.resources.Resources)
        .filter((id) => id.startsWith('QuietSource'))
        .sort(),
    ).toEqual(['QuietSourceGithubAlarm', 'QuietSourceGitlabAcmeAlarm']);
  });

  it('builds the same stage from a shell without the variables as from one with every variable set', async () => {
    rmSync(FILE);
    try {
      const [fromVariables, bare] = await Promise.all([print(AS_VARIABLES), print({})]);
      expect(fromFile.functions).toEqual(fromVariables.functions);
      expect(fromFile.resources).toEqual(fromVariables.resources);
      // Without the file and without the variables: the defaults, a different stage.
      expect(bare.functions.ingest?.environment?.FORGEBRIDGE_WEBHOOK_SOURCES).toBe('');
    } finally {
      writeFileSync(FILE, STAGE_FILE);
    }
  }, 120_000);

  it('lets a variable set in the shell override the file, and names the bucket only when asked', async () => {
    const printed = JSON.parse(
      (
        await osls(['print', '--stage', STAGE, '--format', 'json'], {
          FORGEBRIDGE_LOG_LEVEL: 'DEBUG',
          FORGEBRIDGE_BUCKET: 'acme-forgebridge-claim-checks-123456789012-eu-west-1',
        })
      ).stdout,
    );
    expect(printed.provider.environment.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
    expect(printed.resources.Resources.ClaimCheckBucket.Properties.BucketName).toBe(
      'acme-forgebridge-claim-checks-123456789012-eu-west-1',
    );
  }, 60_000);

  it('stops osls on a wrong value, naming the setting and the file it came from', async () => {
    writeFileSync(FILE, `${STAGE_FILE}FORGEBRIDGE_MAX_ENTRY_BYTES: lots\n`);
    try {
      await expect(osls(['print', '--stage', STAGE])).rejects.toMatchObject({
        stdout: expect.stringContaining(
          `"FORGEBRIDGE_MAX_ENTRY_BYTES" must be a positive number (the value from ${FILE})`,
        ),
      });
    } finally {
      writeFileSync(FILE, STAGE_FILE);
    }
  }, 60_000);

  it('stops a package in a region without Function URLs with one line, and builds the HTTP API there when asked', async () => {
    // ap-south-2 (Hyderabad): the Lambda developer guide lists it among the regions without Function URLs.
    await expect(osls(['print', '--stage', STAGE, '--region', 'ap-south-2'])).rejects.toMatchObject({
      stdout: expect.stringContaining(
        'lambda offers no function urls in region "ap-south-2": set FORGEBRIDGE_HTTP_API=true',
      ),
    });
    const printed = JSON.parse(
      (
        await osls(['print', '--stage', STAGE, '--region', 'ap-south-2', '--format', 'json'], {
          FORGEBRIDGE_HTTP_API: 'true',
        })
      ).stdout,
    );
    expect(printed.functions.ingest.url).toBe(false);
    expect(
      printed.functions.ingest.events.map((event: { httpApi?: { path: string } }) => event.httpApi?.path),
    ).toEqual(['/webhooks', '/webhooks/{source}']);
    expect(JSON.stringify(printed.resources)).not.toContain('Url5xxCount');
  }, 60_000);

  it('shows the same settings through forgebridge config --stage', async () => {
    const { stdout } = await run(
      join(root, 'node_modules/.bin/node'),
      [join(root, 'bin/forgebridge.js'), 'config', '--stage', STAGE, '--json'],
      { cwd: root, env: { PATH: process.env.PATH, HOME: join(dir, 'home') } },
    );
    const config = JSON.parse(stdout);
    expect(config.file).toBe(FILE);
    expect(JSON.parse(config.settings.FORGEBRIDGE_WEBHOOK_SOURCES)).toEqual(SOURCES);
    expect(config.origins.FORGEBRIDGE_WEBHOOK_SOURCES).toBe('file');
    expect(config.origins.FORGEBRIDGE_BUS_NAME).toBe('default');
    expect(config.sources.map((source: { name: string }) => source.name)).toEqual(['github', 'gitlab-acme']);
  });
});
