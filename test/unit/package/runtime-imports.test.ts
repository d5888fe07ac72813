// The installed package needs nothing but its `dependencies`: every module lib/ and bin/ import (types too, since
// the shipped declaration files keep those imports) is a Node built-in or a `dependencies` entry.
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
  files: string[];
};

// bin/forgebridge.js loads tsx only when the TypeScript sources are beside it, in the repository; the package
// ships no sources, so there it runs dist/ and never reaches this import.
const REPOSITORY_ONLY: Record<string, string> = { 'bin/forgebridge.js': 'tsx' };

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The bare specifiers of a file: static imports and re-exports, dynamic imports, require calls. */
function bareSpecifiers(text: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /\bfrom\s+'([^']+)'/g,
    /\bimport\s+'([^']+)'/g,
    /\bimport\(\s*'([^']+)'\s*\)/g,
    /\brequire\(\s*'([^']+)'\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1] as string;
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) found.add(specifier);
    }
  }
  return [...found];
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

describe('the runtime imports of lib/ and bin/', () => {
  const files = [...sourceFiles('lib'), ...sourceFiles('bin')];

  it('finds the sources and their imports', () => {
    expect(files).toContain('lib/webhooks/index.ts');
    expect(files).toContain('bin/forgebridge.js');
    expect(
      bareSpecifiers("import type { A } from 'a';\nexport { b } from '@s/b/sub';\nawait import('c');"),
    ).toEqual(['a', '@s/b/sub', 'c']);
  });

  it('are Node built-ins or `dependencies` entries (a type import may come from its @types package)', () => {
    const missing: string[] = [];
    for (const file of files) {
      for (const specifier of bareSpecifiers(readFileSync(join(ROOT, file), 'utf8'))) {
        if (isBuiltin(specifier)) continue;
        const name = packageName(specifier);
        if (REPOSITORY_ONLY[file] === name) continue;
        const typesName = `@types/${name.replace(/^@([^/]+)\//, '$1__')}`;
        if (name in manifest.dependencies || typesName in manifest.dependencies) continue;
        missing.push(`${file}: ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('leave the repository-only import to a dev dependency behind the sources check', () => {
    for (const [file, name] of Object.entries(REPOSITORY_ONLY)) {
      expect(manifest.devDependencies).toHaveProperty(name);
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text).toMatch(/existsSync\(source\)/);
      expect(text).toContain(`import('${name}/`);
    }
  });
});

describe('the package manifest', () => {
  it('exports each library from its compiled index, with its declarations beside it', () => {
    for (const name of ['webhooks', 'oauth2', 'aws']) {
      expect(manifest.exports[`./${name}`]).toEqual({
        types: `./dist/${name}/index.d.ts`,
        default: `./dist/${name}/index.js`,
      });
      expect(sourceFiles('lib')).toContain(`lib/${name}/index.ts`);
    }
    expect(manifest.files).toEqual(['bin/', 'dist/']);
  });
});
