// The committed event catalogue (lib/webhooks/generated/) is what scripts/generate-webhook-catalogue.ts writes from
// @octokit/openapi-webhooks today: its `--check` writes nothing and exits 1, naming each file, when one differs.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { NODE, ROOT } from '../helpers/cli.js';

const SCRIPT = join(ROOT, 'scripts/generate-webhook-catalogue.ts');

it('the generated files are up to date (npm run generate:check)', async () => {
  expect(existsSync(SCRIPT)).toBe(true);
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      NODE,
      ['--import', 'tsx', SCRIPT, '--check'],
      { cwd: ROOT, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
  expect(result.output).toMatch(
    /^generated webhook catalogue in lib\/webhooks\/generated is up to date \(\d+ files\)\n$/,
  );
  expect(result.code).toBe(0);
}, 120_000);
