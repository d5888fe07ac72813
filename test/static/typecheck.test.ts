// The whole repository type-checked by tsc in strict mode (tsconfig.json: lib, functions, infra, local-stack,
// test, scripts, bench, examples), as a test: any diagnostic fails it, and the test shows tsc's own output.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { NODE, ROOT } from '../helpers/cli.js';

it('tsc -p tsconfig.json finds no type error', async () => {
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      NODE,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--noEmit', '--pretty', 'false'],
      { cwd: ROOT, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
  expect(result.output).toBe('');
  expect(result.code).toBe(0);
}, 300_000);
