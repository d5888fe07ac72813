import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFunctions, functionEntries } from '../../../local-stack/function-build.js';

const root = new URL('../../../', import.meta.url).pathname;
const outdir = mkdtempSync(join(tmpdir(), 'forgebridge-function-build-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('the local stack build of the functions', () => {
  it('finds the handler of every function serverless.yml and the local stage declare, each once', () => {
    // The local stage's ordered subscribers are declared by their `handler:` in config/local.yml, their twin on the
    // bus in local-stack/bus-twin.yml, the example commenter in local-stack/commenter.yml.
    const declared = [
      'serverless.yml',
      'local-stack/recorder.yml',
      'local-stack/bus-twin.yml',
      'local-stack/commenter.yml',
      'config/local.yml',
    ].flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/handler: (\S+)\.handler/g)].map(
        ([, module]) => `${module}.ts`,
      ),
    );
    expect(functionEntries()).toEqual([...new Set(declared)].sort());
    expect(functionEntries()).toContain('functions/ingest/handler.ts');
    expect(functionEntries()).toContain('local-stack/recorder.ts');
    expect(functionEntries()).toContain('functions/ordered/handler.ts');
    expect(functionEntries()).toContain('functions/ordered-on-bus/handler.ts');
  });

  it('builds each handler as an ES module beside chunks of shared code, in one run', {
    timeout: 60_000,
  }, async () => {
    await buildFunctions(outdir);
    for (const entry of functionEntries()) {
      const built = readFileSync(join(outdir, entry.replace(/\.ts$/, '.mjs')), 'utf8');
      // The deployed banner, and the handler's imports stay within the build.
      expect(built.startsWith("import{createRequire}from'node:module';")).toBe(true);
      const relative = [...built.matchAll(/\bfrom "(\.[^"]+)"/g)].map(([, specifier]) => specifier);
      expect(relative.length).toBeGreaterThan(0);
      for (const specifier of relative) expect(specifier).toMatch(/^(\.\.\/)+chunks\/[\w-]+\.mjs$/);
    }
    const chunks = readdirSync(join(outdir, 'chunks'));
    expect(chunks.length).toBeGreaterThan(0);
    // The AWS SDK is bundled once for all of them, not once per function.
    const sdk = chunks.filter((chunk) =>
      readFileSync(join(outdir, 'chunks', chunk), 'utf8').includes('DynamoDBClient = class'),
    );
    expect(sdk).toHaveLength(1);
  });

  it('rejects when the build cannot be written', async () => {
    await expect(buildFunctions('/dev/null/not-a-folder')).rejects.toThrow(
      /Build failed|ENOTDIR|not a directory/,
    );
  });
});
