// The local stack's build of the functions: every handler in one esbuild run, with the options
// they are deployed with (infra/esbuild.cjs) except that the code they share goes to shared chunks, once, and
// is left unminified. One run takes about a third of the time of six separate bundles; serverless-offline loads
// the handlers from it (FORGEBRIDGE_OFFLINE_BUILD, see infra/plugins.cjs).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type BuildOptions, build, context, type OutputFile } from 'esbuild';

const root = new URL('../', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const { esbuildOptions } = require('../infra/esbuild.cjs') as {
  esbuildOptions: () => BuildOptions;
};

/**
 * The files that declare functions: serverless.yml, the local stage's recording subscriber, the ordered subscriber's
 * twin on the bus and the example commenter, and the local stage's ordered subscribers (their `handler:` lines in
 * config/local.yml).
 */
const DECLARING = [
  'serverless.yml',
  'local-stack/recorder.yml',
  'local-stack/bus-twin.yml',
  'local-stack/commenter.yml',
  'config/local.yml',
];

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

/** The file a rebuild touches in the build folder, for serverless-offline to load the functions anew. */
export const REBUILT_STAMP = '.rebuilt';

/** Where to build from and to: the repository's functions by default. */
export interface BuildTarget {
  /** Absolute folder to build into. */
  outdir: string;
  /** Entry files, relative to `root`. Default: {@link functionEntries}. */
  entries?: readonly string[] | undefined;
  /** Absolute folder the entries are relative to. Default: the repository. */
  root?: string | undefined;
}

function buildOptions(target: BuildTarget): BuildOptions {
  const base = target.root ?? root;
  return {
    ...esbuildOptions(),
    minify: false,
    entryPoints: [...(target.entries ?? functionEntries())],
    absWorkingDir: base,
    outbase: base,
    outdir: target.outdir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'silent',
  };
}

/**
 * Builds every function into `outdir` (absolute): `functions/<name>/handler.mjs` each, and `chunks/` for what
 * they share. Rejects with esbuild's own message when the code does not build.
 */
export async function buildFunctions(target: BuildTarget | string): Promise<void> {
  await build(buildOptions(typeof target === 'string' ? { outdir: target } : target));
}

/** A build that goes on rebuilding on every change of a file it read, until stopped. */
export interface WatchedBuild {
  stop(): Promise<void>;
}

/**
 * {@link buildFunctions}, then esbuild's watch mode: each change of a file the build read (the functions' code,
 * `lib/`, a package) rebuilds them, and a rebuild that succeeds touches {@link REBUILT_STAMP} in `outdir`, on
 * which the local stack's serverless-offline plugin drops the functions it holds (`local-stack/offline-reload.cjs`):
 * the next invocation runs the new code. `onRebuild` hears of every rebuild after the first, with esbuild's
 * messages when it failed (the previous build then stays in place). Rejects when the first build fails.
 */
export async function watchFunctions(
  target: BuildTarget,
  onRebuild: (result: { errors: string[] }) => void = () => {},
): Promise<WatchedBuild> {
  let first: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const built = new Promise<void>((resolve, reject) => {
    first = { resolve, reject };
  });
  const ctx = await context({
    ...buildOptions(target),
    // Written here, and only when the build succeeded: a failed rebuild leaves the last good build in place
    // (esbuild's own write would remove it).
    write: false,
    plugins: [
      {
        name: 'forgebridge-rebuilt',
        setup(build) {
          build.onEnd((result) => {
            const errors = result.errors.map((error) => error.text);
            if (errors.length === 0) writeBuild(target.outdir, result.outputFiles ?? []);
            if (first !== undefined) {
              const { resolve, reject } = first;
              first = undefined;
              if (errors.length === 0) resolve();
              else reject(new Error(`Build failed with ${errors.length} error(s): ${errors.join('; ')}`));
              return;
            }
            if (errors.length === 0) writeFileSync(join(target.outdir, REBUILT_STAMP), `${Date.now()}\n`);
            onRebuild({ errors });
          });
        },
      },
    ],
  });
  await ctx.watch();
  try {
    await built;
  } catch (error) {
    await ctx.dispose();
    throw error;
  }
  return { stop: () => ctx.dispose() };
}

/** Writes a build's files, then removes what an earlier build left that this one no longer has (old chunks). */
function writeBuild(outdir: string, files: readonly OutputFile[]): void {
  const written = new Set<string>();
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.contents);
    written.add(file.path);
  }
  for (const entry of readdirSync(outdir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && entry.name.endsWith('.mjs') && !written.has(path)) rmSync(path, { force: true });
  }
}
