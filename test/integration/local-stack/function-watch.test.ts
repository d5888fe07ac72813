import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { REBUILT_STAMP, watchFunctions } from '../../../local-stack/function-build.js';

const project = mkdtempSync(join(tmpdir(), 'forgebridge-function-watch-'));
const outdir = join(project, 'build');
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('watchFunctions', () => {
  it('rebuilds on a change of a file the build read, touches the stamp, and reports a failed rebuild without losing the last build', {
    timeout: 60_000,
  }, async () => {
    writeFileSync(join(project, 'answer.ts'), 'export const answer: string = "first";\n');
    writeFileSync(
      join(project, 'handler.ts'),
      'import { answer } from "./answer";\nexport const handler = async () => answer;\n',
    );
    const rebuilds: { errors: string[] }[] = [];
    const watched = await watchFunctions({ outdir, root: project, entries: ['handler.ts'] }, (result) =>
      rebuilds.push(result),
    );
    try {
      const built = () => readFileSync(join(outdir, 'handler.mjs'), 'utf8');
      expect(built()).toContain('"first"');
      expect(rebuilds).toEqual([]);

      writeFileSync(join(project, 'answer.ts'), 'export const answer: string = "second";\n');
      await vi.waitFor(() => expect(rebuilds.length).toBeGreaterThanOrEqual(1), {
        timeout: 15_000,
        interval: 50,
      });
      expect(rebuilds[0]).toEqual({ errors: [] });
      // One entry: all of it is in the handler's file.
      expect(built()).toContain('"second"');
      expect(readFileSync(join(outdir, REBUILT_STAMP), 'utf8')).toMatch(/^\d+\n$/);

      writeFileSync(join(project, 'answer.ts'), 'export const answer: string = ;\n');
      await vi.waitFor(() => expect(rebuilds.length).toBeGreaterThanOrEqual(2), {
        timeout: 15_000,
        interval: 50,
      });
      expect(rebuilds[1]?.errors.length).toBeGreaterThan(0);
      expect(rebuilds[1]?.errors.join(' ')).toMatch(/Unexpected/);
      expect(built()).toContain('"second"');
    } finally {
      await watched.stop();
    }
  });

  it('rejects when the first build fails, and watches nothing then', async () => {
    writeFileSync(join(project, 'broken.ts'), 'export const handler = ;\n');
    await expect(
      watchFunctions({ outdir: join(project, 'broken-build'), root: project, entries: ['broken.ts'] }),
    ).rejects.toThrow(/Build failed with 1 error/);
  });
});
