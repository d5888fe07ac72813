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
  statSync,
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
  /** The template file, in {@link PackagedTemplate.dir}. */
  file: string;
  /**
   * What `osls package` wrote: the template and each function's zip (in the run's folder, or in a temp dir removed
   * when the process ends).
   */
  dir: string;
}

/** The template's name in a package folder. */
const TEMPLATE_FILE = 'cloudformation-template-update-stack.json';

function readPackage(dir: string): PackagedTemplate {
  const file = join(dir, TEMPLATE_FILE);
  return { template: JSON.parse(readFileSync(file, 'utf8')) as CfnTemplate, file, dir };
}

/**
 * The environment `osls` runs with in the tests: PATH and a throw-away HOME only (nothing of the caller's
 * FORGEBRIDGE_* settings), no telemetry, and a serverless-esbuild work folder of its own (it deletes it when done,
 * and must not touch a running stack's). Two caches are shared by every run of osls, as the local stack's: the
 * configuration schema osls compiles (about 3 CPU-s a run; it writes the file beside and renames it, so runs at
 * once are safe), kept in the repository's .tmp/ instead of HOME, and Node's code cache of the test run, when set.
 */
export function oslsEnv(home: string, workFolder: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    ...(process.env.NODE_COMPILE_CACHE === undefined
      ? {}
      : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE }),
    SLS_SCHEMA_CACHE_BASE_DIR: join(root, '.tmp/osls'),
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
 * Every file that shapes the template of `stage`: serverless.yml, infra/, the stage's own config/<stage>.yml (not the
 * other stage files: a test may keep one of its own there for a while), the local stage's recorder and the metric
 * definitions infra/monitoring.cjs builds the alarms from.
 */
function inputsDigest(stage: string): string {
  const hash = createHash('sha256');
  const files = [
    'serverless.yml',
    'local-stack/recorder.yml',
    'local-stack/bus-twin.yml',
    'lib/aws/constants.ts',
    'lib/aws/stage/ordered-subscribers.ts',
    `config/${stage}.yml`,
  ];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(root, path));
    }
  };
  walk(join(root, 'infra'));
  for (const file of files.sort()) {
    hash.update(`${file}\0`);
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The package of `stage` (its template and zips), made now or earlier in this run.
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
      : join(runDir, 'packages', `${stage}-${inputsDigest(stage)}`);
  if (kept !== undefined && existsSync(kept)) return readPackage(kept);

  // One package per stage and run: the first file to ask packages, the others (other workers) wait for its folder.
  const release = kept === undefined ? undefined : await lockPackage(kept);
  try {
    if (kept !== undefined && existsSync(kept)) return readPackage(kept);
    return await packageNow(stage, kept);
  } finally {
    release?.();
  }
}

/** How long one `osls package` may take. */
const PACKAGE_TIMEOUT_MS = 150_000;

/**
 * Takes the lock of a kept package (a folder beside it: making one is atomic), waiting while another worker holds it.
 * A lock older than a package may take is taken over (its holder died).
 */
async function lockPackage(kept: string): Promise<() => void> {
  const lock = `${kept}.lock`;
  mkdirSync(join(kept, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (existsSync(kept)) return () => {};
    const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
    if (since !== undefined && Date.now() - since > PACKAGE_TIMEOUT_MS) {
      rmSync(lock, { recursive: true, force: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Runs `osls package` for `stage` into `kept` (whole or not at all), or into a temp dir without one. */
async function packageNow(stage: string, kept: string | undefined): Promise<PackagedTemplate> {
  const scratch = mkdtempSync(join(tmpdir(), 'forgebridge-packaged-'));
  const workFolder = `.esbuild/packaged-${randomBytes(4).toString('hex')}`;
  // Beside its final place (one file system, so the rename is atomic): another file may look for it at any moment.
  const out = kept === undefined ? join(scratch, 'out') : `${kept}.${process.pid}.partial`;
  try {
    await run(join(root, 'node_modules/.bin/osls'), ['package', '--package', out, '--stage', stage], {
      cwd: root,
      env: oslsEnv(join(scratch, 'home'), workFolder),
      timeout: PACKAGE_TIMEOUT_MS,
    });
    if (kept === undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'forgebridge-package-'));
      renameSync(out, join(dir, 'out'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      return readPackage(join(dir, 'out'));
    }
    renameSync(out, kept);
    return readPackage(kept);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    if (kept !== undefined) rmSync(out, { recursive: true, force: true });
    rmSync(join(root, workFolder), { recursive: true, force: true });
  }
}
