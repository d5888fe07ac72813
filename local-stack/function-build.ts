// The local stack's build of the functions: every handler in one esbuild run, with the options
// they are deployed with (infra/esbuild.cjs) except that the code they share goes to shared chunks, once, and
// is left unminified. One run takes about a third of the time of six separate bundles; serverless-offline loads
// the handlers from it (FORGEBRIDGE_OFFLINE_BUILD, see infra/plugins.cjs).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('../', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const { esbuildOptions } = require('../infra/esbuild.cjs') as {
  esbuildOptions: () => Record<string, unknown>;
};

/** The files that declare functions: serverless.yml, and the local stage's recording subscriber. */
const DECLARING = ['serverless.yml', 'local-stack/recorder.yml'];

/**
 * The handler files the functions name (`handler: functions/ingest/handler.handler` is
 * `functions/ingest/handler.ts`), relative to the repository, each once.
 */
export function functionEntries(): string[] {
  const entries = new Set<string>();
  for (const file of DECLARING) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const [, module] of text.matchAll(/^\s+handler:\s*([\w./-]+)\.\w+\s*$/gm)) {
      const entry = `${module}.ts`;
      if (!existsSync(join(root, entry))) throw new Error(`${file}: no ${entry} for handler "${module}"`);
      entries.add(entry);
    }
  }
  return [...entries].sort();
}

/**
 * Builds every function into `outdir` (absolute): `functions/<name>/handler.mjs` each, and `chunks/` for what
 * they share. Rejects with esbuild's own message when the code does not build.
 */
export async function buildFunctions(outdir: string): Promise<void> {
  await build({
    ...esbuildOptions(),
    minify: false,
    entryPoints: functionEntries(),
    absWorkingDir: root,
    outbase: root,
    outdir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'silent',
  });
}
