// The house rules, read from the sources: every import into a lib/ folder from outside it goes through that
// folder's index.ts (its barrel), the two libraries import no AWS or Lambda code and neither imports the other's
// neighbours, no arrow runs back up (lib never imports functions/ or local-stack/), every functions/*/handler.ts is
// wiring only, no hand-written lib file is over 400 lines, and each library's error classes are in its errors.ts.
//
// lib/aws is split by what runs where, each part a folder with its barrel that the rest of lib/aws imports it
// through: lib/aws/publish (a delivery onto the bus: the entry, the claim check, the publisher), lib/aws/queue (the
// dedupe table's records, the durable queue and its retrier), lib/aws/ingest (the request path) and
// lib/aws/subscriber (the subscriber side). The arrows run one way: ingest -> queue -> publish, ingest -> publish;
// the subscriber side imports none of the three and none of them imports it, and publish imports neither the queue
// nor the request path, the queue not the request path.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const LIB_FOLDERS = ['aws', 'cli', 'oauth2', 'webhooks'];

function files(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(ROOT, folder))) {
    const path = join(folder, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(join(ROOT, path)).isDirectory()) found.push(...files(path));
    else if (/\.(ts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Every relative module a file imports or re-exports (static and dynamic), as a path from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gms),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier)));
}

const libFolderOf = (path: string) => /^lib\/([^/]+)\//.exec(path)?.[1];
const SOURCES = ['lib', 'functions', 'local-stack', 'infra', 'scripts', 'bin', 'examples', 'bench'].flatMap(
  files,
);

