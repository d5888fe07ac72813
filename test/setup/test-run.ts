// One folder per vitest run, shared by its projects (vitest.config.ts hands it to them as
// FORGEBRIDGE_TEST_RUN_DIR): the end-to-end stacks append every AWS call of the functions to its
// `aws-calls.jsonl`, which the iam project then evaluates, and a stage's packaged template is kept there so that
// the cdk-nag and IAM tests package it once per run. `npm test` names it inside its throw-away home; a run of
// vitest alone gets `.tmp/test-runs/<pid>/`, made new when the run starts and removed when it ends (this file is
// the root project's `globalSetup`). A folder given in FORGEBRIDGE_TEST_RUN_DIR is never removed, so that the calls
// of one run can be evaluated by a later one (`--project e2e`, then `--project iam`).
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;

/** The run's folder: FORGEBRIDGE_TEST_RUN_DIR, else one of this process (vitest's main process) under .tmp/. */
export function testRunDir(): { dir: string; given: boolean } {
  const given = process.env.FORGEBRIDGE_TEST_RUN_DIR;
  if (given !== undefined && given !== '') return { dir: given, given: true };
  return { dir: join(root, '.tmp/test-runs', String(process.pid)), given: false };
}

export default function setup(): () => void {
  const { dir, given } = testRunDir();
  if (!given) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return () => {
    if (!given) rmSync(dir, { recursive: true, force: true });
  };
}
