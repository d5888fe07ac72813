// The `forgebridge` CLI built once per vitest run for the tests that run it as a process (test/helpers/cli.ts
// `runCli`, about 130 processes in a whole run). bin/forgebridge.js registers tsx and has it resolve and transform
// every module of lib/ at each start, which doubled each process's CPU time; this build is the same sources, bundled
// by esbuild with the packages they import (the AWS SDK, Powertools, commander, jose, yaml: plain JavaScript, no
// file of their own read at run time), each file's `import.meta.url` kept as its source file's (the CLI finds
// package.json, serverless.yml, the inspector's page and the state file from there), and each command a chunk of its
// own that loads on demand, as program.ts loads it. With the packages in the bundle a process reads a few files
// instead of resolving and loading some 900 modules of node_modules: about 0.6 CPU-s less a start (0.7 against
// 1.3 for `deliveries --help` on 2 cores), over 100 starts a run. bin/forgebridge.js itself stays under test: the
// tests of its own behaviour (the help and exit codes from the bin, a real SIGINT, `config --stage`, the installed
// package's bin) run it.
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { testRunDir } from './test-run.js';

const root = new URL('../../', import.meta.url).pathname;

/** The built entry for the run whose folder is `runDir` (test/setup/test-run.ts): one folder per run. */
export function cliBuildEntry(runDir: string): string {
  const id = createHash('sha256').update(runDir).digest('hex').slice(0, 12);
  return join(root, '.tmp/cli-build', id, 'run.js');
}

/**
 * vitest `globalSetup`: builds the CLI of this run (vitest.config.ts hands its entry to the tests as
 * `FORGEBRIDGE_TEST_CLI`) and removes it when the run ends.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const outdir = join(cliBuildEntry(testRunDir().dir), '..');
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { run: join(root, 'lib/cli/run.ts') },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Bundled CommonJS packages call `require` for Node's own modules, which an ES module does not have.
    banner: {
      js: "import{createRequire as __forgebridgeRequire}from'node:module';const require=__forgebridgeRequire(import.meta.url);",
    },
    logLevel: 'warning',
    plugins: [
      {
        name: 'source-file-urls',
        setup(context) {
          context.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
            contents: (await readFile(path, 'utf8')).replaceAll(
              'import.meta.url',
              JSON.stringify(pathToFileURL(path).href),
            ),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  return () => rm(outdir, { recursive: true, force: true });
}
