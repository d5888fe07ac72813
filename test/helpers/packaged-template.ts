// The CloudFormation template of a stage as `osls package --stage <stage>` builds it, the way the package test
// runs it (test/integration/infra/package.test.ts): offline, nothing of the caller's FORGEBRIDGE_* environment, HOME
// in a temp dir, an esbuild work folder of its own. Within one test run the template of a stage is packaged once
// and kept in the run's folder (FORGEBRIDGE_TEST_RUN_DIR, test/setup/test-run.ts) under a digest of the files that
// shape it, so the cdk-nag test and the IAM test share one package.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

/** One resource of a CloudFormation template. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** The parts of a CloudFormation template read here. */
export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Conditions?: Record<string, unknown>;
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, unknown>;
}

/** The packaged template and where it lies. */
export interface PackagedTemplate {
  template: CfnTemplate;
  /** The template file (in the run's folder, or in a temp dir removed when the process ends). */
  file: string;
}

/**
 * The environment `osls` runs with in the tests: PATH and a throw-away HOME only (nothing of the caller's
 * FORGEBRIDGE_* settings), no telemetry, and a serverless-esbuild work folder of its own (it deletes it when done,
 * and must not touch a running stack's).
 */
export function oslsEnv(home: string, workFolder: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    FORGEBRIDGE_ESBUILD_WORK_FOLDER: workFolder,
  };
}

/**
 * Every file that shapes the template: serverless.yml, infra/, config/, the local stage's recorder and the metric
 * definitions infra/monitoring.cjs builds the alarms from.
 */
function inputsDigest(): string {
  const hash = createHash('sha256');
  const files = ['serverless.yml', 'local-stack/recorder.yml', 'lib/aws/constants.ts'];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(root, path));
    }
  };
  walk(join(root, 'infra'));
  walk(join(root, 'config'));
  for (const file of files.sort()) {
    hash.update(`${file}\0`);
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The template of `stage`, packaged now or earlier in this run.
 *
 * @example
 * ```ts
 * const { template } = await packagedTemplate('ci');
 * ```
 */
export async function packagedTemplate(stage: string): Promise<PackagedTemplate> {
  const runDir = process.env.FORGEBRIDGE_TEST_RUN_DIR;
  const kept =
    runDir === undefined || runDir === ''
      ? undefined
      : join(runDir, 'templates', `${stage}-${inputsDigest()}.json`);
  if (kept !== undefined && existsSync(kept)) {
    return { template: JSON.parse(readFileSync(kept, 'utf8')) as CfnTemplate, file: kept };
  }

  const dir = mkdtempSync(join(tmpdir(), 'forgebridge-packaged-'));
  const workFolder = `.esbuild/packaged-${randomBytes(4).toString('hex')}`;
  const home = join(dir, 'home');
  try {
    await run(
      join(root, 'node_modules/.bin/osls'),
      ['package', '--package', join(dir, 'out'), '--stage', stage],
      {
        cwd: root,
        env: oslsEnv(home, workFolder),
        timeout: 150_000,
      },
    );
    const text = readFileSync(join(dir, 'out/cloudformation-template-update-stack.json'), 'utf8');
    let file: string;
    if (kept === undefined) {
      file = join(mkdtempSync(join(tmpdir(), 'forgebridge-template-')), 'template.json');
      const folder = join(file, '..');
      process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    } else {
      mkdirSync(join(kept, '..'), { recursive: true });
      file = kept;
    }
    // Whole or not at all: another file of the run may read it at any moment.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, text);
    renameSync(partial, file);
    return { template: JSON.parse(text) as CfnTemplate, file };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(root, workFolder), { recursive: true, force: true });
  }
}