describe('the house rules', () => {
  it('imports into a lib/ folder from outside it go through its index.ts', () => {
    const deep: string[] = [];
    for (const file of SOURCES) {
      for (const target of importsOf(file)) {
        const folder = libFolderOf(target);
        if (folder === undefined || folder === libFolderOf(file)) continue;
        // The CLI's entry point is its barrel for bin/forgebridge.js, and the local stack's state file (which the
        // stack writes and the CLI reads) its second door, the replay to one subscriber (which the inspector's page
        // runs as `replay --since` does) its third; lib/aws has two more, SDK-free ones (core, and a
        // stage's settings), and a third for this repository's own code (internal.ts, not a package entry), which
        // the functions and the examples do not use: they import what a user can, `forgebridge/aws`.
        const userFacing = file.startsWith('functions/') || file.startsWith('examples/');
        const barrels =
          folder === 'cli'
            ? ['lib/cli/run.ts', 'lib/cli/run.js', 'lib/cli/state-file.js', 'lib/cli/bulk-replay.js']
            : [
                `lib/${folder}/index.js`,
                ...(folder === 'aws'
                  ? [
                      'lib/aws/core/index.js',
                      'lib/aws/stage/index.js',
                      ...(userFacing ? [] : ['lib/aws/internal.js']),
                    ]
                  : []),
              ];
        if (!barrels.includes(target)) deep.push(`${file} -> ${target}`);
      }
    }
    expect(deep).toEqual([]);
  });

  it("lib/aws's parts by what runs where are entered through their barrels and layered ingest -> queue -> publish, the subscriber side apart", () => {
    const PARTS = ['ingest', 'queue', 'publish', 'subscriber'];
    // What each part may import of the others.
    const MAY: Record<string, string[]> = {
      ingest: ['queue', 'publish'],
      queue: ['publish'],
      publish: [],
      subscriber: [],
    };
    const partOf = (path: string) => {
      const part = /^lib\/aws\/([^/]+)\//.exec(path)?.[1];
      return part !== undefined && PARTS.includes(part) ? part : undefined;
    };
    for (const part of PARTS) expect(statSync(join(ROOT, 'lib/aws', part, 'index.ts')).isFile()).toBe(true);
    const wrong: string[] = [];
    for (const file of SOURCES) {
      const from = partOf(file);
      for (const target of importsOf(file)) {
        const to = partOf(target);
        if (to === undefined || to === from) continue;
        if (target !== `lib/aws/${to}/index.js`) wrong.push(`${file} -> ${target} (not through the barrel)`);
        if (from !== undefined && !MAY[from]?.includes(to))
          wrong.push(`${file} -> ${target} (${from} may not import ${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("every error class of a library is declared in that library's errors.ts", () => {
    const elsewhere: string[] = [];
    for (const folder of LIB_FOLDERS) {
      for (const file of files(`lib/${folder}`)) {
        if (file === `lib/${folder}/errors.ts`) continue;
        const text = readFileSync(join(ROOT, file), 'utf8');
        for (const match of text.matchAll(/\bclass\s+(\w+)\s+extends\s+(\w*Error)\b/g)) {
          elsewhere.push(`${file}: ${match[1]} extends ${match[2]}`);
        }
      }
      expect(statSync(join(ROOT, 'lib', folder, 'errors.ts')).isFile()).toBe(true);
    }
    expect(elsewhere).toEqual([]);
  });

  it('lib/webhooks and lib/oauth2 import no AWS or Lambda code and no other lib folder', () => {
    const wrong: string[] = [];
    for (const file of [...files('lib/webhooks'), ...files('lib/oauth2')]) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(
        /from\s+'((?:@aws-sdk|@aws-lambda-powertools|@middy|aws-lambda)[^']*)'/g,
      )) {
        wrong.push(`${file} -> ${match[1]}`);
      }
      for (const target of importsOf(file)) {
        if (libFolderOf(target) !== libFolderOf(file)) wrong.push(`${file} -> ${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lib/aws/core loads no package: only its own small modules, so the light CLI commands never load the SDK', () => {
    const seen = new Set<string>();
    const packages: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(ROOT, file), 'utf8');
      // A type-only import is erased: it loads nothing.
      for (const match of text.matchAll(/^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'([^'.][^']*)'/gms)) {
        if (!(match[1] as string).startsWith('node:')) packages.push(`${file} -> ${match[1]}`);
      }
      for (const match of text.matchAll(/^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms)) {
        visit(relative(ROOT, resolve(ROOT, dirname(file), match[1] as string)).replace(/\.js$/, '.ts'));
      }
    };
    visit('lib/aws/core/index.ts');
    expect(packages).toEqual([]);
    expect([...seen].sort()).toEqual(['lib/aws/constants.ts', 'lib/aws/core/index.ts', 'lib/aws/rules.ts']);
  });

  it("lib/aws/stage-config loads no AWS SDK: `osls package` and `forgebridge config` check a stage with the functions' own readers, SDK-free", () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'([^'.][^']*)'/gms)) {
        if (!(match[1] as string).startsWith('node:')) packages.add(match[1] as string);
      }
      for (const match of text.matchAll(/^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms)) {
        visit(relative(ROOT, resolve(ROOT, dirname(file), match[1] as string)).replace(/\.js$/, '.ts'));
      }
    };
    visit('lib/aws/stage/index.ts');
    expect(seen.has('lib/aws/stage/function-config.ts')).toBe(true);
    expect(
      [...packages].filter((name) => name.startsWith('@aws-sdk/') || name.startsWith('@middy/')),
    ).toEqual([]);
    expect(packages.has('yaml')).toBe(true);
  });

  it('no arrow runs back up: lib imports neither functions/ nor local-stack/, functions/ not local-stack/', () => {
    const upward: string[] = [];
    for (const file of [...files('lib'), ...files('functions')]) {
      for (const target of importsOf(file)) {
        if (
          target.startsWith('local-stack/') ||
          (file.startsWith('lib/') && target.startsWith('functions/'))
        ) {
          upward.push(`${file} -> ${target}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('every functions/*/handler.ts is at most 10 code lines besides imports', () => {
    const sizes: Record<string, number> = {};
    for (const file of files('functions').filter((path) => path.endsWith('/handler.ts'))) {
      const text = readFileSync(join(ROOT, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^import[\s\S]*?from\s+'[^']+';$/gm, '');
      sizes[file] = text
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.trim().startsWith('//')).length;
    }
    expect(Object.keys(sizes).length).toBeGreaterThanOrEqual(5);
    expect(Object.entries(sizes).filter(([, lines]) => lines > 10)).toEqual([]);
  });

  it('no hand-written lib file is over 400 lines', () => {
    const sizes: Record<string, number> = {};
    for (const file of files('lib').filter((path) => path.endsWith('.ts'))) {
      if (file.startsWith('lib/webhooks/generated/')) continue;
      const text = readFileSync(join(ROOT, file), 'utf8');
      sizes[file] = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    }
    expect(sizes['lib/aws/index.ts']).toBeGreaterThan(0);
    expect(Object.entries(sizes).filter(([, lines]) => lines > 400)).toEqual([]);
  });
});

it.each(LIB_FOLDERS)('lib/%s has its barrel', (folder) => {
  expect(statSync(join(ROOT, 'lib', folder, folder === 'cli' ? 'run.ts' : 'index.ts')).isFile()).toBe(true);
});
